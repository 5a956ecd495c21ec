"""Every hint a student is shown is counted: its misconception id is in the result's
tags (results.json) and in summary.json, for that student and that check.

A class of wrong submissions -- each buggy file of the corpus (tests/corpus/<stem>/buggy, one per
mistake) and each student-style file with one catalogue mistake (tests/mistakes_by_edit.py, the
mutants of each exercise (autograder/checks/<stem>/mutants.py) written as a student writes them) -- is graded by `attnkit grade`.
Then the text each student reads (Gradescope's outputs, the Markdown feedback page) is searched for
every catalogue hint, by its own words: whatever path put a hint there, its id must have been
recorded. Hidden checks are among them (their hint names the mistake without the inputs).
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest

from autograder.cli import main
from autograder.config import KIT_ROOT
from autograder.checks import all_misconceptions
from autograder.reports.gradescope import to_gradescope
from autograder.results import CheckResult, ExerciseResult, SubmissionResult

sys.path.insert(0, str(Path(__file__).resolve().parent))
from mistakes_by_edit import HAND, MISTAKES, source_with  # noqa: E402

CORPUS = KIT_ROOT / "tests" / "corpus"
PREFIX = 70      # characters of a hint that name it: the catalogue's hints differ well before this


def _words(text: str) -> str:
    """Text as read: Markdown escapes and code ticks gone, whitespace collapsed."""
    return " ".join(re.sub(r"\\(.)", r"\1", text).replace("`", "").split())


def hint_names() -> dict[str, set[str]]:
    """Each catalogue hint's opening words (up to a placeholder such as {dtype}) -> the ids whose
    hint it opens (an id's hint may be shared by several exercises' entries)."""
    names: dict[str, set[str]] = {}
    for mis in all_misconceptions():
        opening = _words(mis.hint.split("{", 1)[0])[:PREFIX]
        names.setdefault(opening, set()).add(mis.id)
    return names


HINTS = hint_names()


def hints_shown(text: str) -> list[set[str]]:
    """For each catalogue hint found in `text`: the ids it may stand for."""
    read = _words(text)
    return [ids for opening, ids in HINTS.items() if opening in read]


def uncounted(student: str, gradescope: dict, summary: dict) -> list[tuple[str, set[str], str]]:
    """(check id, ids, where) of each hint shown in a test's output that its tags or summary.json
    do not count for this student and check."""
    counted = {m["id"]: m for m in summary["misconceptions"]}
    missing = []
    for test in gradescope["tests"]:
        tags = {t.split(":", 1)[1] for t in test["tags"] if t.startswith("misconception:")}
        check_id = test["extra_data"]["check_id"]
        for ids in hints_shown(test["output"]):
            if not ids & tags:
                missing.append((check_id, ids, "tags"))
            elif not any(student in counted.get(m, {}).get("students", ())
                         and counted[m]["checks"].get(check_id, 0) > 0 for m in ids & tags):
                missing.append((check_id, ids, "summary.json"))
    return missing


def test_the_catalogue_hints_are_told_apart_by_their_opening():
    """The search below names a hint by its first words: two different hints must not share them."""
    by_text: dict[str, set[str]] = {}
    for mis in all_misconceptions():
        by_text.setdefault(_words(mis.hint.split("{", 1)[0]), set()).add(mis.id)
    assert len(HINTS) == len({text[:PREFIX] for text in by_text}) == len(by_text)


def test_a_hint_shown_without_its_id_is_found():
    """The search is able to fail: a hidden check's hint naming a mistake, with no id recorded
    (what results.json held for a hidden check before), is reported; with the id it is not."""
    mis = next(m for m in all_misconceptions() if m.id == "mask_after_softmax")
    check = CheckResult("attention.scaled_dot_product_attention.binary_mask", "attention", "a 0/1 mask",
                        "failed", 0.0, 1.0, "3 of 24 entries differ", f"A hidden check failed. {mis.hint}",
                        (), hidden=True)
    result = SubmissionResult("sam", (ExerciseResult("attention", "Attention", (check,)),), seed=0)
    empty = {"misconceptions": []}
    assert uncounted("sam", to_gradescope(result), empty) == [(check.check_id, {"mask_after_softmax"}, "tags")]
    named = SubmissionResult("sam", (ExerciseResult("attention", "Attention", (
        CheckResult(**{**check.__dict__, "misconceptions": ("mask_after_softmax",)}),)),), seed=0)
    assert uncounted("sam", to_gradescope(named), empty) == [(check.check_id, {"mask_after_softmax"},
                                                               "summary.json")]
    summary = {"misconceptions": [{"id": "mask_after_softmax", "students": ["sam"],
                                   "checks": {check.check_id: 1}}]}
    assert uncounted("sam", to_gradescope(named), summary) == []


def _class(folder: Path) -> list[str]:
    """One student per wrong file: the corpus's buggy files named after their mistake, and each
    catalogue mistake made in the solution."""
    students = []
    for path in sorted(CORPUS.glob("*/buggy/*.py")):
        if "__" in path.stem:          # the corpus's other ways of one mistake: one of each is enough here
            continue
        stem = path.parent.parent.name
        students.append(f"{stem}-{path.stem}")
        (folder / students[-1]).mkdir()
        (folder / students[-1] / f"{stem}.py").write_bytes(path.read_bytes())
    for (stem, mis_id, variant), edits in sorted(MISTAKES.items()):
        original = HAND if stem == "hand_computation" else (KIT_ROOT / "solutions" / f"{stem}.py").read_text()
        students.append(f"edit-{stem}-{mis_id}{'-' + variant if variant else ''}")
        (folder / students[-1]).mkdir()
        (folder / students[-1] / f"{stem}.py").write_text(source_with(stem, original, edits), encoding="utf-8")
    return students


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    folder, out = tmp_path_factory.mktemp("class"), tmp_path_factory.mktemp("out")
    students = _class(folder)
    assert main(["grade", str(folder), "--out", str(out), "--jobs", "2"]) == 0
    return students, out


def test_every_hint_shown_is_in_the_tags_and_summary(graded):
    students, out = graded
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    shown, missing, hidden_named = 0, [], 0
    for student in students:
        gradescope = json.loads((out / "results" / f"{student}.json").read_text(encoding="utf-8"))
        shown += sum(len(hints_shown(t["output"])) for t in gradescope["tests"])
        hidden_named += sum(bool(hints_shown(t["output"])) for t in gradescope["tests"]
                            if t["visibility"] != "visible")
        missing += [(student, *m) for m in uncounted(student, gradescope, summary)]
    assert not missing, missing
    # the class really shows hints, hidden checks' among them, and names most mistakes
    assert shown >= len(students) // 2 and hidden_named >= 5, (shown, hidden_named)


def test_every_hint_on_the_feedback_page_is_counted_for_the_student(graded):
    students, out = graded
    summary = {m["id"]: set(m["students"]) for m in json.loads((out / "summary.json").read_text())["misconceptions"]}
    missing = []
    for student in students:
        page = (out / "feedback" / f"{student}.md").read_text(encoding="utf-8")
        tags = {t.split(":", 1)[1] for test in json.loads((out / "results" / f"{student}.json").read_text())["tests"]
                for t in test["tags"] if t.startswith("misconception:")}
        for ids in hints_shown(page):
            if not ids & tags or not any(student in summary.get(m, ()) for m in ids):
                missing.append((student, ids))
    assert not missing, missing
