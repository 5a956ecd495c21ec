"""Grader side: what a child sent, checked again before anything else sees it.

The child converts a return value to plain data of the declared kind (convert.py), but the
child is untrusted: every value is validated here for its exact type, dtype and structure,
figures included. Nothing here raises anything but `Invalid`.
"""

from __future__ import annotations

from typing import Any

import numpy as np


class Invalid(Exception):
    pass


def check_kind(kind) -> Any:
    """The kind as sent over JSON; raises ValueError for a kind the sandbox does not know."""
    if kind in ("array", "float", "float_dict_dict", "figure"):
        return kind
    if isinstance(kind, (tuple, list)) and len(kind) >= 2 and kind[0] == "tuple":
        return ["tuple"] + [check_kind(k) for k in kind[1:]]
    raise ValueError(f"unknown return kind {kind!r}")


def validate(value: Any, dtype: Any, kind: Any) -> tuple[Any, Any]:
    if isinstance(kind, list):
        kinds = kind[1:]
        if not isinstance(value, tuple) or len(value) != len(kinds):
            raise Invalid("a tuple of the wrong length")
        if not isinstance(dtype, list) or len(dtype) != len(kinds):
            raise Invalid("dtypes of the wrong length")
        pairs = [validate(v, d, k) for v, d, k in zip(value, dtype, kinds)]
        return tuple(v for v, _ in pairs), [d for _, d in pairs]
    if not (dtype is None or (isinstance(dtype, str) and len(dtype) <= 40)):
        raise Invalid("a malformed dtype")
    if kind == "array":
        if type(value) is not np.ndarray or value.dtype != np.float64:
            raise Invalid("not a float64 array")
        return value, dtype
    if kind == "float":
        if type(value) is int:
            value = float(value)
        if type(value) is not float:
            raise Invalid("not a float")
        return value, dtype
    if kind == "float_dict_dict":
        return _validate_dict(value), dtype
    if kind == "figure":
        return _validate_figure(value), dtype
    raise Invalid(f"unknown kind {kind!r}")


def _number(x: Any) -> float:
    if type(x) in (int, float):
        return float(x)
    raise Invalid("not a number")


def _validate_dict(value: Any) -> dict[int, dict[str, float]]:
    if type(value) is not dict:
        raise Invalid("not a dict")
    out: dict[int, dict[str, float]] = {}
    for key, inner in value.items():
        if type(key) is not str or not key.lstrip("-").isdigit() or len(key) > 30:
            raise Invalid("a key that is not an int")
        if type(inner) is not dict:
            raise Invalid("an inner value that is not a dict")
        row = {}
        for name, number in inner.items():
            if type(name) is not str:
                raise Invalid("an inner key that is not a str")
            row[name] = _number(number)
        out[int(key)] = row
    return out


def _text_field(d: dict, key: str) -> str:
    value = d.get(key, "")
    if type(value) is not str:
        raise Invalid(f"{key} is not text")
    return value


def _int_field(d: dict, key: str) -> int:
    value = d.get(key, 0)
    if type(value) is not int or value < 0:
        raise Invalid(f"{key} is not a count")
    return value


def _text_list(d: dict, key: str) -> list[str]:
    value = d.get(key, [])
    if type(value) is not list or any(type(t) is not str for t in value):
        raise Invalid(f"{key} is not a list of text")
    return list(value)


def _points(value: Any) -> list:
    if type(value) is not list:
        raise Invalid("line data is not a list")
    out = []
    for x in value:
        if type(x) in (int, float):
            out.append(float(x))
        elif type(x) is str or x is None:
            out.append(x)
        else:
            raise Invalid("line data holds something that is not a number")
    return out


def _validate_figure(value: Any) -> dict:
    if type(value) is not dict or type(value.get("axes")) is not list:
        raise Invalid("not a figure description")
    axes = []
    for ax in value["axes"]:
        if type(ax) is not dict or type(ax.get("lines", [])) is not list:
            raise Invalid("an axes description is malformed")
        lines = []
        for line in ax.get("lines", []):
            if type(line) is not dict:
                raise Invalid("a line description is malformed")
            lines.append({"label": _text_field(line, "label"), "x": _points(line.get("x", [])),
                          "y": _points(line.get("y", []))})
        axes.append({
            "title": _text_field(ax, "title"), "xlabel": _text_field(ax, "xlabel"),
            "ylabel": _text_field(ax, "ylabel"), "xscale": _text_field(ax, "xscale"),
            "yscale": _text_field(ax, "yscale"), "legend": _text_list(ax, "legend"), "lines": lines,
            "collections": _int_field(ax, "collections"),
            "collection_labels": _text_list(ax, "collection_labels"), "patches": _int_field(ax, "patches"),
        })
    return {"axes": axes, "suptitle": _text_field(value, "suptitle"), "legends": _text_list(value, "legends"),
            "supxlabel": _text_field(value, "supxlabel"), "supylabel": _text_field(value, "supylabel")}


