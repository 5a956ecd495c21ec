"""Child side: a submission's return value -> plain data of a declared kind.

Runs inside the sandbox child (the zygote loads the judge from its folder, without the kit on
sys.path) and check.py's, so it imports only the standard library, numpy and (lazily)
torch/matplotlib.
It is a convenience, not a defence: the grader validates whatever arrives again.

Kinds: "array", "float", "float_dict_dict", "figure", and ["tuple", kind, kind, ...].
`convert(value, kind)` returns (plain value, dtype) or raises BadReturn, whose message
reads "returned <what>, expected <what>".
"""

from __future__ import annotations

import decimal
import fractions
import sys

import numpy as np
from .words import counted

MAX_LINE_POINTS = 10_000
MAX_LINES = 1000
MAX_AXES = 100
MAX_TEXT = 500


class BadReturn(Exception):
    def __init__(self, got: str, expected: str, note: str = ""):
        self.got, self.expected, self.note = got, expected, note
        super().__init__(self.message)

    @property
    def message(self) -> str:
        return f"returned {self.got}, expected {self.expected}{self.note}"


def type_name(x) -> str:
    t = type(x)
    try:
        name = type.__dict__["__qualname__"].__get__(t)
    except Exception:  # noqa: BLE001
        name = "an object"
    return str(name)[:80]


def _torch():
    return sys.modules.get("torch")


def _is_tensor(x) -> bool:
    torch = _torch()
    return torch is not None and isinstance(x, torch.Tensor)


def reply(value, kind) -> dict:
    """The child's answer for a value of the declared kind: {"status": "ok", "value", "dtype"},
    or {"status": "bad_return", "message", ...} when it is not one. A MemoryError is the caller's."""
    try:
        plain, dtype = convert(value, kind)
    except BadReturn as err:   # dtype: what came back ("NoneType" is "not answered yet")
        return {"status": "bad_return", "message": err.message, "dtype": type_name(value)}
    except MemoryError:
        raise
    except BaseException as err:  # noqa: BLE001 - the student's object misbehaved while converted
        return {"status": "bad_return", "message": f"returned a value that could not be converted "
                                                   f"({_exc_text(err)})"}
    return {"status": "ok", "value": plain, "dtype": dtype}


def convert(value, kind):
    if isinstance(kind, list) and kind and kind[0] == "tuple":
        return _tuple(value, kind[1:])
    if kind == "array":
        return to_array(value)
    if kind == "float":
        return to_float(value)
    if kind == "float_dict_dict":
        return to_float_dict_dict(value), "dict"
    if kind == "figure":
        return describe_figure(value), "Figure"
    raise ValueError(f"unknown return kind {kind!r}")


def _tuple(value, kinds: list):
    n = len(kinds)
    if isinstance(value, (tuple, list)):
        items = list(tuple.__iter__(value)) if isinstance(value, tuple) else list(list.__iter__(value))
    else:
        raise BadReturn(f"1 value ({type_name(value)})", f"{n}", f" (a tuple of {counted(n, 'value')})")
    if len(items) != n:
        raise BadReturn(counted(len(items), "value"), f"{n}")
    values, dtypes = [], []
    for i, (item, kind) in enumerate(zip(items, kinds)):
        try:
            v, d = convert(item, kind)
        except BadReturn as err:
            raise BadReturn(f"{err.got} as value {i + 1} of {n}", err.expected, err.note) from None
        values.append(v)
        dtypes.append(d)
    return tuple(values), dtypes


# ------------------------------------------------------------------ arrays

def to_array(value) -> tuple[np.ndarray, str]:
    try:
        if isinstance(value, np.ndarray):
            return _ndarray(value), np.ndarray.view(value, np.ndarray).dtype.name
        if _is_tensor(value):
            arr, dtype = _tensor(value)
            return arr, dtype
        if isinstance(value, (list, tuple)):
            tree = _tree(value, 0)
            try:
                arr = np.array(tree, dtype=np.float64)
            except ValueError:
                raise BadReturn(f"a {type_name(value)} whose rows have different lengths",
                                "an array (or rectangular nested lists)") from None
            return arr, "list" if isinstance(value, list) else "tuple"
        if _is_number(value):
            return np.array(_number(value), dtype=np.float64), _scalar_dtype(value)
    except BadReturn:
        raise
    except RecursionError:
        raise BadReturn(f"a {type_name(value)} nested too deeply", "an array") from None
    except Exception as err:  # noqa: BLE001 - whatever the student's object did
        raise BadReturn(f"a {type_name(value)} that could not be converted ({_exc_text(err)})",
                        "an array") from None
    raise BadReturn(type_name(value), "an array")


def _ndarray(value) -> np.ndarray:
    arr = np.ndarray.view(value, np.ndarray)
    kind = arr.dtype.kind
    if kind == "c":
        raise BadReturn("a complex array", "a real array")
    if kind not in "biuf" or arr.dtype.fields is not None:
        raise BadReturn(f"an array of dtype {arr.dtype}", "an array of numbers")
    return np.array(arr, dtype=np.float64, copy=True)


def _tensor(value) -> tuple[np.ndarray, str]:
    torch = _torch()
    t = torch.Tensor.detach(value)
    dtype = str(t.dtype).replace("torch.", "")
    if t.is_complex():
        raise BadReturn("a complex tensor", "a real array")
    if t.layout != torch.strided:
        t = t.to_dense()
    t = t.to(device="cpu", dtype=torch.float64)
    return np.array(t.numpy(), dtype=np.float64, copy=True), dtype


def _tree(value, depth: int):
    if depth > 64:
        raise RecursionError()
    if _is_number(value):
        return _number(value)
    if isinstance(value, np.ndarray):
        return _ndarray(value)
    if _is_tensor(value):
        return _tensor(value)[0]
    if isinstance(value, list):
        return [_tree(v, depth + 1) for v in list.__iter__(value)]
    if isinstance(value, tuple):
        return [_tree(v, depth + 1) for v in tuple.__iter__(value)]
    raise BadReturn(f"a list containing {type_name(value)}", "an array of numbers")


# Exact numbers of the standard library a hand answer may be typed as (Fraction(1, 3), Decimal("0.25")):
# numbers, as a float is.
EXACT_NUMBERS = (fractions.Fraction, decimal.Decimal)


def _is_number(value) -> bool:
    return type(value) in (float, int, bool, *EXACT_NUMBERS) or isinstance(value, (np.bool_, np.integer, np.floating))


def _number(value) -> float:
    if isinstance(value, np.generic):
        return float(np.asarray(value, dtype=np.float64))
    return float(value)


def _scalar_dtype(value) -> str:
    if isinstance(value, np.generic):
        return value.dtype.name
    return type(value).__name__


def to_float(value) -> tuple[float, str]:
    if _is_number(value):
        return _number(value), _scalar_dtype(value)
    if isinstance(value, np.ndarray) or _is_tensor(value):
        arr, dtype = to_array(value)
        if arr.size == 1:
            return float(arr.reshape(())), dtype
        raise BadReturn(f"an array of shape {tuple(arr.shape)}", "a single number")
    raise BadReturn(type_name(value), "a number")


# ------------------------------------------------------------------ dict of dicts

def to_float_dict_dict(value) -> dict:
    expected = "a dict {d: {name: value}}"
    if not isinstance(value, dict):
        raise BadReturn(type_name(value), expected)
    out: dict[str, dict[str, float]] = {}
    for key, inner in list(dict.items(value)):
        if type(key) is int or isinstance(key, np.integer):
            k = str(int(key))
        else:
            raise BadReturn(f"a dict with the key {_short_repr(key)} ({type_name(key)})", "int keys (the values of d)")
        if not isinstance(inner, dict):
            raise BadReturn(f"{type_name(inner)} for d={k}", "a dict {name: value}")
        row: dict[str, float] = {}
        for name, number in list(dict.items(inner)):
            if not isinstance(name, str):
                raise BadReturn(f"the key {_short_repr(name)} ({type_name(name)}) for d={k}", "str keys")
            try:
                row[str.__str__(name)] = float(number)
            except Exception:  # noqa: BLE001
                raise BadReturn(f"{type_name(number)} for d={k}, {str.__str__(name)!r}", "a number") from None
        out[k] = row
    return out


def _short_repr(x) -> str:
    try:
        text = repr(x)
    except Exception:  # noqa: BLE001
        text = "?"
    return text[:40]


# ------------------------------------------------------------------ figures

def describe_figure(value) -> dict:
    # A Figure exists only where matplotlib.figure was imported (as torch's tensors, `_torch`): a
    # value made without it is no Figure, said without importing matplotlib (a second of a child's
    # CPU time, from a numpy-only zygote).
    Figure = getattr(sys.modules.get("matplotlib.figure"), "Figure", None)
    if Figure is None or not isinstance(value, Figure):
        raise BadReturn(type_name(value), "a matplotlib Figure")
    try:
        return _describe(value, Figure)
    except BadReturn:
        raise
    except Exception as err:  # noqa: BLE001
        raise BadReturn(f"a Figure that could not be read ({_exc_text(err)})", "a matplotlib Figure") from None


def _describe(fig, Figure) -> dict:
    axes = []
    for ax in list(Figure.get_axes(fig))[:MAX_AXES]:
        legend = ax.get_legend()
        titles = [ax.get_title(loc) for loc in ("center", "left", "right")]
        lines = []
        for line in list(ax.get_lines())[:MAX_LINES]:
            lines.append({"label": _text(line.get_label()),
                          "x": _points(line.get_xdata()), "y": _points(line.get_ydata())})
        for coll in list(ax.collections)[:MAX_LINES]:        # scatter plots are series too
            offsets = coll.get_offsets()
            if getattr(offsets, "ndim", 0) == 2 and offsets.shape[1] == 2 and len(offsets):
                lines.append({"label": _text(coll.get_label()),
                              "x": _points(offsets[:, 0]), "y": _points(offsets[:, 1])})
        axes.append({
            "title": _text(" ".join(t for t in titles if t)),
            "xlabel": _text(ax.get_xlabel()),
            "ylabel": _text(ax.get_ylabel()),
            "xscale": _text(ax.get_xscale()),
            "yscale": _text(ax.get_yscale()),
            "legend": [_text(t.get_text()) for t in legend.get_texts()] if legend is not None else [],
            "lines": lines,
            "collections": len(ax.collections),
            "collection_labels": [_text(c.get_label()) for c in list(ax.collections)[:MAX_LINES]],
            "patches": len(ax.patches),
        })
    sup = getattr(fig, "_suptitle", None)
    legends = []
    for leg in list(getattr(fig, "legends", []))[:MAX_LINES]:
        legends.extend(_text(t.get_text()) for t in leg.get_texts())
    labels = {key: _text(getattr(fig, f"_{key}").get_text()) if getattr(fig, f"_{key}", None) is not None else ""
              for key in ("supxlabel", "supylabel")}       # fig.supxlabel / supylabel: the axes' shared labels
    return {"axes": axes, "suptitle": _text(sup.get_text()) if sup is not None else "", "legends": legends} | labels


def _text(x) -> str:
    return str(x)[:MAX_TEXT]


def _points(data) -> list:
    """A line's x or y data as a list of floats (strings for categorical data)."""
    items = list(np.ravel(np.asarray(data, dtype=object)))[:MAX_LINE_POINTS]
    out = []
    for item in items:
        try:
            v = float(item)
        except (TypeError, ValueError):
            out.append(_text(item))
            continue
        out.append(v)
    return out


def _exc_text(err: BaseException) -> str:
    try:
        text = str(err)
    except Exception:  # noqa: BLE001
        text = ""
    name = type_name(err)
    return f"{name}: {text}"[:300] if text else name
