"""What one fork of a zygote's image costs: the floor under every sandbox child.

    python benchmarks/bench_fork_image.py              # 30 forks per image
    python benchmarks/bench_fork_image.py --forks 100

A sandbox child is made of two forks of the zygote (its init, cloned into namespaces of its own,
and the worker: see autograder/sandbox/inside/start.py), each of which copies the page tables of
the whole image and takes copy-on-write faults on what it touches. For each zygote kind, a fresh interpreter
imports what that zygote imports, then forks and reaps children that exit at once; the parent's
and the children's core-ms per fork are what any process made by fork of that image costs, before
it does anything. Set beside the profile's empty child (benchmarks/profile_submission.py): the
share of the kit's set-up that is the number of forks times this. Last, what a child's two forks
cost against one fork of the image and one of a bare interpreter (an init that was not a fork of
the zygote), and what they cost when a monitor was a third fork of the image.

Writes benchmarks/results/bench_fork_image.json (`--name`: another name). A benchmark, not a test.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

KIT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(KIT))

from benchmarks import record  # noqa: E402

BARE = "bare interpreter"
IMAGES = {BARE: [], "numpy zygote": ["numpy"], "matplotlib zygote": ["numpy", "matplotlib"],
          "torch zygote": ["numpy", "torch", "matplotlib"]}

PROBE = """
import importlib, json, os, resource, sys
names, forks = json.loads(sys.argv[1]), int(sys.argv[2])
for name in names:
    importlib.import_module(name)
if "matplotlib" in names:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot
status = dict(line.split(":", 1) for line in open("/proc/self/status"))
def cpu(who):
    r = resource.getrusage(who)
    return r.ru_utime + r.ru_stime
own, kids = cpu(resource.RUSAGE_SELF), cpu(resource.RUSAGE_CHILDREN)
for _ in range(forks):
    pid = os.fork()
    if pid == 0:
        os._exit(0)
    os.waitpid(pid, 0)
print(json.dumps({"parent_ms": (cpu(resource.RUSAGE_SELF) - own) / forks * 1000,
                  "child_ms": (cpu(resource.RUSAGE_CHILDREN) - kids) / forks * 1000,
                  "rss_anon_kb": int(status["RssAnon"].split()[0]),
                  "page_tables_kb": int(status["VmPTE"].split()[0])}))
"""


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--forks", type=int, default=30)
    p.add_argument("--name", default="bench_fork_image", help="the record's name in benchmarks/results")
    args = p.parse_args(argv)
    figures = {}
    print(f"{'':20s} {'parent':>7s} {'child':>7s} {'per fork':>8s}   (core-ms)  anon memory, page tables")
    for label, names in IMAGES.items():
        out = subprocess.run([sys.executable, "-c", PROBE, json.dumps(names), str(args.forks)],
                             check=True, capture_output=True, text=True).stdout
        one = figures[label] = json.loads(out.splitlines()[-1])
        one["fork_ms"] = one["parent_ms"] + one["child_ms"]
        print(f"{label:20s} {one['parent_ms']:7.1f} {one['child_ms']:7.1f} {one['fork_ms']:8.1f}"
              f"              {one['rss_anon_kb'] / 1024:.0f} MB, {one['page_tables_kb']} kB")
    # A child is two forks of its zygote's image (init, worker): what the forks alone cost, against
    # three (a monitor before the init) and against an init forked from a bare interpreter instead.
    bare = figures[BARE]["fork_ms"]
    chains = {}
    print(f"\na child's forks (core-ms): two of the image, as now; three, with a monitor; one, its init from a {BARE}")
    for label in IMAGES:
        if label != BARE:
            one = figures[label]["fork_ms"]
            chains[label] = {"two_of_the_image_ms": 2 * one, "three_of_the_image_ms": 3 * one,
                             "one_and_one_bare_ms": one + bare}
            print(f"{label:20s} {2 * one:7.1f} {3 * one:7.1f} {one + bare:7.1f}")
    record.write(args.name, {"forks": args.forks, "per_image": figures, "child_forks": chains})
    return 0


if __name__ == "__main__":
    sys.exit(main())
