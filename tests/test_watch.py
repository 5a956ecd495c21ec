"""`attnkit check --watch`: a save re-grades that exercise in the warm session and says what changed."""

from __future__ import annotations

import io
import queue
import re
import shutil
import threading

from rich.console import Console

from autograder.config import KIT_ROOT
from autograder.results import CheckResult, ExerciseResult
from autograder.grading.course_session import GradingSession
from autograder.frontends.watch import Change, Watcher, compare, saved_stems, watch


def _check(cid: str, status: str) -> CheckResult:
    return CheckResult(cid, "attention", cid, status, 1.0 if status == "passed" else 0.0, 1.0)


def test_compare_names_fixed_broken_and_still_failing_checks():
    before = ExerciseResult("attention", "t", (_check("a", "failed"), _check("b", "passed"), _check("c", "failed"),
                                               _check("d", "passed")))
    after = ExerciseResult("attention", "t", (_check("a", "passed"), _check("b", "failed"), _check("c", "error"),
                                              _check("d", "passed"), _check("e", "failed")))
    assert [(c.check.check_id, c.change) for c in compare(before, after)] == [
        ("a", Change.FIXED), ("b", Change.BROKE), ("c", Change.STILL_FAILING), ("e", Change.NEW)]


def test_saved_stems_are_the_exercise_files_of_the_folder(tmp_path):
    paths = [tmp_path / "attention.py", tmp_path / "attention.ipynb", tmp_path / ".~attention.ipynb",
             tmp_path / "notes.py", tmp_path / "sub" / "scaling.py", tmp_path / "scaling.ipynb"]
    assert saved_stems(paths, tmp_path, ("attention", "scaling")) == ["attention", "scaling"]
    assert saved_stems(paths, tmp_path, ("multihead",)) == []


def test_a_save_regrades_that_exercise_and_prints_what_changed(course, tmp_path):
    folder = tmp_path / "work"
    folder.mkdir()
    shutil.copy(KIT_ROOT / "demo" / "class" / "cleo" / "attention.py", folder / "attention.py")
    out = io.StringIO()
    console = Console(file=out, width=200, highlight=False)
    graded: queue.Queue = queue.Queue()
    stop = threading.Event()
    with GradingSession(course) as session:
        first = session.grade(folder, stems=("attention",))
        assert first.score < first.max_score
        watcher = Watcher(session, folder, ("attention",), console)
        watcher.first(first.exercises)
        thread = threading.Thread(target=watch, args=(watcher,),
                                  kwargs={"stop": stop, "on_graded": lambda stem, r: graded.put((stem, r))})
        thread.start()
        try:
            stem, result = _save_until_graded(folder / "attention.py", KIT_ROOT / "solutions" / "attention.py",
                                              graded)
            assert stem == "attention" and result.score == result.max_score
            # saving the same code again: noticed, not graded again
            (folder / "attention.py").write_text((folder / "attention.py").read_text())
            assert graded.get(timeout=120) == ("attention", None)
        finally:
            stop.set()
            thread.join(timeout=30)
    text = out.getvalue()
    assert f"attention.py {first.score:g}/{first.max_score:g} -> {result.max_score:g}/{result.max_score:g}" in text
    assert "fixed attention.scaled_dot_product_attention.bool_mask" in text
    assert "saved, no change in the code" in text


def _save_until_graded(target, source, graded: queue.Queue, tries: int = 60):
    """Save `source` over `target` until the watcher reports a grading (the first save may come
    before the watcher has subscribed to the folder)."""
    for _ in range(tries):
        shutil.copy(source, target)
        try:
            return graded.get(timeout=2)
        except queue.Empty:
            continue
    raise AssertionError("no re-grade after saving the file")


def test_a_file_that_cannot_load_is_said_once(course, tmp_path):
    shutil.copy(KIT_ROOT / "solutions" / "attention.py", tmp_path / "attention.py")
    out = io.StringIO()
    with GradingSession(course) as session:
        watcher = Watcher(session, tmp_path, ("attention",), Console(file=out, width=200))
        watcher.first(session.grade(tmp_path, stems=("attention",)).exercises)
        (tmp_path / "attention.py").write_text("def softmax(x:\n")
        result = watcher.regrade("attention")
    assert result.score == 0
    assert out.getvalue().count("syntax error") == 1
    assert "broke attention.softmax.rows" in out.getvalue()


def _notebook_of(source: str) -> str:
    import nbformat

    notebook = nbformat.v4.new_notebook()
    notebook.cells.append(nbformat.v4.new_code_cell(source))
    return nbformat.writes(notebook)


def test_a_saved_file_with_a_syntax_error_is_reported_not_the_other_form_graded(course, tmp_path):
    """attention.py saved broken beside a working attention.ipynb: its error is reported, and the
    notebook is not graded in its place."""
    folder = tmp_path / "work"
    folder.mkdir()
    solution = (KIT_ROOT / "solutions" / "attention.py").read_text()
    (folder / "attention.ipynb").write_text(_notebook_of(solution))
    shutil.copy(KIT_ROOT / "solutions" / "attention.py", folder / "attention.py")
    broken = tmp_path / "broken.py"
    broken.write_text(solution.replace("def softmax(", "def softmax((", 1))
    broken_line = next(n for n, line in enumerate(broken.read_text().splitlines(), 1) if "def softmax((" in line)
    out = io.StringIO()
    graded: queue.Queue = queue.Queue()
    stop = threading.Event()
    with GradingSession(course) as session:
        watcher = Watcher(session, folder, ("attention",), Console(file=out, width=200, highlight=False))
        watcher.first(session.grade(folder, stems=("attention",)).exercises)
        thread = threading.Thread(target=watch, args=(watcher,),
                                  kwargs={"stop": stop, "on_graded": lambda stem, r: graded.put((stem, r))})
        thread.start()
        try:
            stem, result = _save_until_graded(folder / "attention.py", broken, graded)
        finally:
            stop.set()
            thread.join(timeout=30)
    assert result.graded_file == "attention.py" and result.score == 0
    text = out.getvalue()
    assert f"attention.py has a syntax error at line {broken_line}" in text
    assert text.count("syntax error") == 1


def test_check_and_watch_print_a_failed_check_the_same_way(course, tmp_path):
    from autograder.reports.table import print_report
    from autograder.frontends.watch import print_changes

    shutil.copy(KIT_ROOT / "tests" / "corpus" / "attention" / "buggy" / "keys_not_transposed.py", tmp_path / "attention.py")
    with GradingSession(course) as session:
        result = session.grade(tmp_path, stems=("attention",))
    once, watched = io.StringIO(), io.StringIO()
    print_report(result, Console(file=once, width=300, highlight=False))
    print_changes(Console(file=watched, width=300, highlight=False), None, result.exercises[0], 0.1, False)
    def details(text):     # a check listed under its cause is marked as each command marks it (wrong, new)
        return [re.sub(r"^      \S+ (attention\.)", r"      \1", line) for line in text.splitlines()
                if line.startswith("      ")]

    assert any("misconception:" in line for line in details(once.getvalue()))
    assert any("hint:" in line for line in details(once.getvalue()))
    assert details(once.getvalue()) == details(watched.getvalue())
