"""The nbgrader course on a shared machine: who reaches what.

The course folder is the instructor's alone (``write_course`` closes it: mode 700). Students
reach the course only through nbgrader's exchange, a folder outside it that every student can
write to; ``collect`` (autograder/nbgrader/collect.py) takes a submission only from the account
it is named after. This module says where the exchange is and what the instructor sets up.
"""

from __future__ import annotations

from pathlib import Path

# nbgrader's default Exchange.root: where its docs put the exchange of a shared machine (a test
# keeps it equal to nbgrader's; reading it from nbgrader would import nbgrader's whole exchange).
NBGRADER_EXCHANGE = "/usr/local/share/nbgrader/exchange"


def exchange_root(exchange: str | Path | None) -> Path:
    return Path(exchange).expanduser().resolve() if exchange is not None else Path(NBGRADER_EXCHANGE)


def setup_advice(course_dir: Path, course_id: str, exchange: str | Path | None) -> str:
    """What `attnkit nbgrader` tells the instructor: the private course folder, the exchange (and
    how to make it), and the set-up of a JupyterHub (nbgrader's "Using nbgrader with JupyterHub")."""
    root = exchange_root(exchange)
    where = str(root) if exchange is not None else f"{root} (nbgrader's default; a global nbgrader_config.py may name another)"
    if not root.is_dir():
        where += f"\n  missing: make it once, as root: sudo install -d -m 1777 {root}"
    elif root.stat().st_mode & 0o777 != 0o777:
        where += f"\n  not writable by every student: sudo chmod 1777 {root}"
    named_root = f"; c.Exchange.root = {str(root)!r}" if exchange is not None else ""
    config = Path(course_dir).resolve() / "nbgrader_config.py"
    return (f"{course_dir}: only you can enter it (mode 700); it holds the solutions, the hidden checks' ids,\n"
            "  the gradebook and the submissions\n"
            f"exchange {where}\n"
            "on JupyterHub (every student with a Unix account of their own: collect refuses a submission\n"
            "another account made):\n"
            "  /etc/jupyter/nbgrader_config.py, read by every user's server: "
            f"c.CourseDirectory.course_id = {course_id!r}{named_root}\n"
            f"  your ~/.jupyter/nbgrader_config.py, for formgrader: load_subconfig({str(config)!r})")
