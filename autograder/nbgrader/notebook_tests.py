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
import html
from pathlib import Path

HERE = Path(__file__).resolve().parent
TASKS_FILE = "attnkit_tests.json"
MARKER_ENV = "ATTNKIT_AUTOGRADE"      # set by the kit's nbgrader preprocessor: the cells stand down


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
        print(result["report"])     # whole lines: Jupyter wraps a stream at the width it has
        return min(max(float(result["score"]), 0.0), float(spec["points"]))
    except Exception as error:    # any failure of the checker is told in the cell, never raised into it
        print(f"The tests could not run: {type(error).__name__}: {error}")
        if done is not None:
            print(done.stderr[-1500:])
        return 0.0


def report_html(report: str) -> str:
    """The report as HTML that wraps at the width the page has, at words (a word longer than a line
    breaks where it must), each continuation indented under its line's text. nbgrader's feedback
    page shows a stream as one unwrapped line that runs off the edge; the autograder writes a
    test cell's report as this (with the text beside it for anything that shows plain text)."""
    lines = []
    for line in report.splitlines():
        indent = len(line) - len(line.lstrip(" "))
        lines.append(f'<div style="padding-left: {indent + 2}ch; text-indent: -2ch; white-space: pre-wrap; '
                     f'overflow-wrap: anywhere; min-height: 1.4em">{html.escape(line.lstrip(" "))}</div>')
    return ('<div class="attnkit-report" style="font-family: SFMono-Regular, Menlo, Consolas, monospace; '
            'font-size: 13px; line-height: 1.4; text-align: left">' + "".join(lines) + "</div>")
