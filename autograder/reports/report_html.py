"""OUT/report.html: the class report a teacher shares with TAs, drawn from the summary.

One self-contained file: inline CSS, plots drawn with matplotlib as inline SVG (a PNG for the
check-by-student heat map, which would be a very large SVG for 1,000 students), no script, no
network. Every name and message is text from students, escaped before it is written.
"""

from __future__ import annotations

import base64
import html
import io
import warnings
from collections import Counter

import numpy as np

from autograder.reports.pictures import figure_svg, _pyplot

STYLE = """body{font:14px/1.45 system-ui,sans-serif;max-width:78em;margin:1.5em auto;padding:0 1em;color:#222}
h1{font-size:1.6em}h2{margin-top:1.8em;border-bottom:1px solid #ddd}
table{border-collapse:collapse;margin:.5em 0}td,th{border:1px solid #ddd;padding:.15em .5em;text-align:left}
td.n,th.n{text-align:right}.muted{color:#666}svg,img{max-width:100%;height:auto}
details{margin:.2em 0}summary{cursor:pointer}.grid{display:flex;flex-wrap:wrap;gap:1em}
.stat{border:1px solid #ddd;border-radius:6px;padding:.4em .9em}.stat b{display:block;font-size:1.4em}"""
# Heat map colours per status letter (class_summary.STATUS_CODE).
COLOURS = {"P": (0.20, 0.63, 0.33), "F": (0.84, 0.19, 0.15), "E": (0.55, 0.10, 0.55),
           "N": (0.99, 0.75, 0.25), "M": (0.88, 0.88, 0.88)}
LEGEND = {"P": "passed", "F": "wrong answer", "E": "error (raised, hung, crashed, refused)",
          "N": "not implemented", "M": "not submitted"}
NAMES_MAX = 40          # students named inline in a misconception row; the rest fold away


def esc(text) -> str:
    return html.escape("" if text is None else str(text))


def _pts(x) -> str:
    return "" if x is None else f"{x:g}"


def _pct(x) -> str:
    return "" if x is None else f"{100 * x:.0f}%"


def _link(student: str, href: str) -> str:
    return f'<a href="{esc(href)}">{esc(student)}</a>'


def report_html(s: dict) -> str:
    parts = [f"<h1>{esc(s['course'])}: {esc(s['assignment'])}</h1>", _headline(s),
             "<h2>Score distribution</h2>", _histogram(s),
             "<h2>Exercises</h2>", _exercises(s),
             "<h2>Checks</h2>", _check_rates(s),
             "<h2>Check by student</h2>", _heat_map(s),
             "<h2>Misconceptions</h2>", _misconceptions(s),
             "<h2>Submissions that hung, crashed or were refused</h2>", _trouble(s),
             *(("<h2>Roster</h2>", _roster(s["roster"])) if s.get("roster") else ()),
             "<h2>Slowest submissions</h2>", _slowest(s),
             "<h2>How files were taken in</h2>", _intake(s),
             "<h2>Students</h2>", _students(s),
             "<h2>Course settings</h2>", _settings(s)]
    title = esc(f"{s['course']}: {s['assignment']} - class report")
    return (f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>{title}</title>'
            f'<meta name="viewport" content="width=device-width, initial-scale=1"><style>{STYLE}</style>'
            f"</head><body>{''.join(parts)}</body></html>\n")


def _headline(s: dict) -> str:
    sc = s["scores"]
    stats = [("students", s["students"]), ("submitted", s["submitted"]),
             ("mean", f"{sc['mean']:.2f} / {s['max_score']:g}" if sc["mean"] is not None else "-"),
             ("median", _pts(sc["median"]) or "-"), ("full marks", sc["full_marks"]), ("seed", s["seed"])]
    return '<div class="grid">' + "".join(f'<div class="stat"><b>{esc(v)}</b>{esc(k)}</div>' for k, v in stats) + \
        "</div>"


def _histogram(s: dict) -> str:
    values = s["scores"]["values"]
    if not values:
        return "<p>No submissions.</p>"
    plt = _pyplot()
    fig, ax = plt.subplots(1, 1, figsize=(8, 2.8))
    top = s["max_score"]
    bins = np.linspace(0, top, min(24, int(top) + 1) + 1) if top > 0 else 10
    ax.hist(values, bins=bins, color="#3b7dd8", edgecolor="white")
    ax.set_xlabel(f"total score (of {top:g})")
    ax.set_ylabel("students")
    return _figure(fig, "score distribution")


def _bars(labels: list[str], rates: list[float | None], title: str, height: float) -> str:
    plt = _pyplot()
    fig, ax = plt.subplots(1, 1, figsize=(8, height))
    y = np.arange(len(labels))
    values = [np.nan if r is None else 100 * r for r in rates]
    ax.barh(y, values, color=["#2e9e55" if (v or 0) >= 80 else "#e0a030" if (v or 0) >= 50 else "#d6302a"
                              for v in values])
    ax.set_yticks(y, labels, fontsize=7 if len(labels) > 12 else 9)
    ax.invert_yaxis()
    ax.set_xlim(0, 100)
    ax.set_xlabel("% of graded submissions that pass")
    return _figure(fig, title)


def _exercises(s: dict) -> str:
    rows = "".join(f"<tr><td>{esc(e['stem'])}</td><td>{esc(e['title'])}</td><td class=n>{e['submitted']}</td>"
                   f"<td class=n>{_pts(e['mean'])}</td><td class=n>{_pts(e['max_score'])}</td>"
                   f"<td class=n>{e['full_marks']}</td><td class=n>{_pct(e['pass_rate'])}</td></tr>"
                   for e in s["exercises"])
    table = ("<table><tr><th>exercise</th><th>title</th><th class=n>submitted</th><th class=n>mean</th>"
             "<th class=n>max</th><th class=n>full marks</th><th class=n>checks passed</th></tr>" + rows + "</table>")
    return _bars([e["stem"] for e in s["exercises"]], [e["pass_rate"] for e in s["exercises"]],
                 "pass rate per exercise", 0.4 + 0.35 * len(s["exercises"])) + table


def _check_rates(s: dict) -> str:
    checks = s["checks"]
    rows = "".join(f"<tr><td>{esc(c['check_id'])}</td><td class=n>{_pts(c['points'])}</td>"
                   f"<td class=n>{_pct(c['pass_rate'])}</td><td class=n>{c['failed']}</td><td class=n>{c['error']}</td>"
                   f"<td class=n>{c['not_implemented']}</td><td class=n>{c['missing']}</td></tr>" for c in checks)
    table = ("<details><summary>the numbers</summary><table><tr><th>check</th><th class=n>points</th>"
             "<th class=n>pass rate</th><th class=n>wrong</th><th class=n>error</th><th class=n>not implemented</th>"
             "<th class=n>not submitted</th></tr>" + rows + "</table></details>")
    return _bars([c["check_id"] for c in checks], [c["pass_rate"] for c in checks], "pass rate per check",
                 0.4 + 0.17 * len(checks)) + table


def _heat_map(s: dict) -> str:
    rows = [r for r in s["rows"] if r["checks"]]
    if not rows:
        return "<p>No checks were run.</p>"
    width = max(len(r["checks"]) for r in rows)
    grid = np.ones((len(rows), width, 3))
    for i, r in enumerate(rows):
        for j, code in enumerate(r["checks"]):
            grid[i, j] = COLOURS.get(code, (1, 1, 1))
    plt = _pyplot()
    named = len(rows) <= 60
    fig, ax = plt.subplots(1, 1, figsize=(9, min(40.0, 1.2 + (0.18 if named else 0.012) * len(rows))))
    ax.imshow(grid, aspect="auto", interpolation="nearest")
    ax.set_xticks(range(width), [c["check_id"] for c in s["checks"]][:width], rotation=90, fontsize=6)
    if named:
        ax.set_yticks(range(len(rows)), [r["student"] for r in rows], fontsize=7)
    else:
        ax.set_ylabel(f"{len(rows)} students, in the order of the table below")
    buf = io.BytesIO()
    with warnings.catch_warnings():    # a name in a script the font lacks: the table below shows it
        warnings.filterwarnings("ignore", message="Glyph .* missing from font")
        fig.savefig(buf, format="png", dpi=90, bbox_inches="tight", metadata={"Software": None})
    data = base64.b64encode(buf.getvalue()).decode()
    legend = " ".join(f'<span style="color:rgb({",".join(str(int(255 * c)) for c in COLOURS[k])})">&#9632;</span> '
                      f"{esc(v)}" for k, v in LEGEND.items())
    return (f'<img src="data:image/png;base64,{data}" alt="check by student heat map: one row per student, '
            f'one column per check">' + f"<p class=muted>{legend}</p>")


def _misconceptions(s: dict) -> str:
    if not s["misconceptions"]:
        return "<p>No misconception was recognised.</p>"
    out = ["<table><tr><th>misconception</th><th class=n>students</th><th>who</th></tr>"]
    for m in s["misconceptions"]:
        links = [_link(name, "feedback/" + _quoted(name)) for name in m["students"]]
        shown = ", ".join(links[:NAMES_MAX])
        if len(links) > NAMES_MAX:
            shown += f"<details><summary>{len(links) - NAMES_MAX} more</summary>{', '.join(links[NAMES_MAX:])}</details>"
        out.append(f"<tr><td>{esc(m['id'])}</td><td class=n>{m['count']}</td><td>{shown}</td></tr>")
    return "".join(out) + "</table>"


def _quoted(name: str) -> str:
    from autograder.reports.class_summary import feedback_link

    return feedback_link(name)[len("feedback/"):]


ROWS_SHOWN = 50         # longer tables show their first rows; the rest fold away


def _table(head: str, rows: list[str]) -> str:
    table = f"<table>{head}{''.join(rows[:ROWS_SHOWN])}</table>"
    if len(rows) > ROWS_SHOWN:
        table += (f"<details><summary>{len(rows) - ROWS_SHOWN} more</summary><table>{head}"
                  f"{''.join(rows[ROWS_SHOWN:])}</table></details>")
    return table


def _trouble(s: dict) -> str:
    if not s["trouble"]:
        return "<p>None.</p>"
    kinds = ", ".join(f"{n} {k}" for k, n in sorted(Counter(t["kind"] for t in s["trouble"]).items()))
    rows = [f"<tr><td>{_link(t['student'], t['feedback'])}</td><td>{esc(t['exercise'])}</td>"
            f"<td>{esc(t['kind'])}</td><td>{esc(t['message'])}</td></tr>" for t in s["trouble"]]
    return f"<p>{esc(kinds)}</p>" + _table(
        "<tr><th>student</th><th>exercise</th><th>what</th><th>message</th></tr>", rows)


def _roster(roster: dict) -> str:
    """Who on the roster handed in nothing, and which submissions match no roster row."""
    parts = []
    for key, title in (("not_submitted", "On the roster, no submission (a 0 in the exports)"),
                       ("not_on_roster", "Submissions matching no roster row (graded; match them by hand)")):
        names = roster[key]
        parts.append(f"<p>{esc(title)}: {len(names)}</p>" +
                     (f"<p>{esc(', '.join(names))}</p>" if names else ""))
    return "".join(parts)


def _slowest(s: dict) -> str:
    if not s["slowest"]:
        return "<p>No timings (results kept from an earlier run carry theirs).</p>"
    rows = "".join(f"<tr><td>{_link(r['student'], r['feedback'])}</td><td class=n>{r['duration_s']:.1f} s</td></tr>"
                   for r in s["slowest"])
    return "<table><tr><th>student</th><th class=n>grading time</th></tr>" + rows + "</table>"


def _intake(s: dict) -> str:
    if not s["intake"]:
        return "<p>Every file was where and as it should be.</p>"
    rows = [f"<tr><td>{_link(i['student'], 'feedback/' + _quoted(i['student']))}</td>"
            f"<td>{esc(i['exercise'])}</td><td>{esc(i['file'] or '')}</td>"
            f"<td>{esc(', '.join(i['flags']))}</td><td>{esc(i['note'])}</td></tr>" for i in s["intake"]]
    return _table("<tr><th>student</th><th>exercise</th><th>file graded</th><th>flags</th><th>note</th></tr>", rows)


def _students(s: dict) -> str:
    stems = [e["stem"] for e in s["exercises"]]
    head = "".join(f"<th class=n>{esc(st)}</th>" for st in stems)
    rows = "".join(f"<tr><td>{_link(r['student'], r['feedback'])}</td>"
                   + "".join(f"<td class=n>{_pts(r['exercises'].get(st))}</td>" for st in stems)
                   + f"<td class=n><b>{_pts(r['score'])}</b></td></tr>" for r in s["rows"])
    return (f"<details open><summary>{len(s['rows'])} students (an empty cell: not submitted)</summary>"
            f"<table><tr><th>student</th>{head}<th class=n>total</th></tr>{rows}</table></details>")


def _settings(s: dict) -> str:
    flat = {"seed": s["seed"], "hints": s["settings"]["hints"], "show_hidden": s["settings"]["show_hidden"],
            "both_forms": s["settings"]["both_forms"]}
    flat |= {f"limits.{k}": v for k, v in s["settings"]["limits"].items()}
    flat |= {f"tolerances.{k}": v for k, v in s["settings"]["tolerances"].items()}
    if "preflight" in s:
        flat["preflight"] = s["preflight"]["says"]
    rows = "".join(f"<tr><td>{esc(k)}</td><td>{esc(v)}</td></tr>" for k, v in flat.items())
    return f"<table>{rows}</table><p class=muted>summary schema {esc(s['schema'])}</p>"


def _figure(fig, label: str) -> str:
    return f'<figure role="img" aria-label="{esc(label)}">{figure_svg(fig)}</figure>'
