"""Pictures that teach better than numbers, on a student's feedback page.

`picture_data` keeps what a picture needs from a failed check as small plain data (it travels
in the result file): one matrix of the student's answer beside the expected one (at most
MAX_SIDE x MAX_SIDE), or the scaling statistics / plotted curves against the reference's.
Each exercise's descriptor names which of its checks get which picture (``Exercise.pictures``:
"weights", "scaling" or "figure"). A "weights" entry names checks of attention answers; what is
drawn follows what the check compares (its compare's part names): the attention weights when the
answer holds them (kind "weights": query position by key position), else the output (kind
"output": position by feature), each titled and labelled as what it is. `render` draws it into an
inline SVG string; no file, no network.
"""

from __future__ import annotations

import json
import math
from typing import Any

import numpy as np

from autograder.judge.syntax import TextMemo

MAX_SIDE = 12
STATS = ("std", "entropy", "max_weight")


def picture_data(check_id: str, answer: Any, expected: Any, inputs: dict | None = None) -> dict | None:
    """Small data for a picture of a failed check, or None when no picture would help. Which
    picture a check gets is said by its exercise's descriptor (``Exercise.pictures``)."""
    try:
        kind = picture_kind(check_id)
        if kind == "weights":
            return _attention(check_id, answer, expected)
        if kind == "scaling":
            return _scaling(answer, expected)
        if kind == "figure" and inputs is not None:
            return _figure(answer, inputs.get("results"))
    except (TypeError, ValueError, IndexError, KeyError, AttributeError):
        return None
    return None


def picture_kind(check_id: str) -> str | None:
    """The picture the descriptor names for a check: the entry of ``Exercise.pictures`` whose key
    (a function, or function.case) is the longest prefix of the check id after the stem."""
    from autograder.checks import EXERCISES

    stem, _, tail = check_id.partition(".")
    exercise = EXERCISES.get(stem)
    if exercise is None:
        return None
    keys = [k for k in exercise.pictures if tail == k or tail.startswith(k + ".")]
    return exercise.pictures[max(keys, key=len)] if keys else None


def _matrix(value) -> np.ndarray | None:
    """The first 2-D matrix of an array (first batch, first head), clipped to MAX_SIDE."""
    a = np.asarray(value, dtype=float)
    if a.ndim < 2:
        return None
    while a.ndim > 2:
        a = a[0]
    return a[:MAX_SIDE, :MAX_SIDE]


def _part_names(check_id: str) -> tuple[str, ...]:
    """What each part of the check's answer is, as its compare names them ("output", "weights");
    empty when the check does not say (an answer that is the weights alone, as in hand_computation)."""
    from autograder.checks import CHECKS

    check = next((c for c in CHECKS.get(check_id.partition(".")[0], ()) if c.id == check_id), None)
    for compare in (getattr(check, "match", None), getattr(check, "compare", None)):
        if getattr(compare, "names", None):
            return tuple(compare.names)
    return ()


def _attention(check_id: str, answer, expected) -> dict | None:
    """The weights of an attention answer when it holds them, else its output: drawn as what it is."""
    names = _part_names(check_id)
    drawn = "weights" if "weights" in names or not names else "output" if "output" in names else None
    if drawn is None:
        return None
    if len(names) > 1:
        at = names.index(drawn)
        answer, expected = answer[at], expected[at]
    elif not names and isinstance(answer, (tuple, list)) and len(answer) == 2:
        answer, expected = answer[1], expected[1]      # (output, weights), said by no compare
    student, reference = _matrix(answer), _matrix(expected)
    if student is None or reference is None:
        return None
    return {"kind": drawn, "student": _plain(student), "expected": _plain(reference)}


def _scaling(answer, expected) -> dict | None:
    if not isinstance(answer, dict) or not isinstance(expected, dict):
        return None
    dims = sorted(int(d) for d in expected)
    student = {str(d): {k: _num(v) for k, v in dict(answer.get(d, answer.get(str(d), {})) or {}).items()}
               for d in dims}
    return {"kind": "scaling", "dims": dims, "student": student,
            "expected": {str(d): {k: _num(v) for k, v in expected[d].items()} for d in dims}}


def _figure(answer, results) -> dict | None:
    if not isinstance(answer, dict) or not isinstance(results, dict):
        return None
    lines = [{"label": str(ln.get("label", ""))[:60], "x": [_num(x) for x in ln.get("x", [])][:32],
              "y": [_num(y) for y in ln.get("y", [])][:32]}
             for ax in answer.get("axes", [])[:4] for ln in ax.get("lines", [])[:12]]
    dims = sorted(int(d) for d in results)
    expected = {str(d): {k: _num(v) for k, v in results[d].items()} for d in dims}
    return {"kind": "figure", "dims": dims, "student_lines": lines, "expected": expected}


def _num(v) -> float | None:
    try:
        f = float(v)
    except (TypeError, ValueError):
        return None
    return round(f, 6) if math.isfinite(f) else None


def _plain(a: np.ndarray) -> list[list[float | None]]:
    return [[_num(x) for x in row] for row in a]


# ---------------------------------------------------------------- drawing

def render(visual: dict) -> str | None:
    """An inline <svg> element for the picture (None when the data cannot be drawn). Students
    who make the same mistake get the same answer on the same seeded inputs: a picture drawn
    lately is not drawn again. Remembered by the digest of its data (intake.syntax.TextMemo), at
    most DRAWN_KEPT: many pictures kept with their data as keys grew the grader with the class."""
    try:
        text = json.dumps(visual, sort_keys=True, allow_nan=False)
    except (TypeError, ValueError):
        return _render(visual)
    return _DRAWN.get(text, lambda: _render(visual))


DRAWN_KEPT = 128     # pictures remembered: a class's common mistakes, not every picture of the class
_DRAWN = TextMemo(DRAWN_KEPT)


def _render(visual: dict) -> str | None:
    try:
        draw = {"weights": _draw_matrices, "output": _draw_matrices, "scaling": _draw_scaling,
                "figure": _draw_figure}[visual["kind"]]
        return draw(visual)
    except (KeyError, TypeError, ValueError, IndexError):
        return None


def _array(rows) -> np.ndarray:
    return np.array([[np.nan if x is None else x for x in row] for row in rows], dtype=float)


def _draw_matrices(v: dict) -> str:
    from autograder.reports.heatmap_svg import LOOKS, matrices_svg

    return matrices_svg(_array(v["student"]), _array(v["expected"]), LOOKS[v["kind"]])


def _draw_scaling(v: dict) -> str:
    from autograder.reports.scaling_svg import scaling_svg

    return scaling_svg([int(d) for d in v["dims"]], v["student"], v["expected"], STATS)


def _draw_figure(v: dict) -> str:
    from autograder.reports.scaling_svg import plot_svg

    return plot_svg([int(d) for d in v["dims"]], v["student_lines"], v["expected"], STATS)
