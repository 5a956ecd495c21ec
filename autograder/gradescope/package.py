"""`attnkit gradescope OUT.zip`: the autograder zip Gradescope asks for.

    setup.sh, run_autograder        Gradescope's two entry points (scripts.py)
    requirements.txt                every dependency of grading, pinned to the versions installed here
    course.yml, gradescope.json     the course, and how results are shown (settings.py)
    attnkit/                        the kit's source (autograder/, reference/, pyproject.toml), and the
                                    solutions where an installed kit keeps them (autograder/data/solutions/)

The zip is reproducible: the same kit, course and settings give the same bytes. Once written,
it is tried here (`try_zip`): unpacked as Gradescope unpacks it, its setup.sh run on this
machine's Python, whose doctor must grade the solutions with the zip's own kit and course.
"""

from __future__ import annotations

import importlib.metadata as metadata
import io
import re
import sys
import zipfile
from dataclasses import dataclass
from pathlib import Path

from packaging.requirements import Requirement

from autograder.config import KIT_DATA, KIT_ROOT
from autograder.gradescope import scripts
from autograder.gradescope.settings import SETTINGS_FILE, GradescopeSettings

# What grading imports, in the grader and in the sandbox (IPython reads notebooks as Jupyter runs
# them; pyseccomp is the sandbox's system-call filter). The authoring tools (nbgrader, nbclient)
# are not needed on Gradescope. torch is installed on its own, from PyTorch's CPU index.
GRADING_DEPENDENCIES = ("numpy", "torch", "matplotlib", "pyyaml", "pydantic", "annotated-types", "rich",
                        "nbformat", "jupytext", "ipython", "markdown-it-py", "jinja2", "packaging", "pyseccomp")
TORCH = "torch"
CUDA_ONLY = ("nvidia-", "triton", "cuda-")
KIT_PACKAGES = ("autograder", "reference")
# Where the unpacked kit looks for its solutions (config.paths.KIT_DATA: the kit's root holds no
# course.yml there, as in an installed kit): what setup.sh's doctor and the runner's preflight
# grade (the reference, the same key, is in the zip anyway; Gradescope never shows the
# autograder's files to students).
SOLUTIONS_IN_ZIP = "attnkit/autograder/data/solutions"
KIT_FILES = ("pyproject.toml", "README.md")
ZIP_TIME = (1980, 1, 1, 0, 0, 0)


class PackageError(RuntimeError):
    """The autograder cannot be made here (the message says what is missing)."""


def _canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def pinned_requirements(roots: tuple[str, ...] = GRADING_DEPENDENCIES) -> dict[str, str]:
    """{distribution: installed version} for `roots` and everything they require here."""
    pins: dict[str, str] = {}
    todo = list(roots)
    while todo:
        name = _canonical(todo.pop())
        if name in pins:
            continue
        try:
            dist = metadata.distribution(name)
        except metadata.PackageNotFoundError:
            if name in map(_canonical, roots):
                raise PackageError(f"{name} is not installed here; the autograder pins what is installed") from None
            continue     # an optional dependency this environment does without
        if name.startswith(CUDA_ONLY):
            continue     # a CUDA build's torch here: the CPU wheel on Gradescope needs none of it
        pins[name] = dist.version
        for text in dist.requires or ():
            req = Requirement(text)
            if req.marker is None or req.marker.evaluate({"extra": ""}):
                todo.append(req.name)
    return dict(sorted(pins.items()))


def requirements_txt(pins: dict[str, str]) -> str:
    lines = ["# Every dependency of grading, at the versions the kit was run with (attnkit gradescope).",
             "# torch is installed before these, CPU-only, from PyTorch's CPU index (setup.sh)."]
    lines += [f"{name}=={version}" for name, version in pins.items() if name != TORCH]
    return "\n".join(lines) + "\n"


def kit_files(solutions: Path | None = None) -> list[tuple[str, Path]]:
    """(name in the zip, path here) of the kit's source: its packages' files (no caches; the
    checkout's links in autograder/data are not followed), and the solutions (`solutions`, default
    the kit's) where the unpacked kit finds them."""
    files = [(f"attnkit/{name}", KIT_ROOT / name) for name in KIT_FILES if (KIT_ROOT / name).is_file()]
    for package in KIT_PACKAGES:
        for path in sorted((KIT_ROOT / package).rglob("*")):
            rel = path.relative_to(KIT_ROOT)
            if path.is_file() and not path.is_symlink() and "__pycache__" not in rel.parts \
                    and path.suffix not in (".pyc", ".pyo"):
                files.append((f"attnkit/{rel.as_posix()}", path))
    folder = solutions if solutions is not None else KIT_DATA / "solutions"
    found = sorted(folder.glob("*.py")) if folder.is_dir() else []
    if not found:
        raise PackageError(f"{folder}: no solutions to put in the zip; Gradescope's image build grades them "
                           f"before it is ready (a kit installed without its solutions cannot make the autograder)")
    return files + [(f"{SOLUTIONS_IN_ZIP}/{path.name}", path) for path in found]


def build_zip(target: Path, course_text: str, settings: GradescopeSettings) -> list[str]:
    """Writes the autograder zip to `target` (`course_text`: a course.yml already validated);
    returns the names it holds."""
    pins = pinned_requirements()
    python = f"{sys.version_info.major}.{sys.version_info.minor}"
    torch = pins[TORCH].split("+", 1)[0]     # 2.13.0+cpu and 2.13.0 are one release on the CPU index
    settings = settings.model_copy(update={"python": python})
    entries: list[tuple[str, bytes, int]] = [
        ("setup.sh", scripts.setup_sh(python=python, torch=torch).encode(), 0o755),
        ("run_autograder", scripts.run_autograder(stdout_limit=settings.stdout_limit).encode(), 0o755),
        ("requirements.txt", requirements_txt(pins).encode(), 0o644),
        ("course.yml", course_text.encode("utf-8"), 0o644),
        (SETTINGS_FILE, (settings.model_dump_json(indent=2) + "\n").encode(), 0o644),
    ]
    entries += [(name, path.read_bytes(), 0o644) for name, path in kit_files()]
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for name, data, mode in entries:
            info = zipfile.ZipInfo(name, date_time=ZIP_TIME)
            info.external_attr = (0o100000 | mode) << 16     # a regular file with these permissions
            info.compress_type = zipfile.ZIP_DEFLATED
            zf.writestr(info, data)
    target = Path(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(f".{target.name}.tmp")
    tmp.write_bytes(buf.getvalue())
    tmp.replace(target)
    return [name for name, _, _ in entries]


@dataclass(frozen=True)
class Tried:
    """What the zip's setup.sh said when run here: `ready` with the solutions' score, or why not."""
    ready: bool
    said: str


def try_zip(target: Path, timeout: float = 900) -> Tried:
    """Unpack the zip as Gradescope does (source/, submission/, results/ under a temporary root) and
    run its setup.sh there, installing nothing (ATTNKIT_SKIP_INSTALL=1) and on this Python, whose
    packages are the ones requirements.txt pins: its doctor grades the solutions with the zip's
    own kit and course in a real sandbox. Ready only when setup.sh says so and the doctor's
    solutions line gives their score at full marks."""
    import os
    import shutil
    import subprocess
    import tempfile

    from autograder.gradescope.settings import ROOT_ENV

    bash = shutil.which("bash")
    if bash is None:
        return Tried(False, "not tried here: no bash on this machine to run setup.sh")
    with tempfile.TemporaryDirectory(prefix="attnkit-gradescope-") as tmp:
        root = Path(tmp)
        for sub in ("source", "submission", "results"):
            (root / sub).mkdir()
        with zipfile.ZipFile(target) as zf:
            zf.extractall(root / "source")
        env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
        env.update({ROOT_ENV: str(root), "ATTNKIT_SKIP_INSTALL": "1", "ATTNKIT_PYTHON": sys.executable})
        try:
            run = subprocess.run([bash, str(root / "source" / "setup.sh")], cwd=root / "source", env=env,
                                 capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            return Tried(False, f"setup.sh did not finish in {timeout:g} s here")
    graded = re.search(r"^ok\s+solutions\s+(\S+ in the sandbox.*)$", run.stdout, re.M)
    if run.returncode == 0 and "attnkit autograder ready" in run.stdout and graded:
        return Tried(True, f"the zip's kit graded its course's solutions here: {graded.group(1)}")
    wrong = [line[3:].strip() for line in run.stdout.splitlines() if line.startswith("!!")]
    why = "; ".join(wrong) or (run.stderr.strip().splitlines() or ["its doctor graded no solutions"])[-1]
    return Tried(False, f"the zip's setup.sh could not grade the solutions here: {why}")
