"""Code similarity across a class: false pairs, recall on disguised copies, cost.

    python benchmarks/bench_similarity.py                   # quality, then cost at 200 and 2,000 students
    python benchmarks/bench_similarity.py --sizes 200       # cost at one size
    python benchmarks/bench_similarity.py --no-cost         # quality only

Quality. Per compared exercise, the class is every correct solution the kit holds (tests/corpus/
<stem>/correct/, held-out files included, and solutions/<stem>.py) plus, for each, a copy
disguised with `ast` (tests/copy_transforms.py: locals renamed, comments and docstrings dropped,
statements reordered where the order does not matter, reformatted by ast.unparse). Some corpus
files are one file in two forms (a .py and its notebook) or variants of one template; they are
a *family*: two files sharing at least FAMILY_LINES of their own non-blank, non-comment lines
verbatim (lines of the stub not counted), joined transitively. The families are printed.

  false pairs   pairs flagged whose two files are of different families (target: none)
  recall        copies flagged with their original (target: all)

The same class is also run through copydetect's own pipeline (its pygments tokenizer, which
makes every name V, at its defaults: k = 25 characters, display threshold 0.33, the stub as
boilerplate), as the measured reason for the kit's own normalisation.

Cost. A synthetic class of N students written to a temporary class folder: for each compared
exercise, a student's file is the top-level functions of two or three corpus solutions mixed
(each function from one of them, disguised with the student's own seed) in place of the stub's
functions, the rest of the stub kept as given; and one student in twenty hands in a disguised
copy of another's. With some 25 solutions per exercise to draw from,
many more students share a function than in a real class: the pairs found are an upper bound. `compare_class` reads it back the way the class run does
(the loader, the stored results' graded files) and compares. Printed: wall and CPU seconds,
per submission, the pairs found, the peak RSS; written to benchmarks/results/similarity.json. A
benchmark, not a test: nothing is asserted.
"""

from __future__ import annotations

import argparse
import io
import itertools
import random
import resource
import sys
import tempfile
import time
from pathlib import Path

KIT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(KIT))

from benchmarks import record  # noqa: E402
from autograder.checks.contract import RETURNS  # noqa: E402
from autograder.integrity import similarity  # noqa: E402
from autograder.integrity.class_code import compare_class, kit_stubs  # noqa: E402
from autograder.integrity.similarity import Submitted  # noqa: E402
from autograder.intake.load import read_source  # noqa: E402
from autograder.results import CheckResult, ExerciseResult, SubmissionResult  # noqa: E402
from autograder.intake.students import Student  # noqa: E402
from tests.copy_transforms import disguise  # noqa: E402

FAMILY_LINES = 0.6
CORPUS = KIT / "tests" / "corpus"


def corpus(stem: str) -> dict[str, str]:
    """name -> source of every correct solution of `stem` the kit holds."""
    paths = sorted((CORPUS / stem / "correct").glob("*")) + [KIT / "solutions" / f"{stem}.py"]
    sources = {}
    for path in paths:
        source = read_source(path, stem)
        if isinstance(source, str):
            sources[f"{path.parent.name}/{path.name}"] = str(source)
    return sources


def families(sources: dict[str, str], stub: str) -> dict[str, str]:
    """name -> its family's first name (files sharing FAMILY_LINES of their own lines verbatim)."""
    given = {line.strip() for line in stub.splitlines()}

    def own(source):
        return {s for line in source.splitlines() if (s := line.strip()) and not s.startswith("#")} - given

    lines = {name: own(source) for name, source in sources.items()}
    parent = {name: name for name in sources}

    def root(name):
        while parent[name] != name:
            name = parent[name]
        return name

    for a, b in itertools.combinations(sources, 2):
        if lines[a] and lines[b] and len(lines[a] & lines[b]) / min(len(lines[a]), len(lines[b])) >= FAMILY_LINES:
            parent[max(root(a), root(b))] = min(root(a), root(b))
    return {name: root(name) for name in sources}


def quality(stems: list[str], stubs: dict[str, str]) -> dict:
    print("== quality: independent correct solutions and disguised copies of each")
    methods = {"kit": (_kit_scores, similarity.SIMILAR), "copydetect": (_copydetect_scores, None)}
    totals = {m: {"false": 0, "flagged": 0, "found": 0, "copies": 0, "cpu": 0.0, "top_false": 0.0, "low_copy": 1.0}
              for m in methods}
    files = 0
    for stem in stems:
        sources = corpus(stem)
        family = families(sources, stubs[stem])
        for i, name in enumerate(list(sources)):
            sources[f"copy of {name}"] = disguise(sources[name], seed=i)
            family[f"copy of {name}"] = family[name]
        files += len(sources)
        groups: dict[str, list[str]] = {}
        for name, root in family.items():
            if not name.startswith("copy of "):
                groups.setdefault(root, []).append(name)
        print(f"\n{stem}: {len(sources) // 2} solutions in {len(groups)} families, and a copy of each")
        for group in (sorted(g) for g in groups.values() if len(g) > 1):
            print("  family:", ", ".join(group))
        copies = [(c, c[len("copy of "):]) for c in sources if c.startswith("copy of ")]
        for method, (run, _) in methods.items():
            start = time.process_time()
            scores, flagged = run(sources, stubs[stem])
            t = totals[method]
            t["cpu"] += time.process_time() - start
            false = sorted(p for p in flagged if family[p[0]] != family[p[1]])
            found = [c for c, original in copies if tuple(sorted((c, original))) in flagged]
            independent = [s for p, s in scores.items() if family[p[0]] != family[p[1]]]
            copy_scores = [scores.get(tuple(sorted(pair)), 0.0) for pair in copies]
            t["false"] += len(false)
            t["flagged"] += len(flagged)
            t["found"] += len(found)
            t["copies"] += len(copies)
            t["top_false"] = max([t["top_false"], *independent])
            t["low_copy"] = min([t["low_copy"], *copy_scores])
            print(f"  {method:10s} false pairs {len(false):3d}   copies found {len(found)}/{len(copies)}   "
                  f"highest independent {max(independent, default=0):.2f}, lowest copy {min(copy_scores):.2f}")
            for a, b in false[:3]:
                print(f"      false: {a} ~ {b} ({scores[(a, b)]:.2f})")
            for c, _ in [x for x in copies if x[0] not in found][:3]:
                print(f"      missed: {c}")
    print("\n== quality, all compared exercises (score: the kit's is the rarity-weighted share of the smaller "
          "submission found in the other, copydetect's the larger side's share)")
    for method, t in totals.items():
        print(f"  {method:10s} false pairs {t['false']} (of {t['flagged']} flagged)   recall {t['found']}/{t['copies']} "
              f"= {t['found'] / t['copies']:.0%}   highest independent {t['top_false']:.2f}, lowest copy "
              f"{t['low_copy']:.2f}   {1000 * t['cpu'] / files:.1f} ms CPU per file")
    print(f"  kit thresholds: score >= {similarity.SIMILAR}, "
          f">= {similarity.MIN_SHARED} shared fingerprints; copydetect: its display threshold, either side")
    return {"files": files, **{method: {**t, "cpu_ms_per_file": 1000 * t["cpu"] / files} for method, t in totals.items()}}


def _kit_scores(sources: dict[str, str], stub: str):
    """(every pair's score, the pairs flagged) of the kit's detector."""
    code = [Submitted(name, "x", name, source) for name, source in sources.items()]
    flagged = {tuple(sorted(p.students)): p.score for p in similarity.similar_pairs(code, {"x": stub})[0]}
    thresholds = similarity.SIMILAR, similarity.MIN_SHARED
    similarity.SIMILAR, similarity.MIN_SHARED = 0.0, 1      # every pair sharing anything, with its score
    try:
        scores = {tuple(sorted(p.students)): p.score for p in similarity.similar_pairs(code, {"x": stub})[0]}
    finally:
        similarity.SIMILAR, similarity.MIN_SHARED = thresholds
    return scores, flagged


def _copydetect_scores(sources: dict[str, str], stub: str):
    """copydetect at its defaults (its CodeFingerprint and compare_files; a pair is listed when
    either side's similarity passes its display threshold, as its report does)."""
    from copydetect import CodeFingerprint, compare_files, defaults

    k = defaults.NOISE_THRESHOLD
    window = defaults.GUARANTEE_THRESHOLD - k + 1
    bp = CodeFingerprint("stub.py", k, 1, fp=io.StringIO(stub)).hashes
    prints = {name: CodeFingerprint("x.py", k, window, boilerplate=list(bp), fp=io.StringIO(source))
              for name, source in sources.items()}
    scores = {}
    for a, b in itertools.combinations(sorted(prints), 2):
        _, (sim_a, sim_b), _ = compare_files(prints[a], prints[b])
        scores[(a, b)] = max(sim_a, sim_b)
    return scores, {p: s for p, s in scores.items() if s > defaults.DISPLAY_THRESHOLD}


def cost(size: int, stems: list[str], stubs: dict[str, str]) -> dict:
    rng = random.Random(size)
    bases = {stem: list(corpus(stem).values()) for stem in stems}
    with tempfile.TemporaryDirectory(prefix="attnkit-bench-similarity-") as tmp:
        students, results = [], {}
        for n in range(size):
            name = f"student{n:05d}"
            folder = Path(tmp) / name
            folder.mkdir()
            for stem in stems:
                if n and rng.random() < 0.05:
                    copied = (Path(tmp) / f"student{rng.randrange(n):05d}" / f"{stem}.py").read_text(encoding="utf-8")
                    text = disguise(copied, seed=n)
                else:
                    own = disguise(_mixed(rng.sample(bases[stem], rng.choice((2, 3))), rng), seed=n)
                    text = _in_stub(own, stubs[stem])
                (folder / f"{stem}.py").write_text(text, encoding="utf-8")
            students.append(Student(name, folder))
            results[name] = SubmissionResult(name, tuple(
                ExerciseResult(stem, stem, (CheckResult(f"{stem}.x", stem, "x", "passed", 1.0, 1.0),),
                               graded_file=f"{stem}.py") for stem in stems), 0)
        before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        wall, cpu = time.perf_counter(), time.process_time()
        section = compare_class(students, results.get, stems, stubs)
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    files = size * len(stems)
    print(f"  {size:5d} students, {files} files: {wall:6.1f} s wall, {cpu:6.1f} s CPU "
          f"({1000 * cpu / files:.1f} ms CPU per file); {section['compared']['pairs_found']} pairs found; peak RSS {peak / 1024:.0f} MB (+{(peak - before) / 1024:.0f} MB)")
    return {"students": size, "files": files, "wall_s": wall, "cpu_s": cpu,
            "pairs_found": section["compared"]["pairs_found"], "peak_rss_mb": peak / 1024,
            "added_rss_mb": (peak - before) / 1024}


def _mixed(sources: list[str], rng: random.Random) -> str:
    """One file made of the imports of `sources` and each top-level function or class from one of them."""
    import ast

    imports, definitions = [], {}
    for source in sources:
        tree = ast.parse(source)
        imports += [ast.unparse(n) for n in tree.body if isinstance(n, (ast.Import, ast.ImportFrom))]
        for node in tree.body:
            if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
                definitions.setdefault(node.name, []).append(ast.unparse(node))
    chosen = [rng.choice(versions) for versions in definitions.values()]
    return "\n".join(dict.fromkeys(imports)) + "\n\n\n" + "\n\n\n".join(chosen) + "\n"


def _in_stub(code: str, stub: str) -> str:
    """The stub as a student fills it in: its functions replaced by `code`, everything else it
    gives (the markdown, the docstrings of the module, its demo blocks) kept as it is."""
    import ast

    tree = ast.parse(stub)
    lines = stub.splitlines()
    given = [(d.lineno - 1 - len(d.decorator_list), d.end_lineno) for d in tree.body
             if isinstance(d, (ast.FunctionDef, ast.ClassDef))]
    out, at = [], 0
    for i, (start, end) in enumerate(given):
        out += lines[at:start] + ([code] if i == 0 else [])
        at = end
    return "\n".join(out + lines[at:]) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="200,2000", help="class sizes for the cost (comma-separated)")
    parser.add_argument("--no-cost", action="store_true")
    parser.add_argument("--no-quality", action="store_true")
    args = parser.parse_args(argv)
    stubs = kit_stubs(RETURNS)
    stems = similarity.compared_exercises(stubs, RETURNS)
    print(f"compared exercises: {', '.join(stems)} (the hand computation's answers are numbers: not compared)")
    figures: dict = {"exercises": stems}
    headline = []
    if not args.no_quality:
        figures["quality"] = found = quality(stems, stubs)
        kit, theirs = found["kit"], found["copydetect"]
        headline += [record.figure("false pairs among independent correct solutions", kit["false"], "pairs",
                                   anchor="copydetect at its defaults", anchor_value=theirs["false"], target="none"),
                     record.figure("disguised copies found", kit["found"], f"of {kit['copies']}",
                                   anchor="copydetect at its defaults", anchor_value=theirs["found"], target="all")]
    if not args.no_cost:
        print("\n== cost: compare_class on a synthetic class (read, load, fingerprint, pair)")
        figures["cost"] = [cost(size, stems, stubs) for size in (int(s) for s in args.sizes.split(",") if s)]
        largest = figures["cost"][-1] if figures["cost"] else None
        if largest:
            headline.append(record.figure(f"comparing a class of {largest['students']:,} students", largest["cpu_s"],
                                          "CPU s"))
    name = "similarity" if not args.no_quality and not args.no_cost else \
        ("similarity-quality" if args.no_cost else "similarity-cost")
    record.write(name, figures, headline=headline)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
