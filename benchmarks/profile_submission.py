"""Where the core-seconds of grading one correct submission go (`attnkit grade`'s unit of work).

    python benchmarks/profile_submission.py               # the solutions, 20 repetitions
    python benchmarks/profile_submission.py --submission DIR --repeat 10
    python benchmarks/profile_submission.py --name profile-before   # the record's name

Core-seconds, not wall time, so the figures hold on a busy machine. Each is charged where it
is spent: the grader process (its own CPU time), each zygote (its own CPU time, from /proc),
and the sandbox's children (their cgroup's cpuacct counter, every process of the child
included: init, worker, whatever the student forks). Without writable cgroups the
children's share is not measured and says so.

  once per grader process     python + the grader's imports; each zygote's start (its imports)
  once per child (a stem)     fork of the zygote image, namespaces, jail, limits, an empty module
  per exercise graded         the student's code (the scaling experiment's arithmetic, the figure)
                              in the child; the checks' calls, conversions, comparisons in the
                              grader; reference answers are made once per process (cached)
  per submission              reading and staging: the student's folder listed, staged and parsed,
                              the facts the sandbox needs found, in a child of the parse helper
                              charged to the student's account (the account's cpu_seconds), the
                              grader's own share (asking, decoding the answer) and the helper's
                              (the fork server's own CPU time, from /proc); in a class run the
                              same child fingerprints the graded code, and the similarity pass's
                              share (what it reads again: nothing for such a submission) apart
  per submission              the submission's own steps in the grader, above its exercises' gradings
                              (what a note says of a sibling it imports, the budget, the stalls)
  per submission              the result file, the feedback page (Markdown, HTML, pictures)
  per wrong answer            diagnosis (the mutants' answers), on a buggy submission: its first
                              grading, then each exercise of the submission with it, cached

At the end, the phases the correct submission's cost splits into (`phases`): the student's code
(the children's share above an empty child's), the kit's process set-up (an empty child per
exercise: fork, jail, limits), reading and staging, the reference and comparison (the grader's
share of the gradings above an empty child's), diagnosis (none for a correct submission: the
buggy one's extra cost is beside it), and writing results.

Writes the figures to benchmarks/results/profile_submission.json (`--name`: another name). This
is a benchmark, not a test: nothing is asserted.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

KIT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(KIT))

from benchmarks import record  # noqa: E402
from benchmarks.cpu_meter import HEADER, Meter, as_ms, own_cpu, process_cpu, row  # noqa: E402

def fresh_imports(repeat: int) -> float:
    """Median core-seconds of a fresh interpreter importing what `attnkit grade` imports."""
    code = ("import sys; sys.path.insert(0, %r)\n"
            "from autograder.grading.local_grading import grade_class\n"
            "from autograder.checks import check_ids\n"
            "from autograder.config import load_course\n"
            "load_course(known_checks=check_ids())\n") % str(KIT)
    runs = []
    for _ in range(repeat):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        subprocess.run([sys.executable, "-c", code], check=True)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        runs.append(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
    return statistics.median(runs)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--submission", type=Path, default=KIT / "solutions")
    p.add_argument("--buggy", type=Path,
                   default=KIT / "tests" / "corpus" / "attention" / "buggy" / "softmax_wrong_axis.py",
                   help="a buggy attention.py, graded to show what diagnosis and pictures cost")
    p.add_argument("--repeat", type=int, default=20)
    p.add_argument("--name", default="profile_submission", help="the record's name in benchmarks/results")
    args = p.parse_args(argv)
    if "ATTNKIT_CACHE_DIR" not in os.environ:      # a cache of its own, removed at the end
        cache = tempfile.TemporaryDirectory(prefix="attnkit-profile-cache-")
        os.environ["ATTNKIT_CACHE_DIR"] = cache.name

    from autograder.checks import check_ids
    from autograder.config import load_course
    from autograder.grading.submission import _expected, grade_exercise, grade_submission
    from autograder.intake.load import load_stem
    from autograder.reports.feedback import feedback_markdown
    from autograder.reports.feedback_html import feedback_html
    from autograder.grading.student import result_text
    from autograder.grading.grade import grading_sandbox
    from autograder.sandbox.zygotes import needs as zygote_needs

    course = load_course(known_checks=check_ids())
    folder = args.submission.resolve()
    n = args.repeat
    print(f"one correct submission ({args.submission}); load average {os.getloadavg()[0]:.1f}")
    imports = fresh_imports(3)
    print(f"\nonce per grader process: python + the grader's imports {imports:.2f} core-s "
          f"(a fresh interpreter, median of 3)")
    figures: dict = {"repeat": n, "imports_core_s": imports}

    sandbox = grading_sandbox(course.limits, many=True)       # as `attnkit grade`'s lanes have it
    with sandbox:
        meter = Meter(sandbox)
        counted = meter.counts_children
        starts: dict[str, float] = {}
        for label, source in (("numpy", "import os\nx = 1\n"), ("matplotlib", "import matplotlib\nx = 1\n"),
                              ("torch (with matplotlib)", "import torch\nimport matplotlib\nx = 1\n")):
            started = time.monotonic()
            with sandbox.session("attention", source, "attention.py") as s:
                s.attribute("x", returns="array")
            needs = sandbox.zygotes.serving(zygote_needs(sandbox.reader((source,)).imports))
            starts[label] = (process_cpu(sandbox.zygotes.by_needs[needs].pid), time.monotonic() - started)
        print("  zygote start (its imports, warm-up, jail): " + "; ".join(
            f"{k} {cpu:.2f} core-s ({wall:.1f} s wall)" for k, (cpu, wall) in starts.items()))
        from autograder.checks import CHECKS

        before = own_cpu()
        for check in (c for checks in CHECKS.values() for c in checks):
            _expected(check, course.seed)      # reference answers: once per process, not per submission
        cache = "an empty cache: made, torch imported" if "torch" in sys.modules else "read from the cache"
        print(f"  reference answers of every check ({cache}): {own_cpu() - before:.2f} core-s")
        figures["zygote_start"] = {k: {"core_s": cpu, "wall_s": wall} for k, (cpu, wall) in starts.items()}
        figures["reference_answers"] = {"core_s": own_cpu() - before, "cache": cache}
        grade_submission(folder, course, sandbox)

        per: dict[str, tuple] = {}
        print(f"\nper child, {n} empty children each (fork of the zygote image, namespaces, jail, limits):")
        print(HEADER)
        # `import os`: a file of literals alone is read, not run (autograder/sandbox/literals.py)
        for label, source in (("numpy zygote", "import os\nx = 1\n"),
                              ("matplotlib zygote", "import matplotlib\nx = 1\n"),
                              ("torch zygote", "import torch\nimport matplotlib\nx = 1\n")):
            with meter.measure(per, label, n):
                for _ in range(n):
                    with sandbox.session("attention", source, "attention.py") as s:
                        s.attribute("x", returns="array")
            print(row(label, per[label], counted))
        figures["empty_child"] = {label: as_ms(f, counted) for label, f in per.items()}

        print(f"\nper exercise of the correct submission, mean of {n} gradings (the child's share includes "
              f"its start above):")
        loaded = {stem: load_stem(folder, stem) for stem in course.exercises}
        figures["correct"] = _per_exercise(meter, loaded, course, sandbox, n)
        whole: dict[str, tuple] = {}
        with meter.measure(whole, "submission", n):
            for _ in range(n):
                grade_submission(folder, course, sandbox, sources=loaded)
        print(row("graded as one submission (its own steps too)", whole["submission"], counted))
        figures["correct_as_submission"] = as_ms(whole["submission"], counted)

        scaling = _scaling_parts(sandbox, meter, loaded["scaling"], n)
        print("\n  of which scaling's own code in its child (separate calls, one child each):")
        for label, parts in scaling.items():
            print(row("  " + label, parts, counted))
        figures["scaling_parts"] = {label: as_ms(parts, counted) for label, parts in scaling.items()}

        figures["reading"] = _reading(folder, course, sandbox, n)

        result = grade_submission(folder, course, sandbox)
        reports: dict[str, tuple] = {}
        with meter.measure(reports, "reports", n):
            for _ in range(n):
                result_text(result, "x", course)
                feedback_markdown(result, course)
                feedback_html(result, course)
        print("\nper submission, the grader's reports (result JSON, feedback Markdown and HTML):")
        print(row("reports of the correct submission", reports["reports"], counted))
        figures["reports"] = as_ms(reports["reports"], counted)

        buggy = [args.buggy] if args.buggy.is_file() else []
        if buggy:
            import shutil

            with tempfile.TemporaryDirectory() as tmp:
                mixed = Path(tmp) / "submission"        # the correct submission, its attention.py buggy
                shutil.copytree(folder, mixed, ignore=shutil.ignore_patterns("attention.*"))
                shutil.copy(buggy[0], mixed / "attention.py")
                wrong = load_stem(mixed, "attention")
                mixed_loaded = {stem: load_stem(mixed, stem) for stem in course.exercises}
                first: dict[str, tuple] = {}
                with meter.measure(first, "first"):
                    graded_wrong = grade_exercise("attention", wrong, course, sandbox)
                again: dict[str, tuple] = {}
                with meter.measure(again, "again", 3):
                    for _ in range(3):
                        grade_exercise("attention", wrong, course, sandbox)
                html: dict[str, tuple] = {}
                from autograder.results import SubmissionResult

                page = SubmissionResult(student="x", exercises=(graded_wrong,), seed=course.seed,
                                        assignment=course.assignment)
                with meter.measure(html, "html"):
                    feedback_html(page, course)
            print(f"\na buggy attention.py ({buggy[0].name}): diagnosis runs the mutants (first time in a process) "
                  f"and the feedback page draws pictures:")
            print(HEADER)
            print(row("graded, first time (mutants' answers made)", first["first"], counted))
            print(row("graded again (mutants' answers cached)", again["again"], counted))
            print(row("its feedback page with pictures", html["html"], counted))
            print(f"\nper exercise of the submission above with that attention.py (diagnosis cached), mean of "
                  f"{n} gradings:")
            figures["buggy"] = {"file": buggy[0].name, "first": as_ms(first["first"], counted),
                                "again": as_ms(again["again"], counted), "feedback_html": as_ms(html["html"], counted),
                                "per_exercise": _per_exercise(meter, mixed_loaded, course, sandbox, n)}
    if not counted:
        print("\n(no writable cgroups: the children's share is not measured here)")
    figures["children_counted"] = counted
    figures["phases"] = _phases(figures, loaded, counted)
    print("\nwhere a correct submission's core-ms go (per submission; the zygotes' starts and the reference "
          "answers are paid once per grader process):")
    for phase, ms in figures["phases"].items():
        print(f"  {phase:58s} {ms:7.0f}" if ms is not None else f"  {phase:58s}       ?")
    correct_s = figures["correct"]["all five"]["total_ms"] / 1000
    headline = [record.figure("a correct submission, graded", correct_s, "core-s",
                              target="at most 0.3 core-s (0.2 the goal)")]
    if "buggy" in figures:
        buggy_s = figures["buggy"]["per_exercise"]["all five"]["total_ms"] / 1000
        headline.append(record.figure("a buggy one, its diagnosis cached", buggy_s, "core-s",
                                      anchor="the correct one", anchor_value=correct_s, ratio=buggy_s / correct_s,
                                      ratio_is="value / anchor"))
    reading_ms = figures["phases"]["reading and staging (grading)"]
    headline.append(record.figure("its reading and staging (grading's, in the parse helper's child)",
                                  reading_ms, "core-ms"))
    headline.append(record.figure("the similarity pass's reading of it", figures["phases"][SIMILARITY], "core-ms"))
    record.write(args.name, figures, headline=headline)
    return 0


def _per_exercise(meter: Meter, loaded: dict, course, sandbox, n: int) -> dict:
    """One row per exercise (the mean of n gradings) and their sum, the submission's cost; returns
    them in milliseconds, by exercise and "all five"."""
    from autograder.grading.submission import grade_exercise

    print(HEADER)
    graded: dict[str, tuple] = {}
    for stem in course.exercises:
        with meter.measure(graded, stem, n):
            for _ in range(n):
                grade_exercise(stem, loaded[stem], course, sandbox)
        print(row(stem, graded[stem], meter.counts_children))
    total = tuple(sum(v[i] for v in graded.values()) for i in range(4))
    print(row("all five", total, meter.counts_children))
    return {**{stem: as_ms(f, meter.counts_children) for stem, f in graded.items()},
            "all five": as_ms(total, meter.counts_children)}


def _helper_cpu() -> float:
    """The parse helper's own CPU time (the fork server: accepting, forking, reaping), not its children's."""
    from autograder.intake import bounded

    proc = bounded.HELPER._proc
    return process_cpu(proc.pid) if proc is not None else 0.0


def _similarity_helper_cpu() -> float:
    from autograder.integrity import class_code

    proc = class_code.HELPER._proc
    return process_cpu(proc.pid) if proc is not None else 0.0


def _reading(folder: Path, course, sandbox, n: int) -> dict:
    """Reading and staging one submission as `grade` does it in a class run (the folder opened
    without following links, staged, loaded and fingerprinted in one bounded child charged to the
    student's account), and the similarity pass's share (ClassCode.add: what grading's reading
    made, taken; a file read again only when it is not there); mean of n. In milliseconds: the
    helpers' children (the accounts' cpu_seconds), the helpers' own share, the grader's."""
    from autograder.grading.grade import grade
    from autograder.intake import budget
    from autograder.intake.students import Student
    from autograder.integrity.class_code import ClassCode

    student = Student(folder.name, folder)
    wanted = tuple(course.exercises)
    out: dict = {}
    result = grade(student, course, sandbox)
    held = budget.Accounts(course.limits.intake)
    code = ClassCode(wanted, accounts=held)     # a class run's: grading's reading fingerprints too
    warm = held.of("warm-up")
    _read_as_graded(folder, student, wanted, warm)          # the helpers started: once per grader process
    code.add(Student("warm-up", folder), result)
    accounts = [held.of(f"student-{i}") for i in range(n)]
    helpers_before, before = _helper_cpu() + _similarity_helper_cpu(), own_cpu()
    for account in accounts:
        _read_as_graded(folder, student, wanted, account)
    out["grading"] = {"children_ms": 1000 * sum(a.cpu_seconds for a in accounts) / n,
                      "helper_ms": 1000 * (_helper_cpu() + _similarity_helper_cpu() - helpers_before) / n,
                      "grader_ms": 1000 * (own_cpu() - before) / n}

    spent = [a.cpu_seconds for a in accounts]
    helper_before, before = _similarity_helper_cpu(), own_cpu()
    for i in range(n):
        code.add(Student(f"student-{i}", folder), result)
    out["similarity"] = {"children_ms": 1000 * sum(a.cpu_seconds - s for a, s in zip(accounts, spent)) / n,
                         "helper_ms": 1000 * (_similarity_helper_cpu() - helper_before) / n,
                         "grader_ms": 1000 * (own_cpu() - before) / n}
    print(f"\nper submission, reading and staging, mean of {n} (children: the helper's children, charged to the "
          f"student's account; helper: the fork server's own):")
    print(f"  {'':44s} {'grader':>7s} {'helper':>7s} {'child':>7s} {'total':>7s}   (ms)")
    for label, key in (("grading's reading (staged, loaded, facts, prints)", "grading"),
                       ("similarity pass's (what grading made, taken)", "similarity")):
        f = out[key]
        f["total_ms"] = f["grader_ms"] + f["helper_ms"] + f["children_ms"]
        print(f"  {label:44s} {f['grader_ms']:7.0f} {f['helper_ms']:7.0f} {f['children_ms']:7.0f} {f['total_ms']:7.0f}")
    return out


def _read_as_graded(folder: Path, student, wanted: tuple[str, ...], account) -> None:
    """One reading of the submission as `grade` does it in a class run (intake/staging.py, with the
    account's reader), what it made kept in the account."""
    from autograder.intake import budget, staging
    from autograder.intake.students import open_confined

    fd = open_confined(folder)
    try:
        with budget.charging(account), \
                staging.read(Path(f"/proc/self/fd/{fd}"), student, wanted, account.reader) as found:
            assert all(not hasattr(s, "message") for s in found.sources.values()), found.sources
        account.made = found.more
    finally:
        os.close(fd)


SIMILARITY = "reading for the similarity signal (a class run)"
SUBMISSION_STEPS = "the submission's own steps (the grader, above its exercises: notes, budget)"


def _phases(figures: dict, loaded: dict, counted: bool) -> dict:
    """The correct submission's core-ms by phase (None: not measured here). Each exercise's child is
    set against an empty child of the zygote it runs in; an exercise that started none (a file of
    literals is read, not run) has no set-up."""
    from autograder.intake import facts
    from autograder.sandbox.zygotes import needs_of

    empty = figures["empty_child"]
    setup_child = setup_grader = 0.0
    for stem, source in loaded.items():
        if counted and figures["correct"][stem]["child_ms"] < 1:
            continue
        texts = tuple(c.runnable or c.source for c in source.cells) or (str(source.source),)
        torch, matplotlib = needs_of(facts.of(texts).imports)
        row = empty["torch zygote" if torch else "matplotlib zygote" if matplotlib else "numpy zygote"]
        setup_child += row["zygote_ms"] + (row["child_ms"] or 0.0)
        setup_grader += row["grader_ms"]
    every = figures["correct"]["all five"]
    reading = figures["reading"]
    own = (every["child_ms"] + every["zygote_ms"] - setup_child) if counted else None
    return {"the student's code (children, above an empty child)": own,
            "the kit's process set-up (an empty child per exercise)": setup_child + setup_grader,
            "reading and staging (grading)": reading["grading"]["total_ms"],
            "reference and comparison (the grader, above an empty child)": every["grader_ms"] - setup_grader,
            SUBMISSION_STEPS: max(0.0, figures["correct_as_submission"]["grader_ms"] - every["grader_ms"]),
            "diagnosis (none for a correct submission)": 0.0,
            "writing results (result file, feedback pages)": figures["reports"]["total_ms"],
            SIMILARITY: reading["similarity"]["total_ms"]}


def _scaling_parts(sandbox, meter: Meter, loaded, n: int) -> dict[str, tuple]:
    """The scaling experiment's calls and the figure, each in a child of its own."""
    from autograder.checks.scaling import DEFAULT, OTHER, _figure_inputs

    results = _figure_inputs(None)["results"]
    calls = {"empty child (matplotlib zygote)": [],
             "experiment, default args (500 trials)": [("scaling_experiment", dict(DEFAULT))],
             "experiment, other dims (500 trials)": [("scaling_experiment", dict(OTHER))],
             "plot_scaling + describing its figure": [("plot_scaling", results)]}
    from autograder.grading.submission import _provided

    out: dict[str, tuple] = {}
    source = [c.as_dict() for c in loaded.cells] if loaded.cells else loaded.source
    for label, todo in calls.items():
        with meter.measure(out, label, n):
            for _ in range(n):
                with sandbox.session("scaling", source, loaded.filename, provided=_provided("scaling")) as s:
                    for name, arg in todo:
                        if name == "plot_scaling":
                            s.call(name, [arg], returns="figure")
                        else:
                            s.call(name, [], arg, returns="float_dict_dict")
    return out


if __name__ == "__main__":
    sys.exit(main())
