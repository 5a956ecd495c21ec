"""Several files that could each be an exercise's (`attention (1).py` and `Attention-v2.py`, a
browser's copy beside the student's renamed version): each is graded and the better counts,
as with the two forms of one exercise, and the exercise's note says so.

Intake marks such a stem AMBIGUOUS and grades none; the grader (grading/submission.py) grades each
of `candidate_sources` (at most the judge's limit, forms.CANDIDATES_GRADED, so a folder of twenty
copies costs no more than four) and `the_better` keeps the best (forms.the_better: check.py's rule too).
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from autograder.intake.files import Flag, candidates
from autograder.judge import forms
from autograder.results import ExerciseResult


def ambiguous(exercise: ExerciseResult) -> bool:
    return Flag.AMBIGUOUS.value in exercise.flags


def candidate_sources(folder: Path, stem: str) -> list:
    """Each file that could be `stem`'s, read (a SourceFile, or a LoadError saying why not), to be
    graded by the caller (at most forms.CANDIDATES_GRADED of them); read in a bounded child charged
    to the submission being read."""
    from autograder.sandbox import helper_process
    from autograder.intake import bounded
    from autograder.intake.load import LoadError, loaded_answer

    if helper_process.in_child():
        return _candidates_here(Path(folder), stem)
    where, fds = bounded.folder_arg(folder)
    try:
        answer = bounded.run("candidates", [where, stem], fds=fds, item=False)
    except bounded.OverLimit as err:
        return [LoadError(stem, "", f"the other files that could be {stem}'s were not read: {err}")]
    names = [f"{i}" for i in range(len(answer.get("loaded", {})))] if isinstance(answer, dict) else []
    return list(loaded_answer(answer, tuple(names)).values())


def candidates_here(where, stem: str) -> dict:
    """What candidate_sources runs in its child: the candidates as a child's loaded answer, keyed
    by their order."""
    from autograder.intake import bounded
    from autograder.intake.load import plain_answer

    found = _candidates_here(Path(bounded.folder_of(where)), stem)
    return plain_answer({f"{i}": source for i, source in enumerate(found)})


def _candidates_here(folder: Path, stem: str) -> list:
    from autograder.intake.load import LoadError, SourceFile, source_from_bytes

    found_sources = []
    for found in candidates(folder, stem):
        source = source_from_bytes(found.data, found.relpath, found.suffix, stem)
        if isinstance(source, LoadError):
            found_sources.append(LoadError(stem, found.relpath, source.message))
        else:
            found_sources.append(SourceFile(stem, found.relpath, source, found.note))
    return found_sources


def the_better(exercise: ExerciseResult, graded: list[ExerciseResult]) -> ExerciseResult:
    """`exercise` (graded as ambiguous: nothing) replaced by the best of its candidates, `graded`,
    by the judge's rule (forms.the_better), with a note that says so."""
    if len(graded) < 2:
        return exercise
    best, note = forms.the_better(exercise.stem, [as_graded(e) for e in graded])
    kept = graded[best]
    return replace(kept, note="; ".join(filter(None, (kept.note, note))),
                   flags=tuple(f for f in exercise.flags if f != Flag.AMBIGUOUS.value) + (Flag.CANDIDATES.value,))


def as_graded(exercise: ExerciseResult) -> forms.Graded:
    """An exercise's result as the judge weighs one file against another."""
    return forms.Graded(exercise.graded_file or "", exercise.score, exercise.max_score, exercise.note,
                        untouched=all(c.status == "not_implemented" for c in exercise.checks))
