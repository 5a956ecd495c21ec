"""Intake: which file grades each exercise, read without ever leaving the student's folder.

No sandbox here: these tests read folders the way the grader does (autograder.intake.load /
autograder.intake.files) and look at what would be graded. Red-team cases build links in every
place a student (or a hostile folder) can put them and check that nothing outside is read.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import nbformat
import pytest

from autograder.config import KIT_ROOT
from autograder.intake.files import Flag, discover, ignored, normal_stem
from autograder.intake.students import find_students, open_confined
from autograder.intake.stubs import has_work
from autograder.intake.load import LoadError, SourceFile, load_stem, load_submission, loaded_here

SOLUTIONS = KIT_ROOT / "solutions"
EXERCISES = KIT_ROOT / "exercises"
SECRET = "THE-SOLUTIONS-SECRET"


def _write(path: Path, text: str | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    (path.write_bytes if isinstance(text, bytes) else path.write_text)(text)
    return path


def _notebook(code: str) -> str:
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(code)]
    return nbformat.writes(nb)


@pytest.fixture
def solutions(tmp_path) -> Path:
    """A stand-in for the course's solutions: a file that must never be graded for a student."""
    folder = tmp_path / "solutions"
    _write(folder / "attention.py", f"# {SECRET}\n" + (SOLUTIONS / "attention.py").read_text())
    return folder


# ====================================================================== forgiving names and folders

@pytest.mark.parametrize("name", ["Attention.py", "attention-v2.py", "attention (1).py", "ATTENTION_final.py",
                                  "attention_2.py", "attention v3.py"])
def test_a_near_miss_name_is_graded_and_said(tmp_path, name):
    _write(tmp_path / name, (SOLUTIONS / "attention.py").read_text())
    loaded = load_stem(tmp_path, "attention")
    assert isinstance(loaded, SourceFile) and loaded.filename == name
    assert "graded as attention.py" in loaded.note and Flag.RENAMED.value in loaded.flags


def test_near_miss_names_for_other_stems():
    assert normal_stem("causal-mask (1).py") == "causal_mask"
    assert normal_stem("multihead (1).ipynb") == "multihead"
    assert normal_stem("Hand Computation v2.py") == "hand_computation"
    assert normal_stem("attention_helpers.py") == "attention_helpers"   # another file, not a version


def test_several_near_misses_are_listed_and_none_is_graded(tmp_path):
    _write(tmp_path / "Attention.py", "x = 1\n")
    _write(tmp_path / "attention (1).py", "x = 2\n")
    loaded = load_stem(tmp_path, "attention")
    assert isinstance(loaded, LoadError)
    assert "Attention.py" in loaded.message and "attention (1).py" in loaded.message


def test_the_exact_name_wins_over_near_misses(tmp_path):
    _write(tmp_path / "attention.py", "x = 1\n")
    _write(tmp_path / "Attention (1).py", "x = 2\n")
    loaded = load_stem(tmp_path, "attention")
    assert loaded.filename == "attention.py" and not loaded.note


def test_zip_litter_checkpoints_dotfiles_and_backups_are_ignored(tmp_path):
    for name in ("__MACOSX", ".ipynb_checkpoints", ".git"):
        _write(tmp_path / name / "attention.py", "x = 1\n")
    for name in ("._attention.py", "attention.py~", "#attention.py#", "attention.py.bak", ".attention.py.swp"):
        assert ignored(name), name
        _write(tmp_path / name, "x = 1\n")
    assert load_stem(tmp_path, "attention").missing


def test_a_single_subfolder_is_descended_into_and_said(tmp_path):
    _write(tmp_path / "__MACOSX" / "junk", "x")
    _write(tmp_path / "Homework 1" / "inner" / "attention.py", (SOLUTIONS / "attention.py").read_text())
    loaded = load_stem(tmp_path, "attention")
    assert isinstance(loaded, SourceFile) and loaded.filename == "Homework 1/inner/attention.py"
    assert "Homework 1/inner/" in loaded.note and Flag.SUBFOLDER.value in loaded.flags


def test_two_subfolders_are_not_guessed_between(tmp_path):
    _write(tmp_path / "a" / "attention.py", "x = 1\n")
    _write(tmp_path / "b" / "attention.py", "x = 1\n")
    assert load_stem(tmp_path, "attention").missing


def test_a_missing_file_names_what_was_found_instead(tmp_path):
    _write(tmp_path / "attention.txt", "x = 1\n")
    loaded = load_stem(tmp_path, "attention")
    assert loaded.missing and "attention.txt" in loaded.message


def test_a_deep_or_huge_folder_does_not_stop_discovery(tmp_path):
    deep = tmp_path / "deep"
    path = deep
    for _ in range(60):                        # deeper than anything intake walks
        path = path / "d"
    path.mkdir(parents=True)
    wide = tmp_path / "wide"
    wide.mkdir()
    for i in range(6000):
        (wide / f"f{i:05d}").touch()
    assert load_stem(deep, "attention").missing
    assert load_stem(wide, "attention").missing


# ====================================================================== .py and .ipynb together

def test_an_untouched_stub_is_never_preferred_to_work(tmp_path):
    _write(tmp_path / "attention.py", (SOLUTIONS / "attention.py").read_text())
    stub = _write(tmp_path / "attention.ipynb", (EXERCISES / "attention.ipynb").read_text())
    os.utime(stub, (2_000_000_000, 2_000_000_000))      # the stub is newer: timestamps mean nothing
    loaded = load_stem(tmp_path, "attention")
    assert loaded.filename == "attention.py" and loaded.alternative is None
    assert "untouched stub" in loaded.note and Flag.STUB_SKIPPED.value in loaded.flags


def test_a_file_that_does_not_compile_is_graded_over_an_untouched_stub(tmp_path):
    broken = (SOLUTIONS / "attention.py").read_text() + "\n\ndef unfinished(x:\n"
    _write(tmp_path / "attention.py", broken)
    _write(tmp_path / "attention.ipynb", (EXERCISES / "attention.ipynb").read_text())
    loaded = load_stem(tmp_path, "attention")
    # the student's own file, its syntax error named, and the stub passed over said so
    assert isinstance(loaded, LoadError) and loaded.filename == "attention.py", loaded
    assert "attention.py" in loaded.message and "line" in loaded.message, loaded.message
    assert "attention.ipynb is an untouched stub" in loaded.note and Flag.STUB_SKIPPED.value in loaded.flags


def test_a_broken_notebook_is_graded_over_an_untouched_py_stub(tmp_path):
    _write(tmp_path / "attention.py", (EXERCISES / "attention.py").read_text())
    _write(tmp_path / "attention.ipynb", '{"cells": [')
    loaded = load_stem(tmp_path, "attention")
    assert isinstance(loaded, LoadError) and loaded.filename == "attention.ipynb", loaded


def test_a_broken_file_beside_work_is_passed_over(tmp_path):
    _write(tmp_path / "attention.py", "def softmax(x, axis=-1)\n")
    _write(tmp_path / "attention.ipynb", _notebook((SOLUTIONS / "attention.py").read_text()))
    loaded = load_stem(tmp_path, "attention")
    assert isinstance(loaded, SourceFile) and loaded.filename == "attention.ipynb"
    assert "attention.py could not be read" in loaded.note


def test_both_forms_with_work_carry_the_other_as_an_alternative(tmp_path):
    _write(tmp_path / "attention.py", (SOLUTIONS / "attention.py").read_text())
    _write(tmp_path / "attention.ipynb", _notebook((SOLUTIONS / "attention.py").read_text()))
    loaded = load_stem(tmp_path, "attention")
    assert loaded.filename == "attention.py" and loaded.alternative.filename == "attention.ipynb"
    assert Flag.BOTH_FORMS.value in loaded.flags


@pytest.mark.parametrize("stem", ["hand_computation", "attention", "causal_mask", "scaling", "multihead"])
def test_the_kits_stubs_hold_no_work_and_its_solutions_do(stem):
    from autograder.intake.load import read_source

    assert not has_work((EXERCISES / f"{stem}.py").read_text(), stem)
    notebook = read_source(EXERCISES / f"{stem}.ipynb", stem)
    assert isinstance(notebook, str) and notebook.cells      # read as the grader reads it
    assert not has_work(notebook, stem)
    assert has_work((SOLUTIONS / f"{stem}.py").read_text(), stem)


# ====================================================================== links: nothing outside is read

def test_a_link_to_the_solutions_is_refused(tmp_path, solutions):
    student = tmp_path / "class" / "mallory"
    student.mkdir(parents=True)
    (student / "attention.py").symlink_to(solutions / "attention.py")
    loaded = load_stem(student, "attention")
    assert isinstance(loaded, LoadError) and loaded.reason == "refused"
    assert "symbolic link" in loaded.message


def test_a_near_miss_name_that_is_a_link_is_refused(tmp_path, solutions):
    (tmp_path / "Attention.py").symlink_to(solutions / "attention.py")
    loaded = load_stem(tmp_path, "attention")
    assert isinstance(loaded, LoadError) and loaded.reason == "refused"


def test_a_relative_link_that_climbs_out_is_refused(tmp_path, solutions):
    student = tmp_path / "class" / "mallory"
    student.mkdir(parents=True)
    (student / "attention.py").symlink_to(Path("..") / ".." / "solutions" / "attention.py")
    loaded = load_stem(student, "attention")
    assert isinstance(loaded, LoadError) and loaded.reason == "refused"


def test_a_link_in_the_middle_of_the_path_is_refused(tmp_path, solutions):
    """The single subfolder is itself a link to the solutions folder."""
    student = tmp_path / "mallory"
    student.mkdir()
    (student / "hw").symlink_to(solutions, target_is_directory=True)
    found = discover(student, ("attention",))["attention"]
    assert not found.files     # a link is not a folder to descend into
    loaded = load_stem(student, "attention")
    assert isinstance(loaded, LoadError)
    assert SECRET not in json.dumps(str(loaded))


def test_a_link_that_stays_inside_the_folder_is_followed(tmp_path):
    _write(tmp_path / "work" / "attention_v3.py", "def softmax(x, axis=-1):\n    return x\n")
    (tmp_path / "attention.py").symlink_to(Path("work") / "attention_v3.py")
    loaded = load_stem(tmp_path, "attention")
    assert isinstance(loaded, SourceFile) and "return x" in loaded.source


def test_a_file_swapped_for_a_link_is_never_read_through_it(tmp_path, solutions, monkeypatch):
    """The file is a regular file when listed and a link when opened: O_NOFOLLOW refuses it."""
    import autograder.intake.files as intake

    target = _write(tmp_path / "attention.py", "x = 1\n")
    real_open, calls = os.open, []

    def swap(path, flags, *args, **kwargs):
        if path == "attention.py" and kwargs.get("dir_fd") is not None:
            calls.append(path)          # every check has passed: now it becomes a link
            target.unlink()
            target.symlink_to(solutions / "attention.py")
        return real_open(path, flags, *args, **kwargs)

    monkeypatch.setattr(intake.os, "open", swap)
    loaded = loaded_here(tmp_path, ("attention",))["attention"]      # what the reading child runs, here
    assert calls == ["attention.py"] and target.is_symlink()
    assert isinstance(loaded, LoadError) and "symbolic link" in loaded.message and SECRET not in str(loaded)


def test_a_fifo_or_device_is_refused_without_being_opened(tmp_path):
    os.mkfifo(tmp_path / "attention.py")          # opening it for reading would block forever
    loaded = load_stem(tmp_path, "attention")
    assert isinstance(loaded, LoadError) and "not a regular file" in loaded.message


def test_a_hard_link_to_the_kits_solution_is_refused(tmp_path):
    try:
        os.link(SOLUTIONS / "attention.py", tmp_path / "attention.py")
    except OSError:
        pytest.skip("the kit lies on another file system: no hard link can be made to it")
    loaded = load_stem(tmp_path, "attention")
    assert isinstance(loaded, LoadError) and loaded.reason == "refused" and "hard link" in loaded.message
    # ... while the kit's own folder still grades its own file (`attnkit check --submission solutions`)
    assert isinstance(load_stem(SOLUTIONS, "attention"), SourceFile)


def test_other_hard_links_are_graded_and_flagged(tmp_path):
    original = _write(tmp_path / "elsewhere" / "a.py", "def softmax(x, axis=-1):\n    return x\n")
    student = tmp_path / "s"
    student.mkdir()
    os.link(original, student / "attention.py")
    loaded = load_stem(student, "attention")
    assert isinstance(loaded, SourceFile) and Flag.HARD_LINK.value in loaded.flags


def test_class_level_links_are_refused_students(tmp_path, solutions):
    root = tmp_path / "course"
    _write(root / "submitted" / "bob" / "self_attention" / "attention.py", "x = 1\n")
    (root / "submitted" / "mallory").symlink_to(root / "submitted" / "bob", target_is_directory=True)
    (root / "submitted" / "eve").mkdir()
    (root / "submitted" / "eve" / "self_attention").symlink_to(solutions, target_is_directory=True)
    _write(root / "submitted" / "__MACOSX" / "bob" / "x", "x")
    students = {s.name: s for s in find_students(root, "self_attention")}
    assert sorted(students) == ["bob", "eve", "mallory"]
    assert not students["bob"].refused
    assert "symbolic link" in students["mallory"].refused and "symbolic link" in students["eve"].refused


def test_a_folder_swapped_for_a_link_after_listing_is_not_opened(tmp_path, solutions):
    root = tmp_path / "class"
    _write(root / "mallory" / "attention.py", "x = 1\n")
    student = find_students(root, "self_attention")[0]
    (root / "mallory" / "attention.py").unlink()
    (root / "mallory").rmdir()
    (root / "mallory").symlink_to(solutions, target_is_directory=True)
    with pytest.raises(OSError):
        open_confined(student.folder)


def test_the_folder_is_graded_through_the_descriptor_that_was_checked(tmp_path):
    root = tmp_path / "class"
    _write(root / "ada" / "attention.py", "x = 1\n")
    student = find_students(root, "self_attention")[0]
    fd = open_confined(student.folder)
    try:
        assert load_submission(Path(f"/proc/self/fd/{fd}"), ("attention",))["attention"].filename == "attention.py"
    finally:
        os.close(fd)


# ====================================================================== bounded parsing

def test_a_notebook_nested_100k_levels_deep_is_a_message_not_a_crash(tmp_path):
    _write(tmp_path / "attention.ipynb", '{"cells": ' + "[" * 100_000 + "]" * 100_000 + "}")
    loaded = load_stem(tmp_path, "attention")
    assert isinstance(loaded, LoadError) and "nested too deeply" in loaded.message


def test_a_deeply_nested_source_file_is_a_message_not_a_crash(tmp_path):
    _write(tmp_path / "attention.py", "x = " + "(" * 100_000 + ")" * 100_000 + "\n")
    loaded = load_stem(tmp_path, "attention")
    assert isinstance(loaded, LoadError)


def test_a_folder_named_like_the_file_is_not_taken_for_it(tmp_path):
    (tmp_path / "attention.py").mkdir()
    _write(tmp_path / "Attention (1).py", "x = 1\n")
    loaded = load_stem(tmp_path, "attention")
    assert isinstance(loaded, SourceFile) and loaded.filename == "Attention (1).py"


def test_of_several_copies_an_untouched_stub_never_beats_a_broken_one():
    from autograder.intake.candidates import the_better
    from autograder.results import CheckResult, ExerciseResult

    def copy(filename: str, status: str) -> ExerciseResult:
        checks = tuple(CheckResult(f"attention.{i}", "attention", "t", status, 0.0, 1.0, "why") for i in range(3))
        return ExerciseResult("attention", "Attention", checks, graded_file=filename)

    asked = ExerciseResult("attention", "Attention", (), flags=(Flag.AMBIGUOUS.value,))
    # the stub comes first in name order, the student's broken copy second
    best = the_better(asked, [copy("Attention-v2.py", "not_implemented"), copy("attention (1).py", "error")])
    assert best.graded_file == "attention (1).py" and "Attention-v2.py 0/3" in best.note
