"""Grade the diagnosis corpus through the real pipeline and measure how well mistakes are named.

    python scripts/measure_diagnosis.py [--stem attention] [--verbose] [--json out.json]

The corpus lives in tests/corpus/<stem>/correct/<style>.py|.ipynb (honest, right answers in
different styles), tests/corpus/<stem>/buggy/<misconception_id>[__<variant>].py (exactly one
mistake, named by the file; the label `unnamed` is a mistake the catalogue has no name for, which must
lose points and be named as nothing: a generic hint or an observation, never a wrong name) and
tests/corpus/<stem>/degenerate/<what>.py (zeros, constants, nan,
made-up numbers: they must earn nothing at all). Each file is graded as the exercise <stem> by
autograder.grading.submission.grade_exercise, with the real sandbox, as if it were the student's <stem>.py.

Prints: how many correct submissions get full marks (must be all), how many buggy ones get
full marks (must be none), how many degenerate ones earn any point (must be none), the same per
class of mistake (CLASSES), the diagnosis accuracy (the fraction of buggy submissions whose
label is among the misconception ids reported on their failed checks), and a table of the
buggy submissions whose label was not reported. The exit code is non-zero when a correct
submission loses points or a buggy one does not.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from autograder.checks import CHECKS  # noqa: E402
from autograder.config import load_course  # noqa: E402
from autograder.checks.contract import STEMS  # noqa: E402
from autograder.grading.submission import grade_exercise  # noqa: E402
from autograder.intake.load import LoadError, SourceFile, read_source  # noqa: E402
from autograder.results import ExerciseResult  # noqa: E402
from autograder.sandbox import Sandbox  # noqa: E402

CORPUS = ROOT / "tests" / "corpus"
UNNAMED = "unnamed"   # the label of a mistake no misconception names: "diagnosed" when nothing is named
TARGET_ACCURACY = 0.98
KINDS = ("correct", "buggy", "degenerate")

# The classes of mistake counted apart, by the label of a buggy file; every other label is "other".
CLASSES = {
    "masks": {"mask_ignored", "mask_inverted", "mask_after_softmax", "mask_fill_zero", "mask_additive",
              "mask_always_causal", "mask_rank_ignored", "mask_upper_triangular", "mask_excludes_diagonal",
              "causal_mask_additive", "causal_mask_off_by_one", "mask_transposed", "mask_boolean_index",
              "mask_bitwise_not"},
    "arguments": {"seed_ignored", "n_trials_ignored", "entropy_log2", "variance_not_std", "dims_ignored",
                  "seq_len_ignored", "n_trials_off_by_one"},
    "exceptions": {"transpose_all_axes", "array_truth_value", "softmax_no_keepdims", "keys_not_transposed",
                   "transpose_fixed_axes"},
    "precision": {"low_precision_dtype", "softmax_underflow", "softmax_unstable"},
    "heads": {"weights_averaged_over_heads", "heads_not_split", "reshape_without_transpose",
              "merge_without_transpose", "merge_wrong_axes", "split_interleaved"},
    "unnamed": {UNNAMED},
}


def class_of(g: "Graded") -> str:
    if g.kind != "buggy":
        return g.kind
    return next((name for name, labels in CLASSES.items() if g.label in labels), "other")


@dataclass
class Graded:
    stem: str
    kind: str                    # "correct" | "buggy" | "degenerate"
    path: Path
    label: str                   # the misconception id in the file name ("" for correct ones)
    result: ExerciseResult
    reported: set[str] = field(default_factory=set)

    @property
    def name(self) -> str:
        return f"{self.stem}/{self.kind}/{self.path.name}"

    @property
    def full(self) -> bool:
        return self.result.score == self.result.max_score

    @property
    def diagnosed(self) -> bool:
        return not self.reported if self.label == UNNAMED else self.label in self.reported


def corpus_files(stems=STEMS, corpus: Path = CORPUS) -> list[tuple[str, str, Path]]:
    """(stem, "correct" | "buggy", path) for every corpus submission, in a stable order."""
    files = []
    for stem in stems:
        for kind in KINDS:
            folder = corpus / stem / kind
            if folder.is_dir():
                files += [(stem, kind, p) for p in sorted(folder.iterdir())
                          if p.suffix in (".py", ".ipynb") and not p.name.startswith(("_", "."))]
    return files


def label_of(path: Path) -> str:
    return path.stem.split("__", 1)[0]


def load_as(stem: str, path: Path) -> SourceFile | LoadError:
    """A corpus file as the submission's <stem>.py (or .ipynb): what load.load_stem would give."""
    source = read_source(path, stem)
    filename = f"{stem}{path.suffix}"
    if isinstance(source, LoadError):
        return LoadError(stem, filename, source.message)
    return SourceFile(stem, filename, source)


def grade_corpus(sandbox: Sandbox, course, stems=STEMS, corpus: Path = CORPUS) -> list[Graded]:
    graded = []
    for stem, kind, path in corpus_files(stems, corpus):
        result = grade_exercise(stem, load_as(stem, path), course, sandbox)
        reported = {m for c in result.checks if not c.passed for m in c.misconceptions}
        graded.append(Graded(stem, kind, path, label_of(path) if kind == "buggy" else "", result, reported))
    return graded


def summary(graded: list[Graded]) -> dict:
    correct = [g for g in graded if g.kind == "correct"]
    buggy = [g for g in graded if g.kind == "buggy"]
    degenerate = [g for g in graded if g.kind == "degenerate"]
    failed_checks = [(g, c) for g in buggy for c in g.result.checks if c.status == "failed"]
    classes = {}
    for g in buggy:
        row = classes.setdefault(class_of(g), {"buggy": 0, "false_pass": 0, "named": 0})
        row["buggy"] += 1
        row["false_pass"] += g.full
        row["named"] += g.diagnosed
    return {
        "degenerate": len(degenerate),
        "degenerate_scored": sum(g.result.score > 0 for g in degenerate),
        "classes": classes,
        "correct": len(correct),
        "correct_full": sum(g.full for g in correct),
        "buggy": len(buggy),
        "buggy_full": sum(g.full for g in buggy),
        "diagnosed": sum(g.diagnosed for g in buggy),
        "accuracy": sum(g.diagnosed for g in buggy) / len(buggy) if buggy else 1.0,
        "failed_checks": len(failed_checks),
        "failed_checks_named": sum(g.label in c.misconceptions for g, c in failed_checks),
        # checks that name a mistake, but not the one the file makes (a tie naming both is not wrong)
        "wrong_names": sum(bool(c.misconceptions) and g.label not in c.misconceptions
                           for g in buggy for c in g.result.checks if not c.passed),
    }


def _pct(n: int, d: int) -> str:
    return f"{n}/{d} ({100.0 * n / d:.1f}%)" if d else "0/0"


def report(graded: list[Graded], s: dict, verbose: bool = False) -> str:
    lines = []
    if verbose:
        for g in graded:
            lines.append(f"{g.name}: {g.result.score:g}/{g.result.max_score:g}"
                         + (f"  label={g.label} reported={sorted(g.reported)}" if g.kind == "buggy" else ""))
            for c in g.result.checks:
                if not c.passed:
                    lines.append(f"    {c.check_id} [{c.status}] {c.message[:160]}")
                    if c.hint:
                        lines.append(f"      hint ({', '.join(c.misconceptions) or 'observation'}): "
                                     f"{c.hint[:300]}")
        lines.append("")
    lines += [
        "Diagnosis corpus",
        f"  correct submissions graded full:  {_pct(s['correct_full'], s['correct'])}   (must be 100%)",
        f"  buggy submissions graded full:    {_pct(s['buggy_full'], s['buggy'])}   (must be 0%)",
        f"  degenerate ones earning a point:  {_pct(s['degenerate_scored'], s['degenerate'])}   (must be 0%)",
        f"  diagnosis accuracy:               {_pct(s['diagnosed'], s['buggy'])}   "
        f"(label among the ids reported on failed checks; target >= {TARGET_ACCURACY:.0%})",
        f"  failed checks naming the label:   {_pct(s['failed_checks_named'], s['failed_checks'])}   "
        f"(per check, status 'failed' only)",
        f"  checks naming another mistake:    {s['wrong_names']}   (a name the file's mistake does not have)",
    ]
    lines += ["", f"  {'class':12s} {'buggy':>6s} {'false passes':>13s} {'named':>14s}"]
    for name, row in sorted(s["classes"].items()):
        lines.append(f"  {name:12s} {row['buggy']:>6d} {row['false_pass']:>13d} {_pct(row['named'], row['buggy']):>14s}")
    lost = [g for g in graded if g.kind == "correct" and not g.full]
    full = [g for g in graded if (g.kind == "buggy" and g.full) or (g.kind == "degenerate" and g.result.score > 0)]
    missed = [g for g in graded if g.kind == "buggy" and not g.diagnosed and not g.full]
    if lost or full or missed:
        lines += ["", "Mismatches", f"  {'submission':55s} {'score':>9s}  {'label':26s} reported"]
        for g in lost + full + missed:
            what = {"correct": "correct, lost points", "degenerate": "degenerate, earned points"}.get(
                g.kind, g.label + (" (graded full)" if g.full else ""))
            lines.append(f"  {g.name:55s} {g.result.score:>4g}/{g.result.max_score:<4g}  {what:26s} "
                         f"{', '.join(sorted(g.reported)) or '-'}")
            for c in g.result.checks:
                if (g.kind == "degenerate" and c.passed) or (
                        g.kind != "degenerate" and not c.passed and (g.kind == "correct" or g.label not in c.misconceptions)):
                    lines.append(f"      {c.check_id} [{c.status}] {c.message[:140]}")
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--stem", action="append", choices=STEMS, help="only these exercises (repeatable)")
    parser.add_argument("--verbose", "-v", action="store_true", help="every submission's failed checks and hints")
    parser.add_argument("--json", type=Path, help="also write the summary and per-file results as JSON")
    parser.add_argument("--corpus", type=Path, default=CORPUS, help="another corpus folder (<stem>/correct|buggy/...)")
    args = parser.parse_args(argv)
    stems = tuple(args.stem) if args.stem else STEMS
    course = load_course(known_checks={stem: [c.id for c in checks] for stem, checks in CHECKS.items()})
    started = time.monotonic()
    with Sandbox(course.limits) as sandbox:
        graded = grade_corpus(sandbox, course, stems, args.corpus)
    s = summary(graded)
    print(report(graded, s, args.verbose))
    print(f"  ({len(graded)} submissions graded in {time.monotonic() - started:.1f} s)")
    if args.json:
        args.json.write_text(json.dumps({"summary": s, "files": [
            {"file": g.name, "label": g.label, "score": g.result.score, "max": g.result.max_score,
             "reported": sorted(g.reported)} for g in graded]}, indent=2))
    ok = s["correct_full"] == s["correct"] and s["buggy_full"] == 0 and s["degenerate_scored"] == 0
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
