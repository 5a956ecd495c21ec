"""What IPython's input transformation adds to reading a submission.

    python benchmarks/bench_notebook_load.py [--rounds 9]

Each round, in a fresh interpreter (so the transformer's first load is counted), reads with the
kit's loader (`load.source_from_bytes`, what every grading path calls):
  - a plain .py submission (the solutions' attention.py): the transformer must not be loaded;
  - a notebook whose cells are all plain Python (the released attention.ipynb): not loaded either;
  - a notebook with magics (the corpus' ho2_nb_magics.ipynb: %matplotlib, !pip, %timeit) and one
    with a `%%time` cell defining a function: the first read in a process (the transformer's
    load included) and the next ones.
Prints the median milliseconds of each, and whether the transformer was loaded; writes them to
benchmarks/results/notebook_load.json.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks import record  # noqa: E402


PROBE = r"""
import json, sys, time
from pathlib import Path
import autograder.intake.load as load   # the kit's own imports, before the clock starts
path, suffix = Path(sys.argv[1]), sys.argv[2]
data = path.read_bytes() if suffix != "%%time" else sys.argv[3].encode()
suffix = ".ipynb" if suffix == "%%time" else suffix
times = []
for _ in range(4):
    started = time.perf_counter()
    source = load.source_from_bytes(data, path.name, suffix, "attention")
    times.append((time.perf_counter() - started) * 1000)
assert not isinstance(source, load.LoadError), source
ipython_input = sys.modules.get("autograder.judge.notebook") or sys.modules.get("autograder.intake.ipython_input")
print(json.dumps({"first": times[0], "next": min(times[1:]),
                  "transformer": getattr(ipython_input, "_transformer", None) is not None,
                  "ipython": "IPython" in sys.modules}))
"""

TIME_NOTEBOOK = {"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": [
    {"cell_type": "code", "metadata": {}, "execution_count": None, "outputs": [], "source": "import numpy as np"},
    {"cell_type": "code", "metadata": {}, "execution_count": None, "outputs": [],
     "source": "%%time\ndef softmax(x, axis=-1):\n    e = np.exp(x - x.max(axis=axis, keepdims=True))\n"
               "    return e / e.sum(axis=axis, keepdims=True)"}]}

CASES = {
    "plain .py (solutions/attention.py)": (ROOT / "solutions" / "attention.py", ".py"),
    "notebook, plain cells (exercises/attention.ipynb)": (ROOT / "exercises" / "attention.ipynb", ".ipynb"),
    "notebook with magics (corpus ho2_nb_magics.ipynb)":
        (ROOT / "tests" / "corpus" / "attention" / "correct" / "ho2_nb_magics.ipynb", ".ipynb"),
    "notebook with a %%time cell": (ROOT / "attention.ipynb", "%%time"),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=9)
    args = parser.parse_args()
    cases = {}
    for name, (path, suffix) in CASES.items():
        runs = []
        for _ in range(args.rounds):
            cmd = [sys.executable, "-c", PROBE, str(path), suffix, json.dumps(TIME_NOTEBOOK)]
            runs.append(json.loads(subprocess.run(cmd, cwd=ROOT, check=True, capture_output=True, text=True).stdout))
        first = statistics.median(r["first"] for r in runs)
        then = statistics.median(r["next"] for r in runs)
        loaded = {r["transformer"] for r in runs}
        package = {r["ipython"] for r in runs}
        print(f"{name:52s} first read {first:6.2f} ms, next {then:6.2f} ms; transformer loaded: {loaded}, "
              f"IPython package imported: {package}")
        cases[name] = {"first_ms": first, "next_ms": then, "transformer_loaded": sorted(loaded),
                       "ipython_imported": sorted(package)}
    plain, magics = cases["plain .py (solutions/attention.py)"], cases["notebook with magics (corpus ho2_nb_magics.ipynb)"]
    record.write("notebook_load", {"rounds": args.rounds, "cases": cases},
                 headline=[record.figure("first read of a notebook with magics", magics["first_ms"], "ms",
                                         anchor="first read of a plain .py", anchor_value=plain["first_ms"],
                                         ratio=magics["first_ms"] / plain["first_ms"], ratio_is="value / anchor")])


if __name__ == "__main__":
    main()
