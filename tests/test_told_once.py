"""Every cause told once on every page: a submission with each kind of cause that
several failed checks share -- an unimplemented function, a missing parameter of the module, an
observation, a localising hint, a catalogued misconception, a hand computation's carried slip --
is read on every page a student or an instructor reads: the terminal of `attnkit check`, the
Markdown and HTML feedback, Gradescope's results.json, nbgrader's feedback cells and the handout's
check.py. Each cause's sentence is there once; each check it explains is named under it, with
what is its own: not the unimplemented function's message or an observation once per check, nor
every hint once per check in nbgrader's cells.
"""

from __future__ import annotations

import io
import re
import shutil
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest
from markdown_it import MarkdownIt
from rich.console import Console

from autograder.checks import EXERCISES, check_ids
from autograder.config import DEFAULT_COURSE, KIT_ROOT, load_course
from autograder.grading.course_session import GradingSession
from autograder.judge.causes import Failure, group_causes
from autograder.handout.write import write_handout
from autograder.nbgrader.cells import notebook_reports
from autograder.nbgrader.course import tasks
from autograder.reports.feedback import feedback_markdown
from autograder.reports.feedback_html import feedback_html
from autograder.reports.gradescope import to_gradescope
from autograder.reports.maths import readable
from autograder.reports.table import print_report

SOLUTIONS = KIT_ROOT / "solutions"
CORPUS = KIT_ROOT / "tests" / "corpus"


def _edited(stem: str, *edits: tuple[str, str]) -> str:
    text = (SOLUTIONS / f"{stem}.py").read_text(encoding="utf-8")
    for old, new in edits:
        assert old in text, old
        text = text.replace(old, new)
    return text


def _unimplemented(stem: str, function: str) -> str:
    """The solution with `function`'s solution region replaced by a stub's raise."""
    text = (SOLUTIONS / f"{stem}.py").read_text(encoding="utf-8")
    head, rest = text.split(f"def {function}(", 1)
    begin = rest.index("### BEGIN SOLUTION")
    end = rest.index("### END SOLUTION")
    return head + f"def {function}(" + rest[:begin] + "raise NotImplementedError('todo')\n    " + rest[end:]


def _hand_slip_and_scale() -> str:
    import math

    import numpy as np

    from reference.attention import softmax
    from reference.hand_computation import X_CSM

    slip = (CORPUS / "hand_computation" / "buggy" / "hand_slip_carried.py").read_text(encoding="utf-8")
    part_a = [line for line in slip.splitlines() if not line.startswith("CSM_")]
    X = np.asarray(X_CSM)
    weights = np.round(softmax(X @ X.T / math.sqrt(3)), 4)
    return "\n".join(part_a + [f"CSM_SCORES = {np.round(X @ X.T, 4).tolist()}", f"CSM_WEIGHTS = {weights.tolist()}",
                               f"CSM_OUTPUT = {np.round(weights @ X, 4).tolist()}"]) + "\n"


def _submission(folder: Path) -> None:
    files = {
        # a localising hint: the weights are right, the output is not (on every check of the function)
        "attention.py": _edited("attention", ("    output = weights @ V  #", "    output = weights @ V + 1.0  #")),
        # an unimplemented function: the same message on each of its checks
        "causal_mask.py": _unimplemented("causal_mask", "causal_attention"),
        # an observation (all the weights add up to 1 together) and a missing parameter of the module
        "multihead.py": _edited("multihead", ("    weights = weights / weights.sum(axis=-1, keepdims=True)",
                                              "    weights = weights / weights.sum()"),
                                *[(f"self.{w} = nn.Linear(d_model, d_model)", f"self.{w} = nn.Linear(d_model, d_model, "
                                   "bias=False)") for w in ("W_q", "W_k", "W_v", "W_o")]),
        # a catalogued misconception: the 'scaled' statistics never divided by sqrt(d)
        "scaling.py": (CORPUS / "scaling" / "buggy" / "no_scaling.py").read_text(encoding="utf-8"),
        # a hand computation's slip in Part A (one product wrong, carried through the steps after it),
        # and Part B computed exactly with sqrt(3) for sqrt(4)
        "hand_computation.py": _hand_slip_and_scale(),
    }
    for name, text in files.items():
        (folder / name).write_text(text, encoding="utf-8")


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    folder = tmp_path_factory.mktemp("causes") / "sam"
    folder.mkdir()
    _submission(folder)
    course = load_course(DEFAULT_COURSE, known_checks=check_ids())
    with GradingSession(course).start() as session:
        result = session.grade(folder, student="sam")
    return folder, result, course


def _said(result, course) -> dict[str, str]:
    """The sentence of each kind of shared cause, as the grader made it for this submission."""
    check = {c.check_id: c for c in result.for_student(course.show_hidden).checks}
    no_scaling = next(m for m in EXERCISES["scaling"].misconceptions if m.id == "no_scaling")
    found = {
        "unimplemented": check["causal_mask.causal_attention.output"].message,
        "missing parameter": check["multihead.MultiHeadAttention.structure"].message,
        "observation": check["multihead.multi_head_attention.weights"].hint,
        "localising hint": check["attention.scaled_dot_product_attention.single"].hint,
        "misconception": no_scaling.hint.split(". ")[0],
        "hand slip": check["hand_computation.part_a.scores"].hint.split(". ")[0],
        "hand scale": check["hand_computation.part_b.weights"].hint.split(". ")[0],
    }
    # the submission has each kind it means to have, shared by several checks
    assert "not implemented yet" in found["unimplemented"]
    assert "has no parameter W_q.bias" in found["missing parameter"]
    assert "together add up to 1, instead of each row separately" in found["observation"]
    assert "right but your output is not" in found["localising hint"]
    assert "`" not in found["misconception"] + found["hand slip"]
    for kind, sentence in found.items():
        sharing = [c for c in check.values() if sentence in c.message + c.hint]
        assert len(sharing) >= 2, (kind, sentence, [c.check_id for c in check.values() if not c.passed])
    # the seed and n_trials checks judge the std of one run too: the same mistake, not a cause of their own
    for name in ("std", "seed", "n_trials"):
        scaling = check[f"scaling.scaling_experiment.{name}"]
        assert "no_scaling" in scaling.misconceptions, name
        assert scaling.message.count("after dividing by sqrt(d) it should be close to 1") == 1, scaling.message
    assert "hand_slip_carried" in check["hand_computation.part_a.output"].misconceptions
    assert "sqrt(3)" in found["hand scale"] and "scaled_by_wrong_size" in check["hand_computation.part_b.output"].misconceptions
    return found


def _plain(text: str) -> str:
    """What a reader sees, to count sentences in: the kit's maths as the pages write it, one space."""
    return " ".join(readable(text).split())


class _Text(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []

    def handle_data(self, data):
        self.parts.append(data)


def _html_text(html: str) -> str:
    parser = _Text()
    parser.feed(html)
    return " ".join(parser.parts)


def _markdown_text(markdown: str) -> str:
    return _html_text(MarkdownIt("commonmark").enable("table").render(markdown))


def _pages(graded) -> dict[str, str]:
    folder, result, course = graded
    out = io.StringIO()
    print_report(result, Console(file=out, width=400, color_system=None), show_hidden=course.show_hidden)
    gradescope = to_gradescope(result, show_hidden=course.show_hidden)
    cells = []
    for ex in result.exercises:
        by_id = {c.check_id: c for c in ex.checks}
        cells += notebook_reports([[by_id[i] for i in ids] for ids in tasks(course, ex.stem).values()], course)
    return {"terminal": out.getvalue(), "markdown": _markdown_text(feedback_markdown(result, course)),
            "html": _html_text(feedback_html(result, course)),
            "gradescope": " ".join(_markdown_text(t["output"]) for t in gradescope["tests"]),
            "nbgrader": "\n".join(cells)}


def test_each_cause_is_told_once_on_every_page_of_the_grader(graded):
    said = _said(graded[1], graded[2])
    for page, text in _pages(graded).items():
        for kind, sentence in said.items():
            assert _plain(text).count(_plain(sentence)) == 1, (page, kind, sentence)


def test_the_checks_a_cause_explains_are_named_under_it_with_their_own_evidence(graded):
    _, result, course = graded
    markdown = feedback_markdown(result, course)
    ex = result.exercise("multihead").for_student(course.show_hidden)
    weights = [c for c in ex.checks if "instead of each row separately" in c.hint]
    assert len(weights) >= 2
    for c in weights:           # named, with the entry that is its own
        assert c.check_id in markdown
        assert _plain(c.message.split(";")[0].split(": each")[0]) in _plain(markdown), c.message
    assert re.search(r"1 cause → \d+ checks", markdown)


def test_check_py_tells_each_cause_once(graded, tmp_path):
    """The handout's check.py groups with the same function: on the same files, and on a softmax on
    the wrong axis (a mistake check.py names), each sentence is there once at most."""
    folder, result, course = graded
    said = _said(result, course)
    out = tmp_path / "handout"
    write_handout(out, course)
    for name in ("attention.py", "causal_mask.py", "multihead.py", "scaling.py", "hand_computation.py"):
        shutil.copy(folder / name, out / name)
    done = subprocess.run([sys.executable, "check.py"], cwd=out, capture_output=True, text=True, timeout=600)
    text = _plain(done.stdout)
    assert text.count(_plain(said["unimplemented"])) == 1, done.stdout
    # the grader's observations are not check.py's, and its messages end alike: never twice
    for sentence in [*said.values(), "each query's weights over the keys (the last axis) must add up to 1"]:
        assert text.count(_plain(sentence)) <= 1, (sentence, done.stdout)
    # the scaling checks the grader explains by the unscaled statistics are one group here too
    assert "1 mistake -> 5 checks" in text and text.count(_plain(said["misconception"])) == 1, done.stdout
    assert "1 cause -> 2 checks: after dividing" not in text, done.stdout
    shutil.copy(CORPUS / "attention" / "buggy" / "softmax_wrong_axis.py", out / "attention.py")
    done = subprocess.run([sys.executable, "check.py", "attention"], cwd=out, capture_output=True, text=True,
                          timeout=600)
    hint = next(m.hint for m in EXERCISES["attention"].misconceptions if m.id == "softmax_wrong_axis")
    assert _plain(done.stdout).count(_plain(hint.split(". ")[0])) == 1, done.stdout
    assert re.search(r"1 mistake -> \d+ checks", done.stdout), done.stdout


def test_the_grouping_keeps_what_is_each_checks_own():
    """The grouping alone, on plain data: the same misconceptions, hint or message make one cause;
    a shared ending of the messages is said once; a hidden check's stand-in groups nothing."""
    note = "A hidden check: its title is shown, its message is not."
    causes = group_causes([
        Failure("a.f.one", "failed", "2 entries differ: each row must add up to 1", "Seen.", ("m",)),
        Failure("a.f.two", "failed", "5 entries differ: each row must add up to 1", "Seen again.", ("m",)),
        Failure("a.g.one", "not_implemented", "not implemented yet: g"),
        Failure("a.g.two", "not_implemented", "not implemented yet: g"),
        Failure("a.h.one", "failed", "row 1 differs", "Your weights are right."),
        Failure("a.h.two", "failed", "row 3 differs", "Your weights are right."),
        Failure("a.k.one", "failed", note, concealed=True),
        Failure("a.k.two", "failed", note, concealed=True),
        Failure("a.e.one", "error", "ValueError: x", "Read the line."),
        Failure("a.e.two", "error", "IndexError: y", "Read the line."),
    ], advice=("Read the line.",))
    assert [[f.id for f in c.checks] for c in causes] == [
        ["a.f.one", "a.f.two"], ["a.g.one", "a.g.two"], ["a.h.one", "a.h.two"], ["a.k.one"], ["a.k.two"],
        ["a.e.one", "a.e.two"]]
    mistake, stub, hint, _, _, advice = causes
    assert mistake.headline() == "1 mistake -> 2 checks" and mistake.hint == "Seen."
    assert mistake.message == "each row must add up to 1"
    assert [text for _, text in mistake.evidence] == ["2 entries differ", "5 entries differ"]
    assert stub.message == "not implemented yet: g" and [text for _, text in stub.evidence] == ["", ""]
    assert hint.headline() == "1 cause -> 2 checks" and hint.message == ""
    assert advice.headline() == "1 hint -> 2 checks" and advice.own_message(advice.first) == "ValueError: x"


def test_a_folder_nested_deeper_is_said_once_per_page(tmp_path):
    """A zip that unpacks to sam/hw1/attention.py...: every page says where the files were found
    once, not once per exercise."""
    folder = tmp_path / "sam"
    (folder / "hw1").mkdir(parents=True)
    (folder / "hw1" / "attention.py").write_text(
        _edited("attention", ("    output = weights @ V  #", "    output = weights @ V + 1.0  #")), encoding="utf-8")
    (folder / "hw1" / "causal_mask.py").write_text(_unimplemented("causal_mask", "causal_attention"),
                                                    encoding="utf-8")
    course = load_course(DEFAULT_COURSE, known_checks=check_ids())
    with GradingSession(course).start() as session:
        result = session.grade(folder, student="sam")
    assert sum("found in the folder hw1/" in ex.note for ex in result.exercises) >= 2   # intake's, per exercise
    console = Console(file=io.StringIO(), width=200, color_system=None)
    print_report(result, console)
    pages = {"markdown": feedback_markdown(result, course), "html": _html_text(feedback_html(result, course)),
             "gradescope": str(to_gradescope(result)), "terminal": console.file.getvalue()}
    for page, text in pages.items():
        assert text.count("your files were found in the folder") == 1, (page, text)


def test_an_own_helper_module_is_said_why_in_the_grader_and_in_check_py(tmp_path):
    """attention.py does `from helpers import scale`, helpers.py beside it: the grader runs the
    exercise files only, so the import fails there; the grader and check.py both fail it and say
    why, and what to do."""
    source = (SOLUTIONS / "attention.py").read_text(encoding="utf-8")
    source = source.replace("import numpy as np\n", "import numpy as np\nfrom helpers import scale\n", 1)
    folder = tmp_path / "sam"
    folder.mkdir()
    (folder / "attention.py").write_text(source, encoding="utf-8")
    (folder / "helpers.py").write_text("def scale(x, d):\n    return x / d ** 0.5\n", encoding="utf-8")
    why = "helpers.py is a file of yours, not an exercise: only the exercise files are graded"
    fix = "Put the code you use from it into the exercise file."
    course = load_course(DEFAULT_COURSE, known_checks=check_ids())
    with GradingSession(course).start() as session:
        result = session.grade(folder, student="sam")
    message = result.exercise("attention").checks[0].message
    assert "No module named 'helpers'" in message and why in message and fix in message, message
    out = tmp_path / "handout"
    write_handout(out, course)
    for name in ("attention.py", "helpers.py"):
        shutil.copy(folder / name, out / name)
    done = subprocess.run([sys.executable, "check.py", "attention"], cwd=out, capture_output=True, text=True,
                          timeout=600)
    text = _plain(done.stdout)
    assert text.count(_plain(why)) == 1 and _plain(fix) in text, done.stdout
