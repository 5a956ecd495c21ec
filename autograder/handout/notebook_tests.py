"""What a notebook's test cells run, beside the notebooks as attnkit_tests.py: in the handout and
in the nbgrader release alike (the cells: task_cells.py).

A test cell reads ``attnkit_tests.run("attention.softmax")``: this runs the handout's check.py
(beside this file) on the *saved* notebook in a fresh Python process, not on the variables of
the notebook's kernel, prints its report and returns the score, which the cell shows as its last
value (nbgrader's partial credit).

Before that it compares what the kernel ran (IPython's input history, by execution count) with
the saved notebook's code cells and their execution counts (`unsaved`). A graded definition last
run here that the saved file does not hold, run after the file was last saved, is work not saved
yet (Jupyter's autosave comes later): the cell says to save first and checks nothing,
rather than grade the older file. A saved cell that holds other text than it ran with was edited
and saved since (the file is the newer): it is checked, and the cell says to run it. Which of the
two it is can be told only where the saved file is this kernel's notebook: saved from this kernel
(a cell's saved count and text are what it ran as that count), or named so by Jupyter
(`JPY_SESSION_NAME`, ipykernel's `__session__`, VS Code's `__vsc_ipynb_file__`); elsewhere the
cell says to save first and checks the saved file. A cell edited and neither run nor saved
cannot be seen from the kernel at all.

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
    notebook = f"{spec['exercise']}.ipynb"
    state, names = unsaved(HERE / notebook, spec["exercise"])
    said = " and ".join(names)
    if state == NOT_SAVED:
        print(f"Save {notebook} first (Ctrl-S), then run this cell again: your {said} as last run here "
              f"{'is' if len(names) == 1 else 'are'} not in the saved file yet, and these tests check the saved "
              f"file. Nothing was checked.")
        return 0.0
    if state == EDITED:
        print(f"Your {said} in the saved {notebook} {'was' if len(names) == 1 else 'were'} changed after "
              f"{'it' if len(names) == 1 else 'they'} last ran here: these tests check the saved file; run "
              f"{'its cell' if len(names) == 1 else 'their cells'} to use {'it' if len(names) == 1 else 'them'} "
              f"here too.")
    if state == DIFFERS:
        print(f"Save {notebook} first (Ctrl-S), then run this cell again: your {said} as last run here "
              f"differ{'s' if len(names) == 1 else ''} from the saved file, which these tests check.")
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


# What the kernel ran, against the saved notebook (`unsaved`).
NOT_SAVED = "not saved"       # run here after the last save, and not in the file: the file is stale
EDITED = "edited"             # the file's cell was changed after it ran here, and saved: the file is newer
DIFFERS = "differs"           # they differ, and which is newer cannot be told


def unsaved(notebook: Path, stem: str) -> tuple[str, list[str]]:
    """(NOT_SAVED, EDITED or DIFFERS, the graded names so) where a graded name's definition last
    run in this kernel is not in the saved notebook; ("", []) where every one is, or outside a
    kernel, or without a notebook to compare."""
    try:
        shell = sys.modules["IPython"].get_ipython()
        ran = [str(text) for text in shell.history_manager.input_hist_raw]    # by execution count
        cells = [c for c in json.loads(notebook.read_text(encoding="utf-8"))["cells"] if c.get("cell_type") == "code"]
        names = json.loads((HERE / "check_data" / f"{stem}.json").read_text(encoding="utf-8"))["graded"]
    except Exception:  # noqa: BLE001 - no kernel, no notebook yet: nothing to compare
        return "", []
    saved = [_text(c.get("source", "")) for c in cells]
    counts = {c["execution_count"]: text for c, text in zip(cells, saved)
              if type(c.get("execution_count")) is int and c["execution_count"] > 0}
    last: dict[str, int] = {}
    for count, text in enumerate(ran):
        for name in names:
            if re.search(rf"^(?:def|class)[ \t]+{re.escape(name)}\b|^{re.escape(name)}[ \t]*=", text, re.M):
                last[name] = count
    differ = {name: count for name, count in last.items() if ran[count].strip() not in saved}
    if not differ:
        return "", []
    edited = [name for name, count in differ.items() if count in counts]    # its cell holds other text now
    others = [name for name in differ if name not in edited]
    # Saved from this kernel: a cell's saved count is the run of its saved text here. Counts only
    # grow, so a run counted above every saved one came after the save.
    from_here = any(count < len(ran) and ran[count].strip() == text for count, text in counts.items())
    if others and (from_here or _is_this_kernels(notebook, shell)) and all(
            differ[name] > max(counts, default=0) for name in others):
        return NOT_SAVED, others
    return (EDITED, edited) if edited else (DIFFERS, others)


def _text(source) -> str:
    return ("".join(source) if isinstance(source, list) else str(source)).strip()


def _is_this_kernels(notebook: Path, shell) -> bool:
    """Jupyter names the notebook this kernel runs: Jupyter Server in JPY_SESSION_NAME (ipykernel
    puts it in `__session__`), VS Code in `__vsc_ipynb_file__`. A full path must be the notebook;
    a relative one (older servers: from the server's root), its name."""
    user = getattr(shell, "user_ns", {})
    for named in (user.get("__vsc_ipynb_file__"), user.get("__session__"), os.environ.get("JPY_SESSION_NAME")):
        if not isinstance(named, str) or not named.endswith(".ipynb"):
            continue
        path = Path(named)
        try:
            return path.samefile(notebook) if path.is_absolute() else path.name == notebook.name
        except OSError:
            return False
    return False


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
