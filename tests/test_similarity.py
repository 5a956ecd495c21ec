"""Code similarity across a class: a copy is found through renamed locals, dropped
comments and reordered statements; independent solutions are not paired; the stubs' code is not
evidence; a class run lists the pairs in summary.json and report.html without changing a grade;
student text in the report is text in the DOM headless Chromium builds."""

from __future__ import annotations

import json
import subprocess
import sys

import nbformat
import pytest

pytest.importorskip("copydetect")     # the `integrity` extra (pip install 'attnkit[integrity]')

from autograder.grading import local_grading  # noqa: E402
from autograder.grading.class_run import ClassRun
from autograder.grading.local_grading import LocalGrading  # noqa: E402
from autograder.config import KIT_ROOT  # noqa: E402
from autograder.checks.contract import RETURNS  # noqa: E402
from autograder.integrity import similarity  # noqa: E402
from autograder.integrity.class_code import kit_stubs  # noqa: E402
from autograder.integrity.fingerprint import normalise  # noqa: E402
from autograder.integrity.similarity import Submitted, similar_pairs  # noqa: E402
from autograder.intake.load import read_source  # noqa: E402
from autograder.reports.finish import finish_run  # noqa: E402
from autograder.results import CheckResult, ExerciseResult, SubmissionResult  # noqa: E402
from tests.copy_transforms import (disguise, numpy_to_torch, operators_as_calls, pad_with_dead_branches,  # noqa: E402
                                   pad_with_no_ops, pad_with_unused_function, star_import)

CORRECT = KIT_ROOT / "tests" / "corpus" / "attention" / "correct"
# Solutions of `attention` written apart, in different styles (no two share a template:
# benchmarks/bench_similarity.py prints the corpus's families).
INDEPENDENT = ("loops.py", "einsum.py", "nested_lists.py", "torch_inside.py", "class_helpers.py", "float32.py",
               "additive_float_mask.py", "ho_batch_loop.py", "ho_class_lambda.py", "ho2_logsumexp_lists.py",
               "ho12_mT_logaddexp.py", "ho3_np_transpose_axes.py", "ho_torch_sdpa_lists.py", "neg_inf_tensordot_style.py")


@pytest.fixture(scope="module")
def stubs() -> dict[str, str]:
    return kit_stubs(RETURNS)


def _code(name: str) -> str:
    source = read_source(CORRECT / name, "attention")
    assert isinstance(source, str), source
    return str(source)


def _class(sources: dict[str, str]) -> list[Submitted]:
    return [Submitted(student, "attention", "attention.py", source) for student, source in sources.items()]


def _paired(pairs) -> set[frozenset]:
    return {frozenset(p.students) for p in pairs}


@pytest.mark.parametrize("reorder", [False, True], ids=["renamed", "renamed-and-reordered"])
def test_a_copy_with_renamed_locals_is_found(stubs, reorder):
    sources = {name: _code(name) for name in INDEPENDENT}
    original = "loops.py"
    copy = disguise(sources[original], seed=3, reorder=reorder)
    assert copy != sources[original] and "biggest" in sources[original] and "biggest" not in copy   # renamed
    assert '"""' in sources[original] and '"""' not in copy                                        # docstrings gone
    pairs, found = similar_pairs(_class(sources | {"copier": copy}), {"attention": stubs["attention"]})
    assert _paired(pairs) == {frozenset({original, "copier"})}, [(p.students, p.score) for p in pairs]
    match = pairs[0].matches[0]
    assert match.exercise == "attention" and match.score >= similarity.SIMILAR
    for side in match.sides:       # the fragments are lines of that side's file, shown in its excerpt
        source = sources[original] if side.student == original else copy
        lines = source.splitlines()
        assert side.fragments and all(1 <= a <= b <= len(lines) for a, b in side.fragments)
        shown = [row for row in side.excerpt if row.number is not None]
        assert all(row.text == lines[row.number - 1] for row in shown)
        assert any("def scaled_dot_product_attention" in row.text for row in shown if row.shared)


def test_copies_of_one_file_are_paired_with_each_other_and_with_a_disguised_copy(stubs):
    """Three hand in one file unchanged, a fourth a disguised copy of it with code of his own that
    it calls: every two of the four are a pair (copies are compared once, as one fingerprint several
    hold, and still listed pair by pair), the unchanged copies alike in everything, the fourth's own
    code not lowering his pairs' score (the smaller side's share); the independent solutions stay
    unpaired, and a second exercise two of them copied adds to their pair."""
    sources = {name: _code(name) for name in INDEPENDENT}
    copied = sources.pop("loops.py")
    four = {"ada": copied, "ben": copied, "cy": copied, "dan": disguise(copied, seed=3) + _OWN_HELPER}
    items = _class(sources | four) + [Submitted(s, "multihead", "multihead.py", code)
                                      for s, code in (("ada", _MULTIHEAD), ("cy", _MULTIHEAD))]
    pairs, found = similar_pairs(items, {"attention": stubs["attention"], "multihead": ""})
    assert found == 6 and _paired(pairs) == {frozenset(p) for p in
                                             [("ada", "ben"), ("ada", "cy"), ("ben", "cy"),
                                              ("ada", "dan"), ("ben", "dan"), ("cy", "dan")]}
    assert pairs[0].students == ("ada", "cy") and {m.exercise for m in pairs[0].matches} == {"attention", "multihead"}
    for pair in pairs:
        attention = next(m for m in pair.matches if m.exercise == "attention")
        sides = {side.student: side.similarity for side in attention.sides}
        assert attention.score > 0.95 and all(side.fragments for side in attention.sides)
        assert all(share > 0.999 for student, share in sides.items() if student != "dan"), (pair.students, sides)
        assert sides.get("dan", 0) < 0.999, (pair.students, sides)     # his own code is in no one else's
    ranked = [(-p.score, -len(p.matches), p.students) for p in pairs]
    assert ranked == sorted(ranked)        # most alike first, then alike in more exercises, then by name


def test_a_class_of_copies_is_ranked_without_holding_every_pair(stubs):
    """Thirteen files, each handed in by 200 students: 13 x 19,900 pairs (every two copies of
    one file, the files themselves unpaired). The first 100 are listed, the most alike group's
    first by name, and the pairs are counted without being held: the similarity's memory grows
    with the groups of copies, not with the pairs."""
    import tracemalloc

    # torch_inside.py left out: most of its fingerprints are idioms other files here write too,
    # held by 400 or more of this class (over a tenth: not used to find pairs), too few left.
    sources = {name: _code(name) for name in INDEPENDENT if name != "torch_inside.py"}
    items = [Submitted(f"{name}-{k:03d}", "attention", "attention.py", source)
             for name, source in sources.items() for k in range(200)]
    tracemalloc.start()
    try:
        pairs, found = similar_pairs(items, {"attention": stubs["attention"]}, limit=100)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert found == len(sources) * (200 * 199 // 2)
    first = pairs[0].students[0].rsplit("-", 1)[0]
    assert [p.students for p in pairs] == [(f"{first}-000", f"{first}-{k:03d}") for k in range(1, 101)]
    assert all(p.matches[0].score == pairs[0].score for p in pairs)
    assert peak < 8_000_000, f"traced peak {peak / 1e6:.1f} MB"



def test_the_pairs_listed_are_the_first_of_all_the_pairs_whatever_the_limit(stubs):
    """The ranking keeps only the first `limit` pairs as it goes: they are the first of the whole
    ranking, for any limit (two groups of copies, a disguised copy, two exercises)."""
    loops, einsum = _code("loops.py"), _code("einsum.py")
    items = ([Submitted(f"l{k}", "attention", "attention.py", loops) for k in range(4)]
             + [Submitted(f"e{k}", "attention", "attention.py", einsum) for k in range(3)]
             + [Submitted("dan", "attention", "attention.py", disguise(loops, seed=3))]
             + [Submitted(s, "multihead", "multihead.py", _MULTIHEAD) for s in ("e1", "l2")])
    stubs_used = {"attention": stubs["attention"], "multihead": ""}
    every, found = similar_pairs(items, stubs_used)
    assert found == len(every) == 6 + 4 + 3 + 1     # the copies of loops, dan with each, of einsum; multihead
    for limit in (0, 1, 2, 7, 13, 14, 50):
        pairs, counted = similar_pairs(items, stubs_used, limit=limit)
        assert counted == found and [p.students for p in pairs] == [p.students for p in every[:limit]]


_OWN_HELPER = """


def spread_of_rows(weights):
    total = 0.0
    for row in weights:
        total += float(max(row)) - float(min(row))
    return total / len(weights)


_attention_itself = scaled_dot_product_attention


def scaled_dot_product_attention(Q, K, V, mask=None):
    output, weights = _attention_itself(Q, K, V, mask)
    if spread_of_rows(weights.reshape(-1, weights.shape[-1])) < 0:
        raise ValueError("weights out of order")
    return output, weights
"""

_MULTIHEAD = """
import numpy as np


def split_heads(x, num_heads):
    batch, seq, d_model = x.shape
    depth = d_model // num_heads
    parts = x.reshape(batch, seq, num_heads, depth)
    swapped = np.transpose(parts, (0, 2, 1, 3))
    return np.ascontiguousarray(swapped)


def merge_heads(x):
    batch, heads, seq, depth = x.shape
    back = np.transpose(x, (0, 2, 1, 3))
    return back.reshape(batch, seq, heads * depth)
"""


def test_independent_solutions_are_not_paired(stubs):
    sources = {name: _code(name) for name in INDEPENDENT}
    assert all(normalise(s) is not None for s in sources.values())
    pairs, found = similar_pairs(_class(sources), {"attention": stubs["attention"]})
    assert found == 0 and pairs == []
    # ... while two forms of one solution (the corpus has einsum.py and its notebook) are
    notebook = {"einsum.ipynb": _code("notebook_scratch_errors.ipynb")}
    pairs, _ = similar_pairs(_class(sources | notebook), {"attention": stubs["attention"]})
    assert _paired(pairs) == {frozenset({"einsum.py", "einsum.ipynb"})}


def test_the_stubs_code_is_not_evidence(stubs):
    """ada and ben kept the stub's given code (its demo blocks, hundreds of tokens) under functions
    each wrote their own way; the others handed in their functions alone. The given code ada and
    ben share is rare in this class, so counted it would pair them: left out, it does not."""
    stub = stubs["attention"]
    sources = {name: _code(name) for name in INDEPENDENT}
    for name in ("einsum.py", "nested_lists.py"):
        sources[name] += "\n\n" + _demo_blocks(stub)
    assert similar_pairs(_class(sources), {"attention": stub}) == ([], 0)
    # The demo blocks never run where the grader imports the file: not read even without the stub.
    assert similar_pairs(_class(sources), {"attention": ""}) == ([], 0)
    live = {name: text.replace('if __name__ == "__main__":', "if True:") for name, text in sources.items()}
    with pytest.MonkeyPatch.context() as patch:        # counted, the given code would make them alike
        patch.setattr(similarity, "SIMILAR", 0.5)
        kept = frozenset({"einsum.py", "nested_lists.py"})
        assert kept in _paired(similar_pairs(_class(live), {"attention": ""})[0])
        assert kept not in _paired(similar_pairs(_class(live), {"attention": stub})[0])
    untouched = similar_pairs(_class({"ada": stub, "ben": stub, "cy": stub}), {"attention": stub})
    assert untouched == ([], 0)


def _demo_blocks(stub: str) -> str:
    """The stub's `if __name__ == "__main__":` blocks (given code the students keep)."""
    lines, blocks, inside = stub.splitlines(), [], False
    for line in lines:
        if line.startswith("if __name__"):
            inside = True
        elif line and not line[0].isspace():
            inside = False
        if inside:
            blocks.append(line)
    assert len(blocks) > 20
    return "\n".join(blocks) + "\n"


def test_names_layout_and_comments_do_not_count_but_library_calls_do():
    one = "import numpy as np\ndef f(x, axis=-1):\n    y = np.exp(x - x.max(axis=axis, keepdims=True))\n    return y / y.sum()\n"
    other = ('import numpy as np\n\n\ndef softmax(scores, axis = -1):   # mine\n    """Doc."""\n'
             "    e = np.exp((scores - scores.max(axis=axis, keepdims=True)))\n    return (e / e.sum())\n")
    assert normalise(one).text == normalise(other).text
    assert normalise(one).text != normalise(one.replace("np.exp", "np.log")).text
    assert normalise(one).text != normalise(one.replace("keepdims=True", "keepdims=False")).text
    assert normalise("def f(:\n") is None


def test_the_hand_computation_is_not_compared(stubs):
    assert "hand_computation" not in similarity.compared_exercises(stubs, RETURNS)
    assert {"attention", "causal_mask", "scaling", "multihead"} <= set(similarity.compared_exercises(stubs, RETURNS))


# ====================================================================== a class run

def _notebook(source: str) -> str:
    cells = [nbformat.v4.new_markdown_cell("# my attention")]
    cells += [nbformat.v4.new_code_cell(part) for part in source.split("\n\n\n") if part.strip()]
    return nbformat.writes(nbformat.v4.new_notebook(cells=cells))


def _copied_class(class_dir, others: int) -> dict[str, tuple[str, str]]:
    """ada hands in a .py; ben the same code disguised, as a notebook; `others` students their own:
    written into `class_dir`, and {student: (file name, text)}."""
    files = {"ada": ("attention.py", _code("loops.py")),
             "ben": ("attention.ipynb", _notebook(disguise(_code("loops.py"), seed=5))),
             **{f"s{i}": ("attention.py", _code(name)) for i, name in enumerate(INDEPENDENT[1:1 + others])}}
    for student, (filename, text) in files.items():
        (class_dir / student).mkdir(parents=True)
        (class_dir / student / filename).write_text(text, encoding="utf-8")
    return files


def test_a_class_run_lists_the_pair_and_changes_no_grade(tmp_path, course, monkeypatch):
    """ada hands in a .py; ben the same code disguised, as a notebook; the others their own.
    The run lists ada and ben in summary.json and report.html; every grade is the grader's."""
    class_dir = tmp_path / "class"
    files = _copied_class(class_dir, 5)
    given: dict[str, SubmissionResult] = {}

    def grade_student(student, course, box, **_):      # a stand-in: the scores are arbitrary, and must stay
        filename = files[student.name][0]
        checks = (CheckResult("attention.x", "attention", "x", "failed", 0.0, 2.0),
                  CheckResult("attention.y", "attention", "y", "passed", 1.5, 1.5))
        given[student.name] = SubmissionResult(student.name, (ExerciseResult("attention", "Attention", checks,
                                                                             graded_file=filename),), course.seed)
        return given[student.name]

    monkeypatch.setattr(local_grading, "grade", grade_student)
    out = tmp_path / "out"
    ClassRun(class_dir, out, course).run(LocalGrading(course, jobs=1, isolation=False, preflight=False))

    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert [p["students"] for p in summary["similarity"]] == [["ada", "ben"]]
    pair = summary["similarity"][0]["exercises"][0]
    assert pair["exercise"] == "attention" and [s["file"] for s in pair["sides"]] == ["attention.py", "attention.ipynb"]
    compared = summary["similarity_compared"]
    assert compared["submissions"] == len(files) and compared["exercises"][0] == "attention" and not compared["unread"]
    for student, result in given.items():          # the signal changes no grade
        stored = json.loads((out / "results" / f"{student}.json").read_text(encoding="utf-8"))
        assert stored["extra_data"]["result"] == json.loads(json.dumps(result.to_dict()))
    assert {r["student"]: r["score"] for r in summary["rows"]} == {s: 1.5 for s in files}
    page = (out / "report.html").read_text(encoding="utf-8")
    assert 'id="similarity"' in page and 'href="#similar-1"' in page


def test_the_better_of_two_copies_is_the_code_compared(tmp_path, course, monkeypatch):
    """ben's download holds two files for attention (a browser's `attention (1).py` beside his
    own): intake grades both and the better counts (intake/candidates.py). The code compared is
    the file his grade came from, read again among the candidates, not a student left unread."""
    class_dir = tmp_path / "class"
    for student in ("ada", "ben", "cyd"):
        (class_dir / student).mkdir(parents=True)
    (class_dir / "ada" / "attention.py").write_text(_code("loops.py"), encoding="utf-8")
    (class_dir / "ben" / "attention.py").write_text(_code(INDEPENDENT[2]), encoding="utf-8")
    (class_dir / "ben" / "attention (1).py").write_text(disguise(_code("loops.py"), seed=4), encoding="utf-8")
    (class_dir / "cyd" / "attention.py").write_text(_code(INDEPENDENT[3]), encoding="utf-8")
    graded = {"ada": "attention.py", "ben": "attention (1).py", "cyd": "attention.py"}

    def grade_student(student, course, box, **_):
        checks = (CheckResult("attention.x", "attention", "x", "passed", 1.0, 1.0),)
        return SubmissionResult(student.name, (ExerciseResult("attention", "Attention", checks,
                                                              graded_file=graded[student.name]),), course.seed)

    monkeypatch.setattr(local_grading, "grade", grade_student)
    out = tmp_path / "out"
    ClassRun(class_dir, out, course).run(LocalGrading(course, jobs=1, isolation=False, preflight=False))
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert summary["similarity_compared"]["unread"] == [] and summary["similarity_compared"]["submissions"] == 3
    assert [p["students"] for p in summary["similarity"]] == [["ada", "ben"]]
    assert [s["file"] for s in summary["similarity"][0]["exercises"][0]["sides"]] == ["attention.py", "attention (1).py"]


def test_the_run_fingerprints_each_student_as_it_records_them_and_the_end_reads_only_the_rest(
        tmp_path, course, monkeypatch):
    """The class's code is fingerprinted while the lanes grade, not all at the end on one core.
    The section is the one reading every file at the end gives; on a resumed run the
    end reads only the students whose results were reused."""
    from autograder.integrity import class_code
    from autograder.intake.students import Student

    class_dir = tmp_path / "class"
    files = {"ada": _code("loops.py"), "ben": disguise(_code("loops.py"), seed=3),
             **{f"s{i}": _code(name) for i, name in enumerate(INDEPENDENT[1:5])}}

    def hand_in(student: str, text: str) -> None:
        (class_dir / student).mkdir(parents=True)
        (class_dir / student / "attention.py").write_text(text, encoding="utf-8")

    for student, text in files.items():
        hand_in(student, text)

    def grade_student(student, course, box, **_):
        checks = (CheckResult("attention.x", "attention", "x", "passed", 1.0, 1.0),)
        return SubmissionResult(student.name, (ExerciseResult("attention", "Attention", checks,
                                                              graded_file="attention.py"),), course.seed)

    read_at_end: list[list[str]] = []
    real = class_code.graded_code

    def graded_code(students, result_of, exercises, reading=None, *more):
        students = list(students)
        if len(students) != 1 or reading is None or reading.unread:
            read_at_end.append(sorted(s.name for s in students))
        return real(students, result_of, exercises, reading, *more)

    monkeypatch.setattr(local_grading, "grade", grade_student)
    monkeypatch.setattr(class_code, "graded_code", graded_code)
    out = tmp_path / "out"

    def run_and_read_all() -> tuple[dict, dict]:
        read_at_end.clear()
        ClassRun(class_dir, out, course).run(LocalGrading(course, jobs=2, isolation=False, preflight=False))
        summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
        students = [Student(p.name, p) for p in sorted(class_dir.iterdir())]

        def stored(name: str) -> SubmissionResult:
            text = (out / "results" / f"{name}.json").read_text(encoding="utf-8")
            return SubmissionResult.from_dict(json.loads(text)["extra_data"]["result"])

        monkeypatch.setattr(class_code, "graded_code", real)
        everything = class_code.compare_class(students, stored, tuple(course.exercises))
        monkeypatch.setattr(class_code, "graded_code", graded_code)
        return summary, everything

    summary, everything = run_and_read_all()
    assert [p["students"] for p in summary["similarity"]] == [["ada", "ben"]]
    assert summary["similarity"] == everything["pairs"] and summary["similarity_compared"] == everything["compared"]
    assert read_at_end == [[]]                     # every student was read as it was recorded

    hand_in("cy", disguise(_code("loops.py"), seed=8))       # a late submission; the rest reused
    summary, everything = run_and_read_all()
    assert {frozenset(p["students"]) for p in summary["similarity"]} == {
        frozenset(pair) for pair in (("ada", "ben"), ("ada", "cy"), ("ben", "cy"))}
    assert summary["similarity"] == everything["pairs"] and summary["similarity_compared"] == everything["compared"]
    assert read_at_end == [sorted(files)]          # only the reused results are read at the end


def test_grading_reads_and_fingerprints_each_student_once(tmp_path, course, monkeypatch):
    """In a class run, the child that reads a submission for grading also fingerprints its graded
    code, charged to the student's account: the similarity pass reads no student's files again,
    and lists the pairs that reading every file again at the end lists."""
    from autograder.integrity import class_code
    from autograder.intake.students import Student

    class_dir = tmp_path / "class"
    files = _copied_class(class_dir, 3)
    read_again: list[str] = []
    real = class_code._read

    def reread(student, wanted, stubs, account, details=False):
        if not details:          # a listed pair's excerpt is read again, as before
            read_again.append(student.name)
        return real(student, wanted, stubs, account, details)

    monkeypatch.setattr(class_code, "_read", reread)
    out = tmp_path / "out"
    grading = LocalGrading(course, jobs=1, isolation=False, preflight=False)
    ClassRun(class_dir, out, course).run(grading)

    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert [p["students"] for p in summary["similarity"]] == [["ada", "ben"]]
    assert summary["similarity_compared"]["submissions"] == len(files)
    assert read_again == []                  # grading's reading made every fingerprint compared
    assert all(grading.accounts.of(s).cpu_seconds > 0 for s in files)      # charged to each student

    def stored(name: str) -> SubmissionResult:
        text = (out / "results" / f"{name}.json").read_text(encoding="utf-8")
        return SubmissionResult.from_dict(json.loads(text)["extra_data"]["result"])

    students = [Student(p.name, p) for p in sorted(class_dir.iterdir())]
    everything = class_code.compare_class(students, stored, tuple(course.exercises))
    assert sorted(read_again) == sorted(files)         # read again, the old way, for the comparison
    assert summary["similarity"] == everything["pairs"] and summary["similarity_compared"] == everything["compared"]


def test_a_listed_pair_is_read_again_for_its_excerpt_and_survives_a_file_gone_since(tmp_path, course):
    """The class's files are not held while it is graded (so the grader's memory stays
    flat): a listed pair's files are read again. One changed since shows as it is now; with one
    gone, the pair is still listed, without shared fragments to show."""
    from autograder.integrity.class_code import ClassCode
    from autograder.intake.students import Student

    students = []
    for name, text in (("ada", _code("loops.py")), ("ben", disguise(_code("loops.py"), seed=3)),
                       ("cy", _code("einsum.py"))):
        (tmp_path / name).mkdir()
        (tmp_path / name / "attention.py").write_text(text, encoding="utf-8")
        students.append(Student(name, tmp_path / name))
    code = ClassCode(("attention",))
    checks = (CheckResult("attention.x", "attention", "x", "passed", 1.0, 1.0),)
    for student in students:
        code.add(student, SubmissionResult(student.name, (ExerciseResult("attention", "Attention", checks,
                                                                         graded_file="attention.py"),), 0))
    assert all(p.compressed is None for items in code.prints.by_exercise().values() for p in items)
    now = "# changed after grading\n" + _code("loops.py")
    (tmp_path / "ada" / "attention.py").write_text(now, encoding="utf-8")
    section = code.compare(students, lambda name: None)
    assert [p["students"] for p in section["pairs"]] == [["ada", "ben"]]
    ada, ben = section["pairs"][0]["exercises"][0]["sides"]
    lines = now.splitlines()
    shown = [row for row in ada["excerpt"] if row["line"] is not None]
    assert shown and all(row["text"] == lines[row["line"] - 1] for row in shown)   # as the file is now
    (tmp_path / "ben" / "attention.py").unlink()
    section = code.compare(students, lambda name: None)
    assert [p["students"] for p in section["pairs"]] == [["ada", "ben"]]
    assert all(side["fragments"] == [] for side in section["pairs"][0]["exercises"][0]["sides"])


def test_a_text_several_handed_in_is_read_once_for_the_excerpts_unless_it_changed_since(tmp_path, monkeypatch):
    """The listed pairs' files are read again in one child per student (all of that student's
    files wanted at once). A text several students handed in is read once, and its copies show
    it as graded; once the student read first has changed theirs, each of the others is read."""
    from autograder.integrity import class_code
    from autograder.integrity.class_code import ClassCode
    from autograder.intake.students import Student

    copied = {"attention": _code("loops.py"),
              "causal_mask": (KIT_ROOT / "solutions" / "causal_mask.py").read_text(encoding="utf-8")}
    students = []
    for name in ("ada", "ben", "cy", "dee"):
        (tmp_path / name).mkdir()
        for stem, text in copied.items():
            (tmp_path / name / f"{stem}.py").write_text(text, encoding="utf-8")
        students.append(Student(name, tmp_path / name))
    code = ClassCode(tuple(copied))
    for student in students:
        exercises = tuple(ExerciseResult(stem, stem, (CheckResult(f"{stem}.x", stem, "x", "passed", 1.0, 1.0),),
                                         graded_file=f"{stem}.py") for stem in copied)
        code.add(student, SubmissionResult(student.name, exercises, 0))
    reads: list[tuple[str, tuple[str, ...]]] = []
    real = class_code._read

    def counted(student, wanted, stubs, account, details=False):
        reads.append((student.name, tuple(sorted(wanted))))
        return real(student, wanted, stubs, account, details)

    monkeypatch.setattr(class_code, "_read", counted)

    def excerpts(section) -> dict[tuple[str, str], list[tuple[int, str]]]:
        return {(side["student"], exercise["exercise"]): [(row["line"], row["text"]) for row in side["excerpt"]
                                                          if row["line"] is not None]
                for pair in section["pairs"] for exercise in pair["exercises"] for side in exercise["sides"]}

    def as_in(text: str, rows: list[tuple[int, str]]) -> bool:
        return bool(rows) and all(text.splitlines()[line - 1] == shown for line, shown in rows)

    section = code.compare(students, lambda name: None)
    assert len(section["pairs"]) == 6
    assert len(reads) == 1 and reads[0][1] == tuple(sorted(copied))      # one child, both files
    first = reads[0][0]
    shown = excerpts(section)
    assert len(shown) == 8 and all(as_in(copied[stem], shown[(s.name, stem)]) for s in students for stem in copied)

    changed = "# changed after grading\n" + copied["attention"]
    (tmp_path / first / "attention.py").write_text(changed, encoding="utf-8")
    reads.clear()
    section = code.compare(students, lambda name: None)
    assert sorted(name for name, _ in reads) == sorted(s.name for s in students)    # each once
    shown = excerpts(section)
    assert as_in(changed, shown[(first, "attention")])
    assert all(as_in(copied["attention"], shown[(s.name, "attention")]) for s in students if s.name != first)


# ====================================================================== the report in a browser

HOSTILE = ("<script>alert(1)</script>", '"><img src=x onerror=alert(1)>', "{{7*7}}")


def test_hostile_names_and_code_are_text_in_the_report_dom(tmp_path, course):
    from tests.test_report_pages import _dom, _hostile_result

    base = _code("loops.py")
    sources = {}
    for i, text in enumerate(HOSTILE):
        name = text.replace("/", "_")              # a folder name holds no "/"
        code = base.replace("def softmax(", f"LABEL = str({text!r}).strip().upper()  # {text}\n\n\ndef softmax(")
        code = code.replace("    x = np.asarray(x, dtype=float)\n", "    assert LABEL\n    x = np.asarray(x, dtype=float)\n", 1)
        sources[name] = code if i == 0 else disguise(code, seed=i).replace("LABEL =", f"# {text}\nLABEL =")
    items = [Submitted(student, "attention", f"{student}.py", code) for student, code in sources.items()]
    pairs, found = similar_pairs(items, {"attention": kit_stubs(["attention"])["attention"]})
    assert found == 3
    section = {"pairs": [p.to_dict() for p in pairs],
               "compared": {"exercises": ["attention"], "submissions": 3, "pairs_found": found, "pairs_listed": found,
                            "unread": [], "similar": similarity.SIMILAR, "min_shared_fingerprints": similarity.MIN_SHARED}}
    finish_run(tmp_path, [_hostile_result(student, student) for student in sources], course, similarity=section)
    page = tmp_path / "report.html"
    assert any(text in row["text"] for p in section["pairs"] for e in p["exercises"] for s in e["sides"]
               for row in s["excerpt"] if row["text"] for text in HOSTILE)
    dom = _dom(page, tmp_path)
    tags = [tag for tag, _ in dom.elements]
    assert "script" not in tags and not any(attrs.get("src") == "x" for _, attrs in dom.elements)
    assert not [a for _, attrs in dom.elements for a in attrs if a.startswith("on")]
    text = "".join(dom.text)
    for hostile in HOSTILE:
        assert hostile.replace("/", "_") in text                 # the student's name, as typed
        assert f"LABEL = str({hostile!r})" in text               # its code, as written


# ====================================================================== copydetect, loaded lean

IMPORT_PROBE = r"""
import importlib.util, json, sys
real = importlib.util.find_spec
if sys.argv[1] == "fail":      # the lean way cannot find copydetect's folder: the plain import
    importlib.util.find_spec = lambda name, *a: None if name == "copydetect" else real(name, *a)
import autograder.integrity.fingerprint as fingerprint
seen = {"pyplot": "matplotlib.pyplot" in sys.modules, "package": "copydetect" in sys.modules}
importlib.util.find_spec = real
from copydetect import CodeFingerprint, compare_files
from copydetect.utils import winnow
a = CodeFingerprint(sys.argv[2], 25, 1)
print(json.dumps({**seen, "same": winnow is fingerprint.winnow,
                  "fingerprints": [int(x) for x in fingerprint.winnow(__import__("numpy").arange(60), 3)[0]],
                  "overlap": int(compare_files(a, CodeFingerprint(sys.argv[2], 25, 1))[0])}))
"""


@pytest.mark.parametrize("way", ["lean", "fail"])
def test_copydetect_is_loaded_without_its_report_and_works_as_itself_after(way):
    """A class run reads copydetect's winnowing without the package's __init__ (which imports
    matplotlib.pyplot, a costly import at the start of every run); the real package imported afterwards
    works and shares that module. If the lean way fails, the plain import gives the same."""
    run = subprocess.run([sys.executable, "-c", IMPORT_PROBE, way, str(KIT_ROOT / "solutions" / "attention.py")],
                         capture_output=True, text=True, timeout=120, cwd=KIT_ROOT)
    assert run.returncode == 0, run.stderr
    seen = json.loads(run.stdout)
    assert seen["pyplot"] is seen["package"] is (way == "fail"), seen     # the plain way pays for pyplot
    assert seen["same"] and seen["overlap"] > 100 and seen["fingerprints"]


# ====================================================================== padding and other spellings

def _given(*roots: str):
    from autograder.integrity.fingerprint import Given

    return Given(roots=frozenset(roots))


def _reads_alike(one: str, other: str, *roots: str) -> bool:
    return normalise(one, _given(*roots)).text == normalise(other, _given(*roots)).text


_PLAIN = """
import numpy as np


def attend(q, k, v):
    scores = q @ np.swapaxes(k, -1, -2) / np.sqrt(q.shape[-1])
    weights = np.exp(scores - scores.max(axis=-1, keepdims=True))
    weights = weights / weights.sum(axis=-1, keepdims=True)
    return weights @ v, weights
"""


def test_code_that_is_never_called_is_not_read():
    """Unused functions, dead branches, statements that do nothing, unused assignments and imports
    change nothing in what is read (each part below also changes it when it does run)."""
    padded = """
import numpy as np
import itertools
DEBUG = False


def attend(q, k, v):
    import math as unused_math
    scores = q @ np.swapaxes(k, -1, -2) / np.sqrt(q.shape[-1])
    'a note'
    scores
    scores = scores
    scores += 0
    unused = np.zeros(3)
    if False:
        scores = scores * 2
    if DEBUG:
        print(scores)
    while 0:
        scores = -scores
    weights = np.exp(scores - scores.max(axis=-1, keepdims=True))
    pass
    weights = weights / weights.sum(axis=-1, keepdims=True)
    return weights @ v, weights
    print("never")


def helper_nobody_calls(x):
    return [value * 2 for value in x]


if __name__ == "__main__":
    print(attend(1, 2, 3))
"""
    assert _reads_alike(_PLAIN, padded, "attend")
    live = padded.replace("if False:", "if scores.any():").replace("return weights @ v, weights\n",
                                                                     "return helper_nobody_calls(weights @ v), weights\n")
    assert not _reads_alike(_PLAIN, live, "attend")
    assert not _reads_alike(padded, live, "attend")


def test_a_helper_reached_from_a_contract_name_is_read_however_it_is_reached():
    """A helper is live when a contract function or class reaches it: called, through a method,
    by getattr with its name, through a base class, or as a class attribute; dead otherwise. Code
    that looks names up by a computed string keeps everything."""
    def read(source: str) -> tuple[str, ...]:
        return normalise(source, _given("Model")).text

    body = "\n    def forward(self, x):\n        return {call}\n"
    helper = "\n\ndef double(x):\n    return x * 2 + 1 - 3\n"
    method = "\n    def double(self, x):\n        return x * 2 + 1 - 3\n"
    cases = {
        "function": ("class Model:" + body.format(call="double(x)") + helper, True),
        "method": ("class Model:" + body.format(call="self.double(x)") + method, True),
        "getattr": ("class Model:" + body.format(call='getattr(self, "double")(x)') + method, True),
        "computed getattr": ("class Model:" + body.format(call='getattr(self, "dou" + "ble")(x)') + method, True),
        "base class": ("class Base:" + method + "\n\nclass Model(Base):" + body.format(call="self.double(x)"), True),
        "class attribute": ("class Model:\n    step = staticmethod(double)" + body.format(call="self.step(x)")
                            + helper, True),
        "unused method": ("class Model:" + body.format(call="x") + method, False),
        "unused function": ("class Model:" + body.format(call="x") + helper, False),
    }
    for name, (source, live) in cases.items():
        assert ("Sub" in read(source)) == live, name        # `- 3` is read only in a live double


def test_star_imports_and_operators_written_as_calls_read_as_their_plain_forms():
    star = _PLAIN.replace("import numpy as np", "from numpy import *").replace("np.", "")
    assert _reads_alike(_PLAIN, star, "attend")
    calls = """
import operator
import numpy as np
from numpy import exp as e


def attend(q, k, v):
    scores = np.divide(np.matmul(q, np.swapaxes(k, -1, -2)), np.sqrt(q.shape[-1]))
    weights = e(operator.sub(scores, scores.max(axis=-1, keepdims=True)))
    weights = weights.__truediv__(np.sum(weights, axis=-1, keepdims=True))
    return operator.matmul(weights, v), weights
"""
    assert _reads_alike(_PLAIN, calls, "attend")
    assert not _reads_alike(_PLAIN, calls.replace("np.divide", "np.multiply"), "attend")
    shadowed = "def attend(np, k, v):\n    return np.matmul(k, v)\n"      # a parameter named np is not numpy
    assert not _reads_alike(shadowed, "def attend(np, k, v):\n    return k @ v\n", "attend")


def test_numpy_and_torch_spellings_of_one_operation_read_alike():
    torch_form = """
import math
import torch


def attend(q, k, v):
    q = torch.as_tensor(q)
    k = torch.as_tensor(k)
    v = torch.as_tensor(v)
    scores = q @ torch.transpose(k, -1, -2) / math.sqrt(q.shape[-1])
    weights = torch.exp(scores - scores.amax(dim=-1, keepdim=True))
    weights = weights / weights.sum(dim=-1, keepdim=True)
    return weights @ v, weights
"""
    assert _reads_alike(_PLAIN, torch_form, "attend")
    assert not _reads_alike(_PLAIN, torch_form.replace("torch.exp", "torch.log"), "attend")


# ====================================================================== a class: the corpus and held-out files

HELD_OUT = KIT_ROOT / "tests" / "similarity_heldout"
CODE_EXERCISES = ("attention", "causal_mask", "scaling", "multihead")


def _files(stem: str) -> dict[str, str]:
    """A class of honest files of `stem`, by path: the corpus's correct solutions, the kit's
    solution and the held-out implementations (tests/similarity_heldout/honest: written apart,
    in the styles of public tutorials, each graded full marks)."""
    paths = [*sorted((KIT_ROOT / "tests" / "corpus" / stem / "correct").iterdir()),
             KIT_ROOT / "solutions" / f"{stem}.py", *sorted((HELD_OUT / "honest" / stem).glob("*.py"))]
    files = {}
    for path in paths:
        source = read_source(path, stem)
        if isinstance(source, str):
            files[path.relative_to(KIT_ROOT).as_posix()] = str(source)
    return files


def _families(files: dict[str, str], stub: str) -> dict[str, str]:
    """path -> its family (a file and the variants made from it, benchmarks/bench_similarity.py)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("bench_similarity", KIT_ROOT / "benchmarks" / "bench_similarity.py")
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    return bench.families(files, stub)


def _pairs_of(stem: str, files: dict[str, str], stubs: dict[str, str]):
    items = [Submitted(name, stem, f"{stem}.py", source) for name, source in files.items()]
    return similar_pairs(items, {stem: stubs[stem]})


@pytest.mark.parametrize("stem", CODE_EXERCISES)
def test_held_out_honest_implementations_are_not_paired(stubs, stem):
    """Six or more implementations written apart (loops, vectorised, other helpers; the ways The
    Annotated Transformer, d2l.ai and nanoGPT write it, some ported from the same tutorial as a
    corpus file) are paired with none of each other, nor with any of the corpus's correct files;
    and the corpus's correct files only within a family (a file and its notebook)."""
    files = _files(stem)
    honest = [name for name in files if name.startswith("tests/similarity_heldout/")]
    assert len(honest) >= 6
    pairs, found = _pairs_of(stem, {name: files[name] for name in honest}, stubs)
    assert (found, pairs) == (0, []), [(p.students, round(p.score, 2)) for p in pairs]
    pairs, _ = _pairs_of(stem, files, stubs)
    family = _families(files, stubs[stem])
    false = [(p.students, round(p.score, 2)) for p in pairs
             if set(p.students) & set(honest) or family[p.students[0]] != family[p.students[1]]]
    assert not false


@pytest.mark.parametrize("stem", CODE_EXERCISES)
def test_copies_made_by_a_tool_the_detector_never_saw_are_found(stubs, stem):
    """python-minifier's copies of four files (renamed to single letters, literals hoisted into
    names, statements joined, annotations dropped), kept as made in tests/similarity_heldout/minified:
    each is paired with its original, in a class of the honest files."""
    files = _files(stem)
    copies = {}
    for path in sorted((HELD_OUT / "minified" / stem).glob("*.py")):
        text = path.read_text(encoding="utf-8")
        original = text.split(",", 1)[0].removeprefix("# ")
        assert original in files, original
        copies[f"minified {original}"] = (original, text)
    pairs, _ = _pairs_of(stem, files | {name: text for name, (_, text) in copies.items()}, stubs)
    scores = {frozenset(p.students): p.score for p in pairs}
    for name, (original, _) in copies.items():
        assert scores.get(frozenset((name, original)), 0) >= similarity.SIMILAR, name


TRANSFORMS = {"unused functions": pad_with_unused_function, "dead branches": pad_with_dead_branches,
              "no-op statements": pad_with_no_ops, "star imports": star_import,
              "operators as calls": operators_as_calls, "numpy swapped for torch": numpy_to_torch}
# Each copied file below, so transformed, would go unlisted without the normalisation and the
# pair's score (the smaller side's share): the copy's own share, diluted by what it added, falls
# under the threshold.
COPIED = [
    *[("unused functions", stem, name) for stem, name in (("attention", "annotated_numpy"), ("causal_mask", "index_compare"),
                                                          ("scaling", "per_trial_loop"), ("multihead", "annotated_port"))],
    *[("dead branches", stem, name) for stem, name in (("attention", "annotated_numpy"), ("causal_mask", "index_compare"),
                                                       ("scaling", "per_trial_loop"), ("multihead", "annotated_port"))],
    *[("no-op statements", stem, name) for stem, name in (("attention", "annotated_numpy"), ("causal_mask", "index_compare"),
                                                          ("scaling", "per_trial_loop"), ("multihead", "annotated_port"))],
    ("star imports", "attention", "annotated_numpy"), ("star imports", "causal_mask", "d2l_valid_lens"),
    ("star imports", "multihead", "einsum_everywhere"),
    ("operators as calls", "attention", "annotated_numpy"), ("operators as calls", "causal_mask", "index_compare"),
    ("operators as calls", "scaling", "per_trial_loop"), ("operators as calls", "multihead", "annotated_port"),
    ("numpy swapped for torch", "attention", "annotated_numpy"), ("numpy swapped for torch", "causal_mask", "d2l_valid_lens"),
]


@pytest.mark.parametrize("transform,stem,name", COPIED, ids=[f"{t}-{s}-{n}" for t, s, n in COPIED])
def test_a_padded_or_respelled_copy_is_found(stubs, transform, stem, name):
    """A copy of an honest file padded with code that never runs, or with the same operations
    spelled otherwise, in a class of the honest files: listed with its original, the copy's
    best match."""
    files = _files(stem)
    original = f"tests/similarity_heldout/honest/{stem}/{name}.py"
    copy = TRANSFORMS[transform](files[original])
    assert copy != files[original]
    pairs, _ = _pairs_of(stem, files | {"copier": copy}, stubs)
    with_copy = sorted(((p.score, p.students) for p in pairs if "copier" in p.students), reverse=True)
    assert with_copy and set(with_copy[0][1]) == {original, "copier"}, with_copy
    assert with_copy[0][0] >= similarity.SIMILAR


def test_a_file_too_deep_or_long_for_the_normalisation_is_still_read():
    """An expression nested deeper than the rewriting can follow, and chains of thousands of names,
    are read as far as the normalisation goes (a file left out could not be paired at all)."""
    deep = "def attend(q, k, v):\n    return " + " + ".join(["q"] * 600) + "\n"
    assert normalise(deep, _given("attend")) is not None
    chain = "def attend(q, k, v):\n    a0 = q\n" + "".join(f"    a{i} = a{i - 1} + 1\n" for i in range(1, 2000))
    tokens = normalise(chain + "    return a1999\n", _given("attend"))
    assert tokens is not None and len(tokens.text) > 2000


def test_the_similarity_helper_reads_the_stubs_once_before_its_children_fork(stubs):
    """What a stub gives every student is made in the helper's warm-up; a child forked from it
    fingerprints a student's file without reading the stub again, to the same fingerprint."""
    import numpy as np

    from autograder.integrity import made as made_module, prints_helper
    from autograder.integrity.fingerprint import boilerplate, fingerprint, given_statements

    made_here, stub_given = made_module.made_here, made_module.stub_given
    stub_given.cache_clear()
    prints_helper.warm()
    made = stub_given.cache_info()
    assert made.currsize >= len(stubs)
    source = (KIT_ROOT / "solutions" / "attention.py").read_text(encoding="utf-8")
    answer = made_here("a", "attention", "attention.py", source, stubs["attention"])
    assert stub_given.cache_info().misses == made.misses       # the stub was not read again
    expected = fingerprint(normalise(source, given_statements(stubs["attention"])), boilerplate([stubs["attention"]]))
    assert np.array_equal(answer["hashes"], expected.hashes)


def test_code_costly_to_fingerprint_leaves_grading_s_reading_whole(tmp_path, monkeypatch):
    """Grading's reading child fingerprints within a small CPU time and leaves out what fails:
    the sources are read all the same (a signal's cost never becomes a grade's), and what was
    left out is read again by the similarity pass's own child."""
    from autograder.intake import budget
    from autograder.integrity import class_code

    for stem in ("attention", "scaling"):
        (tmp_path / f"{stem}.py").write_text((KIT_ROOT / "solutions" / f"{stem}.py").read_text(encoding="utf-8"),
                                             encoding="utf-8")
    stubs = kit_stubs(("attention", "scaling"))
    real = class_code.made_here

    def spins_on_attention(student, stem, *args):
        while stem == "attention":
            pass
        return real(student, stem, *args)

    def fails_on_attention(student, stem, *args):
        if stem == "attention":
            raise RecursionError("too deep")
        return real(student, stem, *args)

    monkeypatch.setattr(class_code, "FINGERPRINT_CPU_SECONDS", 0.3)
    for made_here, kept in ((spins_on_attention, []), (fails_on_attention, ["scaling"])):
        monkeypatch.setattr(class_code, "made_here", made_here)
        with budget.charging(budget.Account()):
            answer = class_code.read_prints_here(str(tmp_path), [], str(tmp_path), ["attention", "scaling"], stubs)
        assert all("message" not in answer["loaded"][stem] for stem in ("attention", "scaling"))
        assert [m["exercise"] for m in answer["more"]] == kept
