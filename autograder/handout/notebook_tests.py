"""What a notebook's test cells run, beside the notebooks as attnkit_tests.py: in the handout and
in the nbgrader release alike (the cells: task_cells.py).

A test cell reads ``attnkit_tests.run("attention.softmax")``: this runs the handout's check.py
(beside this file) on the *saved* notebook in a fresh Python process, not on the variables of
the notebook's kernel, prints its report and returns the score, which the cell shows as its last
value (nbgrader's partial credit). A graded function last run in the kernel as the saved file does
not hold it (a cell edited and run, not saved) is said first: save, then run the cell again.
Which checks a task has, its points and how long to wait are in attnkit_tests.json, written by
``attnkit handout`` and ``attnkit nbgrader``: the visible checks only (the hidden ones are known
only to the grader). Under ``nbgrader autograde`` it does nothing: the kit grades the submitted
file itself and writes the cell's outputs.

Self-contained (the standard library only), and silent on stderr: nbgrader gives 0 to a test
cell that writes to stderr.
"""

from __future__ import annotations

import json
import os
import re
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
    unsaved = ran_but_not_saved(HERE / f"{spec['exercise']}.ipynb", spec["exercise"])
    if unsaved:
        print(f"Save {spec['exercise']}.ipynb first (Ctrl-S), then run this cell again: your {' and '.join(unsaved)} "
              f"as last run here differ{'s' if len(unsaved) == 1 else ''} from the saved file, which these tests check.")
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


def ran_but_not_saved(notebook: Path, stem: str) -> list[str]:
    """The graded names (check_data/<stem>.json) whose definition last run in this kernel is not in
    the saved notebook: a cell edited and run, not saved. Outside a kernel, none."""
    try:
        ran = sys.modules["IPython"].get_ipython().history_manager.input_hist_raw
        cells = json.loads(notebook.read_text(encoding="utf-8"))["cells"]
        names = json.loads((HERE / "check_data" / f"{stem}.json").read_text(encoding="utf-8"))["graded"]
    except Exception:  # noqa: BLE001 - no kernel, no notebook yet: nothing to compare
        return []
    saved = {"".join(c["source"]).strip() if isinstance(c.get("source"), list) else str(c.get("source", "")).strip()
             for c in cells if c.get("cell_type") == "code"}
    last: dict[str, str] = {}
    for text in ran:
        for name in names:
            if re.search(rf"^(?:def|class)[ \t]+{re.escape(name)}\b|^{re.escape(name)}[ \t]*=", str(text), re.M):
                last[name] = str(text)
    return [name for name, text in last.items() if text.strip() not in saved]


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
