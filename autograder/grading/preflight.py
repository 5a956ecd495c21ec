"""Before a class is graded: the kit's own solutions, in the sandbox that will grade it.

A sandbox that cannot see part of the Python environment (a virtualenv the jail hid, a font, a
module imported lazily) takes points from right answers without any error. So before the
first grade is written, the solutions are graded in the same sandbox with the course's limits
(a local class run grades its first students on its other lanes meanwhile, and holds their
results until it passes); below full marks, the run stops, writes no grade, and says which
checks lost what (their messages name the file or
module the sandbox could not see). The solutions are also packed as a `.tar.gz` and a `.zip` and
unpacked as a student's upload is (in the grader's bounded parser, autograder/intake/archives.py):
an interpreter that cannot open them (a Python built without zlib, a tarfile the kit cannot use)
would otherwise refuse every honest archive as the student's fault. A pass is remembered per
kit, course, solutions and environment, so a warm run pays a few hashes. `--no-preflight` skips
it, and the run's summary says so.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
import os
import platform
import sys
import time
from dataclasses import dataclass
from enum import Enum
from pathlib import Path

from autograder.config import KIT_DATA
from autograder.config.course import CourseConfig, course_json
from autograder.intake import SOURCE_SUFFIXES

SOLUTIONS = KIT_DATA / "solutions"
ENVIRONMENT_PACKAGES = ("numpy", "torch", "matplotlib", "pyseccomp")


class PreflightStatus(str, Enum):
    PASSED = "passed"              # graded now, full marks
    PASSED_BEFORE = "passed before"   # the same kit, course, solutions and environment passed
    SKIPPED = "skipped"            # --no-preflight
    NO_SOLUTIONS = "no solutions"  # a kit installed without its solutions/ folder
    NOT_NEEDED = "not needed"      # nothing was graded in this run: every result was reused
    NO_SANDBOX = "no sandbox"      # the sandbox could not start: every submission says why
    ON_EACH_WORKER = "passed on each worker"   # a Dask run: each worker checked before its first task


@dataclass(frozen=True)
class Preflight:
    status: PreflightStatus
    seconds: float = 0.0

    def describe(self) -> str:
        return {
            PreflightStatus.PASSED: f"preflight: the course's solutions scored full marks in the sandbox "
                                    f"({self.seconds:.1f} s)",
            PreflightStatus.PASSED_BEFORE: "preflight: the course's solutions scored full marks in this environment "
                                           "before (same kit, course and Python)",
            PreflightStatus.SKIPPED: "preflight skipped (--no-preflight): the sandbox was not tried on the "
                                     "course's solutions first",
            PreflightStatus.NO_SOLUTIONS: "preflight not run: this installation of the kit has no solutions/ "
                                          "folder to try the sandbox on",
            PreflightStatus.ON_EACH_WORKER: "preflight: each worker graded the course's solutions at full marks "
                                            "in its sandbox before its first submission",
            PreflightStatus.NO_SANDBOX: "preflight not run: the sandbox could not be started (each "
                                        "submission's result says why)",
            PreflightStatus.NOT_NEEDED: "preflight not needed: no submission was graded in this run (every "
                                        "result was reused)",
        }[self.status]

    def to_dict(self) -> dict:
        return {"status": self.status.value, "seconds": round(self.seconds, 3), "says": self.describe()}


class PreflightFailed(Exception):
    """The solutions lost points in this sandbox: grading students here would be wrong."""

    def __init__(self, score: float, max_score: float, lost: list[tuple[str, str]]):
        self.score, self.max_score, self.lost = score, max_score, lost
        lines = [f"preflight failed: the course's own solutions score {score:g}/{max_score:g} in this sandbox, "
                 f"so it would take points from right answers; no grade was written."]
        by_message: dict[str, list[str]] = {}
        for check_id, message in lost:      # one line per cause, not one per check it cost
            by_message.setdefault(message, []).append(check_id)
        for message, ids in by_message.items():
            more = f" and {len(ids) - 2} more" if len(ids) > 2 else ""
            lines.append(f"  {', '.join(ids[:2])}{more}: {message}")
        lines.append("The sandbox cannot see part of this Python environment or its limits are too tight for "
                     "correct code (docs/security.md says what the jail mounts where). Fix that, or pass "
                     "--no-preflight to grade anyway.")
        super().__init__("\n".join(lines))


class EnvironmentNotReady(PreflightFailed):
    """The sandbox cannot start what the exercises need (a module not installed): one sentence."""

    def __init__(self, sentence: str):
        self.score, self.max_score, self.lost = 0.0, 0.0, []
        Exception.__init__(self, f"the sandbox cannot grade here: {sentence}. No grade was written "
                                 f"(`attnkit doctor` shows what the sandbox sees).")


class ArchivesUnusable(PreflightFailed):
    """The grader cannot unpack an archive of the kit's own solutions: one sentence, why."""

    def __init__(self, why: str):
        self.score, self.max_score, self.lost, self.why = 0.0, 0.0, [], why
        Exception.__init__(self, f"preflight failed: this grader cannot unpack an archive of the course's own "
                                 f"solutions ({why}), so every student who uploads a .zip or .tar.gz would lose "
                                 f"points for it; no grade was written. `attnkit doctor` says the same; grade "
                                 f"with a Python that has zlib and a working tarfile, or pass --no-preflight to "
                                 f"grade anyway.")


ARCHIVE_FORMS = ("solutions.tar.gz", "solutions.zip")


def archives_unpack(course: CourseConfig, solutions: Path = SOLUTIONS) -> str:
    """The course's solutions packed as each of ARCHIVE_FORMS and unpacked as a student's upload is;
    ArchivesUnusable unless every one gives the files back byte for byte. Returns what unpacked
    its tars (tar_filter: tarfile's own data filter, or the kit's rules where it lacks one)."""
    import tempfile

    from autograder.intake import archives, tar_filter

    files = {}
    for stem in course.exercises:
        path = next((solutions / f"{stem}{s}" for s in SOURCE_SUFFIXES if (solutions / f"{stem}{s}").is_file()), None)
        if path is not None:
            files[path.name] = path.read_bytes()
    with tempfile.TemporaryDirectory(prefix="attnkit-preflight-") as tmp:
        for form in ARCHIVE_FORMS:
            packed, dest = os.path.join(tmp, form), os.path.join(tmp, form + ".unpacked")
            os.mkdir(dest, 0o700)
            try:
                _pack(packed, files)
                archives.extract(packed, form, dest, archives.Budget())
            except Exception as err:  # noqa: BLE001 - whatever it is, students would pay for it
                raise ArchivesUnusable(f"{form}: {err}") from None
            back = {name: Path(dest, name).read_bytes() for name in os.listdir(dest)
                    if Path(dest, name).is_file()}
            if back != files:
                raise ArchivesUnusable(f"{form} unpacked to {sorted(back)}, not the {len(files)} files packed")
    return "tarfile's data filter" if tar_filter.NATIVE else "the kit's data filter (this Python's tarfile has none)"


def _pack(path: str, files: dict[str, bytes]) -> None:
    import io
    import tarfile
    import zipfile

    if path.endswith(".zip"):
        with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
            for name, data in files.items():
                zf.writestr(name, data)
        return
    with tarfile.open(path, "w:gz") as tar:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size, info.mode = len(data), 0o644
            tar.addfile(info, io.BytesIO(data))


def sandbox_ready(course: CourseConfig, sandbox, solutions: Path = SOLUTIONS) -> None:
    """Starts the zygotes the course's files need; EnvironmentNotReady where a module the
    exercises import is missing, before any submission is graded."""
    from autograder.sandbox.interpreter import MissingModule
    from autograder.sandbox.zygotes import needs

    for wanted in sorted({needs(source) for source in solution_sources(course, solutions)}, reverse=True):
        try:
            sandbox.zygotes.get(wanted)
        except MissingModule as err:
            raise EnvironmentNotReady(str(err)) from None


def run_preflight(course: CourseConfig, sandbox, *, enabled: bool = True,
                  solutions: Path = SOLUTIONS) -> Preflight:
    """Grade `solutions` in `sandbox`; raise PreflightFailed below full marks."""
    known = preflight_known(course, sandbox, enabled=enabled, solutions=solutions)
    return known if known is not None else grade_preflight(course, sandbox, solutions=solutions)


def preflight_known(course: CourseConfig, sandbox, *, enabled: bool = True,
                    solutions: Path = SOLUTIONS) -> Preflight | None:
    """The preflight's outcome where nothing needs grading (skipped, no solutions, passed
    before); None where the solutions must be graded."""
    if not enabled:
        return Preflight(PreflightStatus.SKIPPED)
    stems = tuple(course.exercises)
    if not all(any((solutions / f"{stem}{suffix}").is_file() for suffix in SOURCE_SUFFIXES) for stem in stems):
        return Preflight(PreflightStatus.NO_SOLUTIONS)
    if _marker(course, solutions, sandbox).is_file():
        return Preflight(PreflightStatus.PASSED_BEFORE)
    return None


def grade_preflight(course: CourseConfig, sandbox, *, solutions: Path = SOLUTIONS) -> Preflight:
    """The solutions graded in `sandbox`, remembered at full marks; PreflightFailed below."""
    from autograder.grading.grade import grade

    started = time.monotonic()
    archives_unpack(course, solutions)
    sandbox_ready(course, sandbox, solutions)
    # The kit's solutions hold the answers for the course's own numbers: no student's variant.
    result = grade(solutions, course, sandbox, name="preflight", identity=None)
    lost = [(c.check_id, _first_line(c.message)) for c in result.checks if c.score < c.max_score]
    if lost or result.score < result.max_score:
        raise PreflightFailed(result.score, result.max_score, lost)
    _remember(_marker(course, solutions, sandbox))
    return Preflight(PreflightStatus.PASSED, time.monotonic() - started)


def solution_sources(course: CourseConfig, solutions: Path = SOLUTIONS) -> list:
    """The sources of the kit's solutions to the course's exercises (none where the kit has no
    solutions/ folder): what a class's files will need of a sandbox, known before any student's."""
    from autograder.intake.load import load_submission

    if not solutions.is_dir():
        return []
    loaded = load_submission(solutions, tuple(course.exercises)).values()
    return [source.source for source in loaded if getattr(source, "source", None) is not None]


def _first_line(message: str, limit: int = 400) -> str:
    line = (message or "").strip().splitlines()[0] if (message or "").strip() else "(no message)"
    return line if len(line) <= limit else line[:limit] + "..."


def _marker(course: CourseConfig, solutions: Path, sandbox) -> Path:
    """The file whose presence says this kit, course, solutions and environment passed."""
    from autograder.config import cache_dir
    from autograder.grading.student import kit_fingerprint

    h = hashlib.sha256(b"preflight/1")
    h.update(kit_fingerprint().encode())
    h.update(course_json(course).encode())
    for path in sorted(solutions.iterdir()):
        if path.is_file() and path.suffix in SOURCE_SUFFIXES:
            h.update(path.name.encode() + b"\0" + path.read_bytes())
    h.update(json.dumps(_environment(sandbox), sort_keys=True).encode())
    return cache_dir("preflight") / h.hexdigest()


def _environment(sandbox) -> dict:
    """What the sandbox's view of Python depends on besides the kit and the course."""
    versions = {}
    for name in ENVIRONMENT_PACKAGES:
        try:
            versions[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            versions[name] = None
    return {"executable": os.path.realpath(sys.executable), "python": sys.version, "prefix": sys.prefix,
            "path": sys.path, "uid": os.geteuid(), "kernel": platform.release(), "versions": versions,
            "isolation": sandbox.isolation.describe()}


def _remember(marker: Path) -> None:
    try:
        marker.parent.mkdir(parents=True, exist_ok=True)
        marker.write_text(time.strftime("%Y-%m-%dT%H:%M:%S%z") + "\n", encoding="utf-8")
    except OSError:
        pass    # only a saving for the next run
