"""The same grade on every path: one set of folders graded through `attnkit check`,
watch mode, the pytest plugin, `attnkit grade`, the Gradescope runner and an nbgrader test
cell's grading gives the same score per exercise, and the same intake flags where the path
shows them. zoe's attention is an unscaled .py beside a right notebook: every path grades both
forms and keeps the better.

The Dask worker grades through `grading.grade.grade`, as `attnkit grade` does;
tests/test_distributed.py holds a cluster run equal to a local one.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from rich.console import Console

from autograder.checks import check_ids
from autograder.grading.local_grading import grade_class
from autograder.config import DEFAULT_COURSE, KIT_ROOT
from autograder.grading.course_session import GradingSession
from autograder.frontends.watch import Watcher

SOLUTIONS, EXERCISES = KIT_ROOT / "solutions", KIT_ROOT / "exercises"
CORPUS, HOSTILE = KIT_ROOT / "tests" / "corpus", KIT_ROOT / "tests" / "hostile"
STEMS = ("attention", "causal_mask", "multihead")


def _notebook(source: str) -> str:
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("# my attention"),
                                         nbformat.v4.new_code_cell(source)])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    return nbformat.writes(nb)


def _folders(root: Path) -> Path:
    """One class: each folder a case where paths could grade differently."""
    right = (SOLUTIONS / "attention.py").read_text()
    unscaled = right.replace("/ math.sqrt(d_k)", "").replace("/ np.sqrt(d_k)", "")
    assert unscaled != right
    cases = {
        "zoe": {"attention.ipynb": _notebook(right), "attention.py": unscaled},      # both forms
        "misnamed": {"Attention.py": right, "causal-mask.py": (SOLUTIONS / "causal_mask.py").read_text()},
        "nested": {"hw1/attention.py": right, "hw1/multihead.py": (SOLUTIONS / "multihead.py").read_text()},
        "scratch": {"attention.ipynb": (CORPUS / "attention/correct/notebook_scratch_errors.ipynb").read_text()},
        "stub": {"attention.py": (EXERCISES / "attention.py").read_text(),
                 "causal_mask.py": (EXERCISES / "causal_mask.py").read_text()},
        "hostile": {"causal_mask.py": (HOSTILE / "os_exit" / "causal_mask.py").read_text(), "attention.py": right},
    }
    # An upload that is an archive: unpacked by every path alike (the one grade function stages it).
    import io
    import zipfile

    packed = io.BytesIO()
    with zipfile.ZipFile(packed, "w") as zf:
        zf.writestr("hw/attention.py", unscaled)
        zf.writestr("hw/causal_mask.py", (SOLUTIONS / "causal_mask.py").read_text())
        zf.writestr("hw/multihead.py", (SOLUTIONS / "multihead.py").read_text())
    (root / "zipped").mkdir(parents=True)
    (root / "zipped" / "my work.zip").write_bytes(packed.getvalue())
    for student, files in cases.items():
        for name, text in files.items():
            path = root / student / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
    return root


@pytest.fixture(scope="module")
def klass(tmp_path_factory):
    return _folders(tmp_path_factory.mktemp("every-path") / "class")


@pytest.fixture(scope="module")
def by_grade(klass, course, tmp_path_factory):
    """`attnkit grade`: {student: {stem: (score, flags)}}."""
    results = grade_class(klass, tmp_path_factory.mktemp("out"), course, jobs=2)
    return {r.student: {e.stem: (e.score, e.flags) for e in r.exercises if e.stem in STEMS} for r in results}


@pytest.fixture(scope="module")
def session(course):
    with GradingSession(course).start() as s:
        yield s


@pytest.mark.slow
def test_check_and_watch_give_what_grade_gives(klass, by_grade, session):
    for student, expected in by_grade.items():
        checked = session.grade(klass / student, stems=STEMS)
        assert {e.stem: (e.score, e.flags) for e in checked.exercises} == expected, student
        watcher = Watcher(session, klass / student, STEMS, Console(file=open(os.devnull, "w")))
        watched = {stem: watcher.regrade(stem) for stem in STEMS}
        assert {stem: (e.score, e.flags) for stem, e in watched.items()} == expected, student
    zoe = session.grade(klass / "zoe", stems=("attention",)).exercise("attention")
    assert zoe.score == zoe.max_score and "both were graded" in zoe.note and "attention.ipynb, counts" in zoe.note


@pytest.mark.slow
def test_the_pytest_plugin_gives_what_grade_gives(klass, by_grade):
    for student in ("zoe", "misnamed", "stub"):
        run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(KIT_ROOT / "autograder"),
                              "--submission", str(klass / student)], capture_output=True, text=True, timeout=600,
                             cwd=KIT_ROOT)
        scores = {m.group(1): float(m.group(2))
                  for m in re.finditer(r"^(\w+)\s+([\d.]+) / [\d.]+", run.stdout, flags=re.M)}
        assert {stem: scores[stem] for stem in STEMS} == {s: v[0] for s, v in by_grade[student].items()}, \
            (student, run.stdout[-2000:])


@pytest.mark.slow
def test_the_gradescope_runner_gives_what_grade_gives(klass, by_grade, tmp_path):
    from autograder.gradescope.run import run

    for student in ("zoe", "nested", "hostile"):
        root = tmp_path / student
        (root / "source").mkdir(parents=True)
        (root / "results").mkdir()
        shutil.copy(DEFAULT_COURSE, root / "source" / "course.yml")
        shutil.copytree(klass / student, root / "submission")
        data = run(root)
        scores: dict[str, float] = {}
        for test in data["tests"]:
            stem = next(t.split(":", 1)[1] for t in test.get("tags", []) if t.startswith("exercise:"))
            scores[stem] = scores.get(stem, 0) + test["score"]
        assert {stem: scores.get(stem, 0) for stem in STEMS} == {s: v[0] for s, v in by_grade[student].items()}, \
            student


@pytest.mark.slow
def test_an_nbgrader_cell_grades_the_notebook_as_grade_does(klass, course, session):
    """nbgrader hands in one notebook per exercise; its cells grade through grade_exercise."""
    from autograder.intake.load import load_stem
    from autograder.nbgrader.cells import grade_checks

    folder = klass / "scratch"
    wanted = [cid for cid in check_ids()["attention"]]
    checks = grade_checks(folder / "attention.ipynb", load_stem(folder, "attention"), course, session.sandbox,
                          wanted)
    graded = session.grade(folder, stems=("attention",)).exercise("attention")
    assert sum(c.score for c in checks) == graded.score == graded.max_score


SUBSET = ("attention.softmax.rows", "attention.scaled_dot_product_attention.single")


@pytest.mark.slow
def test_a_subset_of_checks_is_the_same_on_check_watch_and_grade(klass, course):
    """`attnkit check --exercise ID` and its watcher grade those checks only, with the scores
    `attnkit grade` gives them; an archive is unpacked on both paths."""
    full = {r.student: r for r in grade_class(klass, klass.parent / "out-subset", course, jobs=2)}
    with GradingSession(course, only=set(SUBSET)).start() as subset:
        for student in ("zoe", "zipped"):
            checked = subset.grade(klass / student, stems=("attention",)).exercise("attention")
            assert {c.check_id for c in checked.checks} == set(SUBSET), student
            expected = {c.check_id: c.score for c in full[student].exercise("attention").checks if c.check_id in SUBSET}
            assert {c.check_id: c.score for c in checked.checks} == expected, student
            watcher = Watcher(subset, klass / student, ("attention",), Console(file=open(os.devnull, "w")))
            watched = watcher.regrade("attention")
            assert {c.check_id: c.score for c in watched.checks} == expected, student
    assert "my work.zip" in full["zipped"].exercise("attention").note
    assert full["zipped"].exercise("attention").score < full["zipped"].exercise("attention").max_score   # unscaled
