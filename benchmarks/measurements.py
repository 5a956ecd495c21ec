"""Renders the results part of docs/measurements.md from benchmarks/results/*.json.

    python benchmarks/measurements.py              # rewrite the part between the markers
    python benchmarks/measurements.py --check      # exit 1 if the page differs from the records

Only the text between BEGIN and END below is written; the rest of the page (what each benchmark
compares, its anchor, its command) is prose kept by hand. Each record (benchmarks/record.py)
gives its headline figures, one table row each, and a line saying when, on which commit and on
what machine it was measured.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

KIT = Path(__file__).resolve().parent.parent
PAGE = KIT / "docs" / "measurements.md"
RESULTS = KIT / "benchmarks" / "results"
BEGIN = "<!-- BEGIN results: written by `python benchmarks/measurements.py`; do not edit by hand -->"
END = "<!-- END results -->"


def load(folder: Path) -> list[dict]:
    """Every record of `folder`, by benchmark name; a file that is not a record is said and skipped."""
    records = []
    for path in sorted(folder.glob("*.json")):
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as e:
            print(f"{path}: not read ({e})", file=sys.stderr)
            continue
        if isinstance(data, dict) and "benchmark" in data and "date" in data:
            data.setdefault("file", path.name)
            records.append(data)
        else:
            print(f"{path}: not a benchmark record (no benchmark and date)", file=sys.stderr)
    return records


def headline(record: dict) -> list[dict]:
    """The record's headline figures; a speed-up record (bench_speedups.py) gives its rows as such."""
    if record.get("headline"):
        return record["headline"]
    rows = record.get("rows") or []
    if str(record.get("benchmark", "")).startswith("speedups"):
        return [{"figure": f"`{r['path']}` with {r['off'].lstrip('-')} off" if r["off"].startswith("-")
                 else f"`{r['path']}` with every speed-up off", "value": r.get("wall_s", r.get("median_s")),
                 "unit": "s", "anchor": "every speed-up on", "ratio": r.get("wall_off_on", r.get("ratio_off_on")),
                 "ratio_is": "value / anchor",
                 "target": "at least 1.10x, or the speed-up goes"}
                for r in rows if r.get("off") != "all on"]
    return []


def number(value) -> str:
    if isinstance(value, bool) or value is None:
        return "" if value is None else str(value)
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        if value == 0:
            return "0"
        magnitude = abs(value)
        return f"{value:,.0f}" if magnitude >= 100 else f"{value:.3g}" if magnitude >= 0.01 else f"{value:.2g}"
    return str(value)


def cell(text: str) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def ratio(row: dict) -> str:
    if row.get("ratio") is None:
        return ""
    reads = {"anchor / value": " as fast", "value / anchor": " the anchor"}.get(row.get("ratio_is", ""), "")
    return f"{row['ratio']:.2f}x{reads}"


def render(records: list[dict]) -> str:
    """The Markdown between the markers."""
    if not records:
        return ("No records yet: a benchmark run writes `benchmarks/results/<name>.json`, then "
                "`python benchmarks/measurements.py` shows it here.")
    lines = ["| figure | value | anchor | ratio | target | record |", "|---|---|---|---|---|---|"]
    for record in records:
        for row in headline(record):
            anchor = row.get("anchor") or ""
            if row.get("anchor_value") is not None:
                anchor += f": {number(row['anchor_value'])} {row.get('unit', '')}".rstrip()
            lines.append("| " + " | ".join(cell(x) for x in (
                row["figure"], f"{number(row['value'])} {row.get('unit', '')}".strip(), anchor, ratio(row),
                row.get("target") or "", record["benchmark"])) + " |")
    lines += ["", "Each record: when, on which commit, on what machine, by which command."]
    lines.append("")
    for record in records:
        machine = record.get("machine") or {}
        load = machine.get("load_before")
        after = machine.get("load_after")
        where = ", ".join(x for x in (
            f"{machine['cpus']} cores" if machine.get("cpus") else "", machine.get("cpu") or "",
            f"{machine['memory_gb']} GB" if machine.get("memory_gb") else "",
            f"Python {machine['python']}" if machine.get("python") else "",
            f"load {load[0]:.1f} -> {after[0]:.1f}" if load and after else "") if x)
        commit = record.get("commit", "?") + (" (with uncommitted changes)" if record.get("dirty") else "")
        command = f"; `{record['command']}`" if record.get("command") else ""
        lines.append(f"- **{record['benchmark']}** ({record.get('file', '')}): {record['date'][:16].replace('T', ' ')}"
                     f", commit {commit}; {where}{command}")
    return "\n".join(lines)


def page_with(page: str, block: str) -> str:
    if BEGIN not in page or END not in page:
        raise SystemExit(f"{PAGE}: the markers are missing ({BEGIN!r} ... {END!r})")
    head, rest = page.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    return f"{head}{BEGIN}\n{block}\n{END}{tail}"


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--results", type=Path, default=RESULTS, help="the records' folder (default: benchmarks/results)")
    p.add_argument("--page", type=Path, default=PAGE)
    p.add_argument("--check", action="store_true", help="say whether the page is up to date; write nothing")
    args = p.parse_args(argv)
    page = args.page.read_text(encoding="utf-8")
    new = page_with(page, render(load(args.results)))
    if args.check:
        if new != page:
            print(f"{args.page} differs from {args.results}: run `python benchmarks/measurements.py`")
            return 1
        return 0
    if new != page:
        args.page.write_text(new, encoding="utf-8")
        print(f"wrote {args.page}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
