"""A benchmark's figures as a record: benchmarks/results/<name>.json, read by measurements.py.

    from benchmarks import record          # at the top of a benchmark: the load average is taken then
    record.write("watch", {"saves": 5, "exercises": {...}},
                 headline=[record.figure("re-grade after a save, slowest exercise", 0.089, "s",
                                         target="under 0.1 s")])

Every record has one shape: {"benchmark", "date", "commit", "machine": {...}, "command",
"headline": [...], ...the benchmark's own figures}. `headline` holds the few figures a reader
wants first, each {"figure", "value", "unit", "anchor", "anchor_value", "ratio", "ratio_is",
"target"}; docs/measurements.md shows them (`python benchmarks/measurements.py`). The rest is
the benchmark's detail, in its own names.

ATTNKIT_BENCH_RESULTS=DIR writes the record elsewhere: a trial run on a busy machine should not
replace a real run's figures.
"""

from __future__ import annotations

import json
import os
import platform
import shlex
import subprocess
import sys
import time
from pathlib import Path

KIT = Path(__file__).resolve().parent.parent
RESULTS = KIT / "benchmarks" / "results"
LOAD_AT_START = os.getloadavg()      # a benchmark imports this module first thing


def results_folder() -> Path:
    return Path(os.environ.get("ATTNKIT_BENCH_RESULTS") or RESULTS)


def figure(what: str, value: float, unit: str, *, anchor: str | None = None, anchor_value: float | None = None,
           ratio: float | None = None, ratio_is: str | None = None, target: str | None = None) -> dict:
    """One headline figure against its anchor (what it is compared with, measured in the same
    run). `ratio_is` says which way the ratio reads ("anchor / value": times faster than the
    anchor; "value / anchor": times the anchor's cost): which way is better depends on the figure."""
    row = {"figure": what, "value": value, "unit": unit}
    for key, given in (("anchor", anchor), ("anchor_value", anchor_value), ("ratio", ratio), ("ratio_is", ratio_is),
                       ("target", target)):
        if given is not None:
            row[key] = given
    return _rounded(row)


def write(name: str, figures: dict, *, headline: list[dict] | tuple = ()) -> Path:
    """Writes benchmarks/results/<name>.json (or under ATTNKIT_BENCH_RESULTS) and says where."""
    record = _rounded({"benchmark": name, "date": time.strftime("%Y-%m-%dT%H:%M:%S%z"), **_commit(),
                       "machine": machine(), "command": command(), "headline": list(headline), **figures})
    folder = results_folder()
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.json"
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(record, indent=2, default=_plain) + "\n", encoding="utf-8")
    os.replace(tmp, path)
    print(f"wrote {path}")
    return path


def machine() -> dict:
    """What the figures depend on besides the code: cores, CPU model, memory, Python, load."""
    return {"cpus": os.cpu_count(), "cpu": _cpu_model(), "memory_gb": _memory_gb(),
            "python": platform.python_version(), "system": platform.platform(),
            "load_before": [round(x, 2) for x in LOAD_AT_START],
            "load_after": [round(x, 2) for x in os.getloadavg()]}


def command() -> str:
    """The command line as typed from the kit's folder: `python benchmarks/<script> <args>`."""
    script = Path(sys.argv[0])
    shown = f"benchmarks/{script.name}" if script.suffix == ".py" else sys.argv[0]
    return shlex.join(["python", shown, *sys.argv[1:]])


def _commit() -> dict:
    def git(*args: str) -> str:
        done = subprocess.run(["git", *args], cwd=KIT, capture_output=True, text=True)
        return done.stdout.strip() if done.returncode == 0 else ""

    commit = git("rev-parse", "--short", "HEAD") or "unknown"
    # The records themselves are not the code measured: a run after another is still of a clean tree.
    dirty = bool(git("status", "--porcelain", "--untracked-files=no", "--", ".", ":(exclude)benchmarks/results"))
    return {"commit": commit, "dirty": dirty}


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace").splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor()


def _memory_gb() -> float | None:
    try:
        for line in Path("/proc/meminfo").read_text(encoding="utf-8").splitlines():
            if line.startswith("MemTotal:"):
                return round(int(line.split()[1]) / 1024 / 1024, 1)
    except (OSError, ValueError):
        pass
    return None


def _round(value):
    return float(f"{value:.6g}") if isinstance(value, float) else value


def _rounded(value):
    """Floats to six significant digits, all the way down: more is the timer's noise."""
    if isinstance(value, dict):
        return {k: _rounded(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_rounded(v) for v in value]
    return _round(value)


def _plain(value):
    """JSON for what a benchmark holds besides dicts, lists and numbers (paths, tuples of numpy floats)."""
    if isinstance(value, Path):
        return str(value)
    if hasattr(value, "item"):
        return value.item()
    raise TypeError(f"{type(value).__name__} is not JSON")
