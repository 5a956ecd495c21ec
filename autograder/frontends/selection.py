"""What `attnkit check --exercise NAME` names: an exercise, its file, a task or a check (the stems to
grade and the checks to run)."""

from __future__ import annotations

from pathlib import PurePath

from autograder.intake import SOURCE_SUFFIXES


class SelectionError(ValueError):
    """An --exercise that names no exercise, task or check of the course (the message says which)."""


def stem_of(name: str) -> str:
    """The exercise an --exercise names: `attention`, `attention.py`, `exercises/attention.ipynb`,
    the task `attention.softmax` or the check `attention.softmax.rows` all name `attention`."""
    path = PurePath(name)
    if path.suffix.lower() in SOURCE_SUFFIXES:
        return path.stem
    return name.split(".", 1)[0]


def select(names, course) -> tuple[tuple[str, ...] | None, frozenset[str] | None]:
    """(the stems to grade, the check ids to run) for the --exercise values; (None, None): all.
    A stem or a file name selects every check of its exercise, a task id the checks of that task,
    a check id that check."""
    if not names:
        return None, None
    stems: list[str] = []
    only: set[str] = set()
    for name in names:
        stem = stem_of(name)
        if stem not in course.exercises:
            raise SelectionError(f"--exercise {name}: no such exercise (one of {', '.join(course.exercises)}; "
                                 f"a file name, a task id such as attention.softmax or a check id works too)")
        if stem not in stems:
            stems.append(stem)
        checks = course.exercises[stem].checks
        if name == stem or PurePath(name).suffix.lower() in SOURCE_SUFFIXES:
            only.update(checks)
            continue
        chosen = [cid for cid in checks if cid == name or cid.startswith(name + ".")]
        if not chosen:
            tasks = sorted({cid.rsplit(".", 1)[0] for cid in checks})
            raise SelectionError(f"--exercise {name}: {stem} has no task or check called that (its tasks: "
                                 f"{', '.join(tasks)})")
        only.update(chosen)
    every = {cid for stem in stems for cid in course.exercises[stem].checks}
    return tuple(stems), (None if only == every else frozenset(only))
