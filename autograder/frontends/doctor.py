"""`attnkit doctor`: can this Python grade, and how safely? Said on one screen before any student
pays for it.

It starts a real sandbox (the zygotes the exercises need), prints the interpreter, whether a
student's .tar.gz and .zip unpack here, where numpy, torch and matplotlib are found inside the
sandbox, which isolation layers hold, and grades the kit's solutions in it. Exit 0 where the solutions score full marks, 1 where anything would cost a
student points (a missing module is named with the command that installs it).
"""

from __future__ import annotations

import os
import sys
import time
from dataclasses import dataclass, field

from autograder.config.course import CourseConfig
from autograder.sandbox.interpreter import install_command, site_dirs

SANDBOX_MODULES = ("numpy", "torch", "matplotlib")


@dataclass
class Finding:
    label: str
    text: str
    ok: bool = True


@dataclass
class Diagnosis:
    findings: list[Finding] = field(default_factory=list)

    @property
    def ready(self) -> bool:
        return all(f.ok for f in self.findings)

    def add(self, label: str, text: str, ok: bool = True) -> None:
        self.findings.append(Finding(label, text, ok))


def interpreter_line() -> str:
    kind = "a virtual environment" if sys.prefix != sys.base_prefix else "no virtual environment"
    return f"Python {sys.version.split()[0]} at {sys.executable} ({kind}; prefix {sys.prefix})"


def examine(course: CourseConfig, *, isolation: bool = True, grade_solutions: bool = True) -> Diagnosis:
    """Every finding, the sandbox started for real; nothing raised for what a user can fix."""
    from autograder import __file__ as kit_file
    from autograder.grading.grade import grading_sandbox
    from autograder.sandbox import SandboxError

    found = Diagnosis()
    found.add("python", interpreter_line())
    found.add("kit", f"attnkit from {os.path.dirname(os.path.dirname(os.path.abspath(kit_file)))}")
    found.add("site", ", ".join(site_dirs()) or "(none)")
    found.findings.append(_archives(course))
    try:
        sandbox = grading_sandbox(course.limits)
    except (SandboxError, OSError) as err:
        found.add("sandbox", f"could not be made: {err}", ok=False)
        return found
    with sandbox:
        zygote = None
        try:
            zygote = sandbox.zygotes.get((True, True))    # imports numpy, torch and matplotlib
        except SandboxError as err:
            found.add("sandbox", str(err), ok=False)
        if zygote is not None:
            for name in SANDBOX_MODULES:
                version, where = (zygote.modules.get(name) or ["", ""])[:2]
                if where:
                    found.add(name, f"{version} from {os.path.dirname(where)}")
                else:
                    found.add(name, f"not imported in the sandbox; install it with: {install_command(name)}",
                              ok=False)
            iso = sandbox.isolation
            found.add("isolation", _layers(iso), ok=iso.full or not isolation)
            if iso.why:
                found.add("not held", "; ".join(iso.why), ok=iso.full or not isolation)
            if grade_solutions:
                found.findings.append(_solutions(course, sandbox))
    return found


def _layers(iso) -> str:
    names = (("user namespaces", iso.user_namespace), ("mount namespace", iso.mount_namespace),
             ("PID namespace", iso.pid_namespace), ("no network", iso.network), ("private uid", iso.private_uid),
             ("not dumpable", iso.not_dumpable), ("seccomp", iso.seccomp),
             (f"cgroups {iso.cgroups}" if iso.cgroups else "cgroups", bool(iso.cgroups)))
    return ", ".join(f"{name} {'yes' if on else 'NO'}" for name, on in names)


def _archives(course: CourseConfig) -> Finding:
    """Whether a student's .tar.gz and .zip can be unpacked here (the preflight's own trial)."""
    from autograder.grading.preflight import SOLUTIONS, ArchivesUnusable, archives_unpack

    if not SOLUTIONS.is_dir():
        return Finding("archives", "this installation of the kit has no solutions/ to pack and unpack")
    try:
        how = archives_unpack(course)
    except ArchivesUnusable as err:
        return Finding("archives", f"a .tar.gz or .zip of the solutions does not unpack here ({err.why}): every "
                                   f"student who uploads one would lose points; use a Python with zlib and a "
                                   f"working tarfile", ok=False)
    return Finding("archives", f"a .tar.gz and a .zip of the solutions unpack ({how})")


def _solutions(course: CourseConfig, sandbox) -> Finding:
    from autograder.grading.preflight import SOLUTIONS
    from autograder.grading.grade import grade

    if not SOLUTIONS.is_dir():
        return Finding("solutions", "this installation of the kit has no solutions/ to try the sandbox on")
    started = time.monotonic()
    result = grade(SOLUTIONS, course, sandbox, name="doctor", identity=None)
    seconds = time.monotonic() - started
    if result.score >= result.max_score:
        return Finding("solutions", f"{result.score:g}/{result.max_score:g} in the sandbox ({seconds:.1f} s)")
    lost = {}
    for check in result.checks:
        if check.score < check.max_score:
            first = (check.message or "").strip().splitlines()[:1] or ["(no message)"]
            lost.setdefault(first[0][:300], []).append(check.check_id)
    why = "; ".join(f"{ids[0]}{f' and {len(ids) - 1} more' if len(ids) > 1 else ''}: {msg}"
                    for msg, ids in lost.items())
    return Finding("solutions", f"{result.score:g}/{result.max_score:g}: {why}", ok=False)


def print_diagnosis(found: Diagnosis, console) -> None:
    from rich.markup import escape

    width = max(len(f.label) for f in found.findings)
    for f in found.findings:
        mark = "[green]ok[/]" if f.ok else "[red]!![/]"
        console.print(f"{mark} {f.label.ljust(width)}  {escape(f.text)}")
    if found.ready:
        console.print("[green]ready to grade[/]")
    else:
        console.print("[red]not ready to grade:[/] fix the lines marked !! first")
