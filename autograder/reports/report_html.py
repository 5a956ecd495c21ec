"""OUT/report.html: the class report a teacher shares with TAs, rendered from the summary with
templates/report.html.j2.

One self-contained file: inline CSS, the kit's pictures inline (report_figures.py), no script, no
network. The data is the summary's (class_summary.py, plus what finish_run adds: when it was
written, the preflight); this module only draws the pictures and renders. Every name and message
is student text, escaped by the template (autoescape).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from datetime import datetime

from autograder.reports import report_figures as figures
from autograder.reports.class_summary import feedback_link
from autograder.reports.status import STATUSES, scores_over
from autograder.reports.templating import render_pieces

NAMES_MAX = 40          # students named inline in a misconception row; the rest fold away
ROWS_SHOWN = 50         # longer tables show their first rows; the rest fold away
# The limits a course sets (course.yml `limits:`), as the instructor reads them: name -> (what, unit).
COURSE_LIMITS = {"call_timeout": ("one call (CPU time)", "s"), "import_timeout": ("importing a file (CPU time)", "s"),
                 "submission_timeout": ("all checks of a submission (wall clock)", "s"),
                 "cpu_seconds": ("CPU time of one exercise", "s"), "memory_mb": ("memory", "MB"),
                 "max_processes": ("processes", ""), "output_kb": ("printed output", "KB")}
# The sandbox's own settings (their defaults suit every course): folded away, in the same words.
SANDBOX_LIMITS = {"max_frame_bytes": ("largest answer taken from a child", "MB"),
                  "max_restarts": ("fresh children after a timeout or crash", ""),
                  "drop_privileges": ("children run as an unprivileged user", ""),
                  "tmp_mb": ("the private /tmp of a child", "MB"),
                  "wall_factor": ("a busy call is stopped, in wall-clock time, at its limit times", "")}
# A limit's name ending -> how the name reads, and the value's unit ("memory_mb" -> "memory", "2048 MB").
UNITS = (("_timeout", " timeout", "s"), ("_seconds", " time", "s"), ("_mb", "", "MB"), ("_kb", "", "KB"))


def report_html(s: dict) -> str:
    return "".join(report_pieces(s))


def report_pieces(s: dict) -> Iterator[str]:
    """The report in pieces, in order (finish_run writes them as they come)."""
    checks_by_exercise = [(e, [c for c in s["checks"] if c["exercise"] == e["stem"]]) for e in s["exercises"]]
    names = s.get("names") or {}
    labels = shown_names(names)
    rank = {student: i for i, student in enumerate(names)}      # finish_run wrote them by last name
    rows = sorted(s["rows"], key=lambda r: (rank.get(r.student, len(rank)), r.student)) if names else s["rows"]
    pictures = {
        "histogram": figures.histogram(s["scores"]["values"], s["max_score"]) if s["scores"]["values"] else None,
        "exercises": figures.pass_rates([e["stem"] for e in s["exercises"]], [e["pass_rate"] for e in s["exercises"]]),
        "checks": {e["stem"]: figures.pass_rates([c["check_id"].split(".", 1)[-1] for c in cs],
                                                 [c["pass_rate"] for c in cs])
                   for e, cs in checks_by_exercise if cs},
        "heat_map": figures.heat_map(rows, s["checks"], label=lambda student: labels.get(student, student)),
    }
    settings, sandbox_settings = _settings(s)
    return render_pieces("report.html.j2", s=s, pictures=pictures, checks_by_exercise=checks_by_exercise,
                  names=names, labels=labels, rows=rows, statuses=STATUSES, scores_over=scores_over(s),
                  class_size=sum(s["statuses"].values()) if s.get("statuses") else s["students"],
                  late=s.get("late"), overridden=any(r.override for r in rows),
                  absent=set((s.get("roster") or {}).get("not_submitted_ids", ())),     # no feedback page
                  generated=_when(s.get("generated")), legend=figures.LEGEND, colours=figures.legend_colours(),
                  trouble_kinds=sorted(Counter(t["kind"] for t in s["trouble"]).items()),
                  settings=settings, sandbox_settings=sandbox_settings, feedback_link=feedback_link, names_max=NAMES_MAX, rows_shown=ROWS_SHOWN)


def shown_names(names: dict[str, str]) -> dict[str, str]:
    """Each student's name as the report shows it: the roster's, with the id beside it where two
    students share a name (in the heat map and the similar pairs, where no id column stands)."""
    count = Counter(names.values())
    return {student: f"{name} ({student})" if count[name] > 1 else name for student, name in names.items()}


def _when(stamp: str | None) -> str | None:
    """The summary's ISO 8601 time as people read it (UTC kept as written)."""
    if not stamp:
        return None
    try:
        return datetime.fromisoformat(stamp).strftime("%Y-%m-%d %H:%M %Z").strip()
    except ValueError:
        return stamp


def _settings(s: dict) -> tuple[list[tuple[str, list[tuple[str, str]]]], list[tuple[str, str]]]:
    """The course's settings as (group, [(name, value as read)]), in the instructor's units, and
    the sandbox's own settings apart (the report folds them away)."""
    settings = s["settings"]
    points = ", ".join(f"{e['stem']} {_plain(e['max_score'])}" for e in s["exercises"])
    grading = [("points", f"{_plain(s['max_score'])} in all ({points})" if points else _plain(s["max_score"])),
               ("seed", str(s["seed"])), ("hints", str(settings["hints"])),
               ("show hidden details", "yes" if settings["show_hidden"] else "no"),
               ("both forms (.py and .ipynb)", str(settings["both_forms"]))]
    limits = settings["limits"]
    shown = [_limit(name, limits[name], COURSE_LIMITS) for name in COURSE_LIMITS if name in limits]
    folded = [_limit(name, value, SANDBOX_LIMITS) for name, value in limits.items() if name not in COURSE_LIMITS]
    tolerances = [(name.replace("_", " "), _plain(value)) for name, value in settings["tolerances"].items()]
    groups = [("grading", grading), ("limits per submission", shown), ("tolerances", tolerances)]
    if "preflight" in s:
        groups.append(("this run", [("preflight", s["preflight"]["says"])]))
    return groups, folded


def _limit(name: str, value, words: dict) -> tuple[str, str]:
    if name in words:
        what, unit = words[name]
        if name == "max_frame_bytes":
            value = value / (1 << 20)
        return what, f"{_plain(value)} {unit}".strip()
    for suffix, reads, unit in UNITS:
        if name.endswith(suffix):
            return (name[:-len(suffix)] + reads).replace("_", " "), f"{_plain(value)} {unit}"
    return name.replace("_", " "), _plain(value)


def _plain(value) -> str:
    """A setting's value as a person writes it: 1e-05, 'rtol 1e-05, atol 1e-08', yes/no."""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:g}"
    if isinstance(value, dict):
        return ", ".join(f"{k.replace('_', ' ')} {_plain(v)}" for k, v in value.items())
    if isinstance(value, (list, tuple)):
        return ", ".join(_plain(v) for v in value)
    return "-" if value is None else str(value)
