"""The tests of an nbgrader notebook's test cells, released beside the notebooks as attnkit_tests.py.

A test cell reads ``attnkit_tests.run("attention.softmax")``: this runs the handout's check.py
(beside this file) on the *saved* notebook in a fresh Python process, not on the variables of
the notebook's kernel, prints its report and returns the score, which the cell shows as its last
value (nbgrader's partial credit). Which checks a task has, its points and how long to wait are
in attnkit_tests.json, written by ``attnkit nbgrader``: the visible checks only (the hidden ones
are known only to the grader). Under ``nbgrader autograde`` it does nothing: the kit grades the
submitted file itself and writes the cell's outputs.

Self-contained (the standard library only), and silent on stderr: nbgrader gives 0 to a test
cell that writes to stderr.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

HERE = Path(__file__).resolve().parent
TASKS_FILE = "attnkit_tests.json"
MARKER_ENV = "ATTNKIT_AUTOGRADE"      # set by the kit's nbgrader preprocessor: the cells stand down
WIDTH = 100                           # report lines are wrapped here: nbgrader's feedback does not wrap


def run(task: str) -> float:
    """Run the visible checks of `task` on the saved notebook; print the report; return the score."""
    spec = json.loads((HERE / TASKS_FILE).read_text(encoding="utf-8"))[task]
    if os.environ.get(MARKER_ENV):
        return 0.0
    if not spec["checks"]:
        print(f"All checks of {task} are hidden: they are graded after you hand in.")
        return 0.0
    done = None
    try:
        done = subprocess.run([sys.executable, "-I", str(HERE / "check.py"), "--cell", spec["exercise"],
                               *spec["checks"]], capture_output=True, text=True, timeout=spec["timeout"],
                              stdin=subprocess.DEVNULL, cwd=HERE)
        result = [json.loads(line) for line in done.stdout.splitlines() if line.startswith('{"attnkit"')][-1]
        print(wrapped(result["report"]))
        return min(max(float(result["score"]), 0.0), float(spec["points"]))
    except Exception as error:    # any failure of the checker is told in the cell, never raised into it
        print(f"The tests could not run: {type(error).__name__}: {error}")
        if done is not None:
            print(done.stderr[-1500:])
        return 0.0


def wrapped(report: str, width: int = WIDTH) -> str:
    """Each long line of the report wrapped at `width`, its continuation indented under its text."""
    out = []
    for line in report.splitlines():
        indent = " " * (len(line) - len(line.lstrip(" ")) + 2)
        out += textwrap.wrap(line, width, subsequent_indent=indent, break_long_words=True,
                             break_on_hyphens=False) or [""]
    return "\n".join(out)
