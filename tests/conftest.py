"""Fixtures shared by the kit's tests: the course as `attnkit` reads it, and a warm sandbox."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest


@pytest.fixture(scope="session")
def course_at():
    """Reads a course file as `attnkit` does: validated, its check ids known to the kit
    (`course_at()` is the kit's own course.yml)."""
    from autograder.checks import check_ids
    from autograder.config import DEFAULT_COURSE, load_course

    def read(path: Path = DEFAULT_COURSE):
        return load_course(path, known_checks=check_ids())

    return read


@pytest.fixture(scope="session")
def course(course_at):
    """The kit's course.yml (a frozen CourseConfig: tests change it with dataclasses.replace)."""
    return course_at()


@pytest.fixture(scope="module")
def sandbox(request, course):
    """One warm sandbox per test module (starting its zygotes costs seconds). Its limits are the
    module's `LIMITS` when it has one, else the course's; a module that sets `REQUIRES_JAIL`
    skips where the jail cannot be built here, saying why."""
    from autograder.checks.contract import STEMS
    from autograder.sandbox import Sandbox

    limits = getattr(request.module, "LIMITS", None) or course.limits
    with Sandbox(limits, stems=STEMS) as box:      # as grading_sandbox makes it
        if getattr(request.module, "REQUIRES_JAIL", False) and not box.isolation.full:
            pytest.skip(f"no jail here: {box.isolation.describe()}")
        yield box


# `python -m pytest -m quick`: these modules (the course file, the reference, the checks, loading
# and intake, the build, the command line, the sandbox, one submission graded) without their slow
# tests; under two minutes on two cores. The rest grade whole classes, run notebooks through
# Jupyter and nbgrader, start Dask clusters and attack the jail at length.
QUICK_MODULES = frozenset({
    "test_config", "test_reference", "test_reference_cache", "test_checks", "test_descriptors", "test_syntax",
    "test_stubs", "test_load", "test_intake", "test_build", "test_cli", "test_grading", "test_sandbox",
    "test_zygote_choice", "test_helper_process", "test_intake_budget",
})


@pytest.fixture(scope="session")
def kit_free_python(tmp_path_factory) -> Path:
    """A venv that sees numpy, torch and matplotlib but not the kit: their site-packages folder is
    on its path without its .pth files being run (the kit's editable install is one of those)."""
    import os
    import subprocess
    import sys

    import numpy as np

    venv = tmp_path_factory.mktemp("venv") / "env"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / ("Scripts/python.exe" if os.name == "nt" else "bin/python")
    site = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          capture_output=True, text=True, check=True).stdout.strip()
    Path(site, "numpy_torch_only.pth").write_text(str(Path(np.__file__).resolve().parents[1]) + "\n")
    return python


def pytest_configure(config):
    config.addinivalue_line("markers", "speedup(name): tests one optional speed-up (autograder/speedups.py); "
                                       "skipped where ATTNKIT_FAST turns it off")
    # xdist hands out files with the most tests first unless told not to; LONGEST_FIRST (below) is
    # the order that keeps both workers busy to the end.
    if hasattr(config.option, "loadscopereorder"):
        config.option.loadscopereorder = False


# The files that take longest, longest first: `-n 2 --dist loadfile` gives each worker whole files
# in the order collected, so a long file collected last would leave the other worker idle meanwhile.
LONGEST_FIRST = ("test_hostile_uploads", "test_handout_engine", "test_distributed", "test_other_pythons",
                 "test_nbgrader", "test_interpreter_locations", "test_one_judge", "test_handout",
                 "test_gradescope_package", "test_speedups", "test_diagnosis", "test_classroom",
                 "test_intake_budget_elsewhere")


def _longest_first(item) -> int:
    name = item.path.stem
    return LONGEST_FIRST.index(name) if name in LONGEST_FIRST else len(LONGEST_FIRST)


def pytest_collection_modifyitems(items):
    from autograder.speedups import enabled

    items.sort(key=_longest_first)      # stable: each file's tests keep their order

    on = enabled()
    for item in items:
        for mark in item.iter_markers("speedup"):
            off = [name for name in mark.args if name not in on]
            if off:
                item.add_marker(pytest.mark.skip(reason=f"the {off[0]} speed-up is off (ATTNKIT_FAST)"))
        module = getattr(item, "module", None)
        if module is not None and module.__name__.rpartition(".")[2] in QUICK_MODULES \
                and item.get_closest_marker("slow") is None:
            item.add_marker(pytest.mark.quick)
