"""The walk through the rooms for one submission: intake -> load -> sandbox -> checks -> results.

Every path (check, watch, the pytest plugin, nbgrader's preprocessor and cells, grade, the
cluster worker, the Gradescope runner) grades through `grade_submission` or, for one stem,
`grade_exercise`; what intake decided (which file, both forms, flags) is applied inside them,
so no path can skip it.
"""

from __future__ import annotations

import time
from dataclasses import replace
from contextlib import ExitStack
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, Collection

from autograder.intake.candidates import ambiguous, as_graded, candidate_sources, the_better
from autograder.intake.cells import open_session
from autograder.checks import CHECKS
from autograder.checks.reference_cache import lock_for, needs_torch, stored_answer
from autograder.checks.base import (Check, Context, ReferenceImplementation, StudentCallError,
                                    rng_for)
from autograder.config.course import CourseConfig
from autograder.diagnosis.advice import decide_advice
from autograder.judge import calls
from autograder.judge import forms, points
from autograder.judge.errors import own_module
from autograder.intake.load import LoadError, SourceFile, load_submission
from autograder.grading.provided import provided_for
from autograder.grading.student_implementation import StudentImplementation
from autograder.results import CheckResult, ExerciseResult, SubmissionResult
from autograder.sandbox import Sandbox
from autograder.sandbox.outcome import Reason
from autograder.variants import variant_for

if TYPE_CHECKING:
    from autograder.diagnosis.explain import Diagnosis
    from autograder.variants.draw import Variant

# The diagnosis (the misconception catalogue and its mutants) and the pictures are imported where
# a check failed, the variants and the integrity flags where the course has variants: a correct or
# untouched submission of a course without them never pays for them (a cold `attnkit check`).

# `identity`'s default: the student's variant is the one of the name the result is given.
OF_STUDENT = "of the student"


def grade_submission(folder: Path, course: CourseConfig, sandbox: Sandbox, *, student: str | None = None,
                     stems: tuple[str, ...] | None = None, only: Collection[str] | None = None,
                     identity: str | None = OF_STUDENT, sources=None) -> SubmissionResult:
    """Every stem of `stems` (default: the course's), with the checks in `only` (default: all).
    With variants on (course.yml `variants:`), graded against the variant of `identity` (default:
    `student`, else the folder's name; None: the course's own numbers), derived here from the
    course and that id, never from what the submission says its numbers are. `sources`: for some
    stems, the loaded file to grade instead of intake's choice (grading/grade.py says when).
    Front ends call grading.grade.grade, which stages the folder first."""
    started = time.monotonic()
    identity = (student or Path(folder).name) if identity is OF_STUDENT else identity
    variant = variant_for(course, identity)
    stems = tuple(course.exercises) if stems is None else stems
    given = dict(sources or {})
    wanted = tuple(s for s in stems if s not in given)
    sources = load_submission(Path(folder), wanted) if wanted else {}
    sources.update((stem, given[stem]) for stem in stems if stem in given)
    sandbox.prepare(getattr(loaded, "source", None) for loaded in sources.values())   # warm zygotes in parallel
    # One budget for the whole submission: a slow one cannot hold the class.
    with sandbox.budget(course.limits.submission_timeout) as budget:
        exercises = tuple(grade_exercise(stem, sources[stem], course, sandbox, folder=Path(folder), only=only,
                                         student=identity) for stem in stems)
    exercises = _stalls_are_the_graders(exercises, budget)
    exercises = tuple(_with_imports_said(e, sources[e.stem], Path(folder)) for e in exercises)
    return SubmissionResult(student=student or Path(folder).name, exercises=exercises,
                            seed=variant.seed if variant is not None else course.seed,
                            assignment=course.assignment, duration_s=round(time.monotonic() - started, 3))


def _with_imports_said(graded: ExerciseResult, loaded: SourceFile | LoadError, folder: Path) -> ExerciseResult:
    """The exercise's note, with the judge's sentence for another exercise it imports whose .py file
    (what Python, and the student's Jupyter, import) is the untouched stub or absent while the
    student's work on it is in another file: the grader gave it a correct one, their kernel did not."""
    from autograder.checks import EXERCISES
    from autograder.intake import facts
    from autograder.intake.files import Flag
    from autograder.intake.load import read_source

    if not isinstance(loaded, SourceFile):
        return graded
    said = []
    beside = folder / Path(loaded.filename).parent
    for sibling in EXERCISES[graded.stem].provided:
        # what the student's code imports and holds is read in the child that parsed it (facts)
        imported = facts.imported_from(str(loaded.source), graded.stem, sibling)
        if not imported:
            continue
        py = beside / f"{sibling}.py"
        text = read_source(py, sibling) if py.is_file() else None
        state = "missing" if text is None else "work" if isinstance(text, LoadError) or facts.has_work(text, sibling) \
            else "stub"
        counted = load_submission(folder, (sibling,))[sibling]
        # several names could be the sibling's (each graded, the better counts): each that holds work
        several = isinstance(counted, LoadError) and Flag.AMBIGUOUS.value in counted.flags
        work = [Path(s.filename).name for s in (candidate_sources(folder, sibling) if several else [counted])
                if isinstance(s, SourceFile) and facts.has_work(str(s.source), sibling)]
        sentence = forms.imported_stub(Path(loaded.filename).name, sibling, imported, state, work)
        if sentence:
            said.append(f"{sentence} (the grader used a correct {sibling})")
    return replace(graded, note="; ".join(filter(None, (graded.note, *said)))) if said else graded


STALLED = 1.0    # s the grader may stand still while grading a submission before its timeouts are doubted


def _stalls_are_the_graders(exercises: tuple[ExerciseResult, ...], budget) -> tuple[ExerciseResult, ...]:
    """Where the grader itself stood still while a submission ran (sandbox Budget.stalled: its
    interpreter held elsewhere, the process stopped), a timeout is not surely the student's: it
    becomes the grader's error, which a rerun grades again instead of keeping."""
    stalled = getattr(budget, "stalled", 0.0)
    if stalled < STALLED:
        return exercises
    said = f"the grader itself stood still for {stalled:.0f} s while this ran; it is graded again on the next run"
    return tuple(replace(e, checks=tuple(
        replace(c, reason="grader_error", message=f"{c.message} ({said})") if c.reason == "timeout" else c
        for c in e.checks)) for e in exercises)


def _flag_published(graded: ExerciseResult, course: CourseConfig) -> ExerciseResult:
    from autograder.integrity.hand_answers import flag_published

    return flag_published(graded, course)


def grade_exercise(stem: str, loaded: SourceFile | LoadError, course: CourseConfig,
                   sandbox: Sandbox, *, only: Collection[str] | None = None,
                   folder: Path | None = None, student: str | None = None) -> ExerciseResult:
    """Grade one stem as intake chose it, on every path (check, watch, the plugin, nbgrader,
    grade, the cluster, Gradescope): intake's flags on the result, a refused file's reason;
    where .py and .ipynb both hold work, the other form graded too and the better kept (or the
    form course.yml names in `both_forms`); where several names in `folder` could be the
    stem's, each graded and the better kept (autograder.intake.candidates); said in the exercise's
    note. `only` restricts it to some of its check ids (an nbgrader test cell, `attnkit check
    --exercise attention.softmax`). `student`: whose variant is graded (variants on; None: the
    course's own numbers)."""
    variant = variant_for(course, student)
    graded = _grade_form(stem, loaded, course, sandbox, only, variant, folder)
    first = replace(_flag_published(graded, course) if variant is not None else graded, flags=tuple(loaded.flags))
    if folder is not None and isinstance(loaded, LoadError) and ambiguous(first):
        each = [grade_exercise(first.stem, source, course, sandbox, only=only, student=student)
                for source in candidate_sources(folder, first.stem)]
        return the_better(first, each)
    if isinstance(loaded, LoadError) and loaded.reason == "refused":
        first = replace(first, checks=tuple(replace(c, reason="refused") if c.reason == "load_error" else c
                                            for c in first.checks))
    alternative = getattr(loaded, "alternative", None)
    if alternative is None:
        return first
    alone = forms.unless_both(course.both_forms, as_graded(first), alternative.filename)
    if alone is not None:
        return replace(first, note=alone)
    second = _grade_form(stem, alternative, course, sandbox, only, variant, folder)
    second = replace(_flag_published(second, course) if variant is not None else second, flags=first.flags)
    keep, note = forms.of_both(course.both_forms, as_graded(first), as_graded(second))
    return replace((first, second)[keep], note=note)


def _names_beside(folder: Path | None, filename: str) -> list[str]:
    """The names in the folder of the student's file (none when the folder is not known)."""
    if folder is None:
        return []
    try:
        return [p.name for p in (Path(folder) / filename).parent.iterdir()]
    except OSError:
        return []


def _grade_form(stem: str, loaded: SourceFile | LoadError, course: CourseConfig, sandbox: Sandbox,
                only: Collection[str] | None, variant: Variant | None = None,
                folder: Path | None = None) -> ExerciseResult:
    """Grade one file of a stem, as it is (`folder`: the student's, where a module of their own
    that the file imports is looked for, to say why it is not there)."""
    checks = [c for c in CHECKS[stem] if only is None or c.id in only]
    title = course.exercises[stem].title
    if isinstance(loaded, LoadError):
        status, reason = ("missing", "missing") if loaded.missing else ("error", "load_error")
        return ExerciseResult(stem, title,
                              tuple(_unanswered(c, course, status, loaded.message, reason) for c in checks),
                              graded_file=loaded.filename, note=loaded.note)
    with ExitStack() as stack:
        session, loaded, skipped, defined_in_skipped = open_session(stack, sandbox, stem, loaded, _provided(stem))
        if session.import_outcome.status != "ok":
            why = f"{loaded.filename} could not be run: {session.import_outcome.message}"
            why += own_module(why, _names_beside(folder, loaded.filename), CHECKS)
            reason = _import_reason(session.import_outcome)
            results = tuple(_unanswered(c, course, "error", why, reason) for c in checks)
        else:
            student = StudentImplementation(session, stem, loaded.filename, defined_in_skipped,
                                            source=loaded.source)
            found: dict[str, Diagnosis | None] = {}
            answers: dict[str, tuple[Any, Context]] = {}
            results = _without_ruled_out(
                _visible_first(checks, course,
                               lambda check: run_check(check, student, course, found, answers, variant)),
                checks, found, answers, course, variant)
    note = "; ".join(n for n in (loaded.note, *skipped) if n)
    return ExerciseResult(stem, title, results, graded_file=loaded.filename, note=note)


@lru_cache(maxsize=None)
def _provided(stem: str) -> dict[str, dict[str, Any]]:
    """The stems a submission file may import, as the reference's own priced functions
    (autograder/grading/provided.py): the sandbox answers the child's calls of them in the grader."""
    return provided_for(stem)


def _visible_first(checks: list[Check], course: CourseConfig, grade) -> tuple[CheckResult, ...]:
    """Grades the visible checks before the hidden ones (results in the checks' order): the child
    may remember what it was given, and after the first hidden check nothing it says is shown."""
    graded: dict[int, CheckResult] = {}
    for hidden in (False, True):
        group = [i for i in range(len(checks)) if course.check(checks[i].id).hidden == hidden]
        graded.update((i, grade(checks[i])) for i in group)
    return tuple(graded[i] for i in range(len(checks)))


def _unanswered(check: Check, course: CourseConfig, status: str, message: str, reason: str = "") -> CheckResult:
    cfg = course.check(check.id)
    return CheckResult(check.id, check.exercise, check.title, status, 0.0, cfg.points, message, hidden=cfg.hidden,
                       reason=reason)


def _import_reason(outcome) -> str:
    """Why a module could not be imported, as a CheckResult.reason, from the sandbox's typed reason."""
    return {Reason.TIMEOUT: "timeout", Reason.CRASHED: "crashed", Reason.MEMORY: "crashed",
            Reason.SANDBOX: "grader_error", Reason.REFUSED: "refused"}.get(outcome.reason, "not_run")


def _expected(check: Check, seed: int, variant: Variant | None = None) -> tuple[dict[str, Any], Any]:
    """Inputs and the reference's answer: the same for every student without variants, so made
    once per run (and once only when several grading threads ask at once). With a
    variant: a random check's inputs come from the variant's seed, the hand computation's from its
    numbers; a check that depends on neither is the same for everyone still."""
    seed, varied = _made_for(check, seed, variant)
    with lock_for(("expected", check.id, seed, varied)):
        # Without a variant, called as it was before variants (one cache entry per check and seed).
        return _expected_made(check, seed) if varied is None else _expected_made(check, seed, varied)


def _made_for(check: Check, seed: int, variant: Variant | None) -> tuple[int, Variant | None]:
    """(the seed, the variant whose numbers are the inputs) that `check`'s expected answer depends on."""
    if variant is None:
        return seed, None
    if check.variant_inputs is not None:
        return seed, variant
    return (variant.seed if check.random else seed), None


def expected_answer(check: Check, seed: int, variant: Variant | None = None) -> tuple[dict[str, Any], Any]:
    """A check's inputs and the reference's answer for them (the handout ships the visible ones)."""
    return _expected(check, seed, variant)


@lru_cache(maxsize=256)
def _expected_made(check: Check, seed: int, variant: Variant | None = None) -> tuple[dict[str, Any], Any]:
    inputs = check.variant_inputs(variant) if variant is not None else check.inputs(rng_for(seed, check.id))
    make = check.expected_run or check.run

    def answer():
        return make(ReferenceImplementation(check.exercise), inputs)

    if needs_torch(check.exercise) and variant is None:     # kept on disk: a reference that may import torch
        return inputs, stored_answer(check.id, seed, answer)
    return inputs, answer()


def run_check(check: Check, student: StudentImplementation, course: CourseConfig,
              diagnoses: dict[str, Diagnosis | None] | None = None,
              answers: dict[str, tuple[Any, Context]] | None = None, variant: Variant | None = None) -> CheckResult:
    """`diagnoses`, when given, receives the check's Diagnosis, and `answers` a wrong answer with
    its Context (for `_without_ruled_out`: the student's own results weigh the explanations);
    `variant`: the student's, whose numbers and seed the check's inputs come from."""
    cfg = course.check(check.id)
    inputs, expected = _expected(check, course.seed, variant)

    def result(status, message="", found=None, reason=""):
        if diagnoses is not None:
            diagnoses[check.id] = found
        score = points.earned(status, cfg.points)
        # the hint and the ids recorded come from one value: every hint shown is counted
        advice = decide_advice(check, status, found, course, hidden=cfg.hidden, raised=reason == "raised")
        return CheckResult(check.id, check.exercise, check.title, status, score, cfg.points, message, advice.text,
                           advice.recorded, cfg.hidden, reason)

    student.dtypes.clear()
    try:
        answer = check.run(student, inputs)
    except StudentCallError as err:
        status = calls.check_status(err.status)
        found = None
        if err.error is not None and course.hints != "off":
            from autograder.diagnosis.explain import diagnose_error

            from autograder.diagnosis.explain import in_source

            found = in_source(diagnose_error(check, inputs, err.error), check, getattr(student, "source", None))
        return result(status, err.message, found, "" if err.status == "not_implemented" else err.status)
    except (TypeError, ValueError, IndexError) as err:
        # The answer had the wrong structure for the check to unpack (e.g. one array instead of two).
        return result("failed", f"the returned value has the wrong structure: {err}")
    ctx = Context(course=course, inputs=inputs, dtypes=set(student.dtypes))
    try:
        problems = check.compare(answer, expected, ctx)
    except calls.COMPARISON_ERRORS as err:
        problems = [calls.not_comparable(err)]
    if not problems:
        return result("passed")
    if answers is not None:
        answers[check.id] = (answer, ctx)
    from autograder.diagnosis.explain import diagnose, in_source
    from autograder.reports.pictures import picture_data

    found = in_source(diagnose(check, inputs, answer, ctx, expected), check, getattr(student, "source", None)) if course.hints != "off" else None
    visual = picture_data(check.id, answer, expected, inputs)   # for the feedback page's pictures
    failed = replace(result("failed", "; ".join(problems), found), visual=visual)
    if variant is not None and check.variant_inputs is not None:
        from autograder.integrity.hand_answers import keep_answer

        failed = keep_answer(failed, answer)     # for the integrity flags (autograder/integrity)
    return failed


def _without_ruled_out(results: tuple[CheckResult, ...], checks: list[Check], found: dict[str, Diagnosis | None],
                       answers: dict[str, tuple[Any, Context]], course: CourseConfig,
                       variant: Variant | None = None) -> tuple[CheckResult, ...]:
    """A check that names several explanations keeps only those the student's own results allow, and
    an exercise that reads its checks' answers together explains them so (explain.weighed)."""
    if course.hints == "off" or all(r.passed for r in results):
        return results
    from autograder.diagnosis.explain import Record, weighed, weighs_together

    if all(len(r.misconceptions) <= 1 for r in results) and not weighs_together(checks):
        return results

    by_id = {c.id: c for c in checks}
    record = Record(passed=tuple(c for c, r in zip(checks, results) if r.passed),
                    failed={cid: (by_id[cid], *answered) for cid, answered in answers.items()},
                    graded=tuple(checks))

    def expected_of(check):
        inputs, expected = _expected(check, course.seed, variant)
        return inputs, expected, Context(course=course, inputs=inputs)

    visible = frozenset(c.id for c in checks if not course.check(c.id).hidden)
    told = weighed(found, record, expected_of, visible)
    out = []
    for check, r in zip(checks, results):
        before = found.get(check.id)
        after = told.get(check.id, before)
        if after is not before and not r.passed:
            advice = decide_advice(check, r.status, after, course, hidden=course.check(check.id).hidden,
                                   raised=r.reason == "raised")
            r = replace(r, misconceptions=advice.recorded, hint=advice.text)
        out.append(r)
    return tuple(out)
