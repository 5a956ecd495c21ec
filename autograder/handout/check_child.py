"""The child of check.py: imports your file and runs the checks' calls on it, in its own process.

    python check_child.py [--nice] OUT_DIR PATH CHECK_ID...      (check.py starts it; you need not)

Each answer goes to OUT_DIR as <n>.json and <n>.npz (no pickle on either side); what happened is
told on stdout in lines that start with check.py's EVENT, and your own prints go to stderr.
Kept apart from check.py so that check.py starts this child before it imports numpy itself.
"""

from __future__ import annotations

import gc
import json
import os
import sys
from pathlib import Path

NICE = sys.argv[1:2] == ["--nice"]
if NICE and hasattr(os, "nice"):    # check.py asks: another child, slower to start, goes first
    os.nice(5)

import numpy as np  # noqa: E402

from check import EVENT, load_arrays, load_spec, source_of  # noqa: E402 - check.py, beside this file
from check_answers import decode, encode  # noqa: E402


def import_student(path: Path):
    import types

    sys.path.insert(0, str(path.parent))       # `from attention import ...` finds your attention.py
    module = types.ModuleType(path.stem)
    module.__file__ = str(path)
    sys.modules[path.stem] = module
    # No garbage collection while your file runs its imports: torch's import makes hundreds of
    # thousands of objects and few cycles, and the collections it sets off cost it about 0.1 s.
    # What exists then is frozen (never collected: this process is short-lived), else turning
    # collection back on would scan it all at once.
    gc.disable()
    try:
        exec(compile(source_of(path), str(path), "exec"), module.__dict__)   # noqa: S102 - your own code
    finally:
        gc.freeze()
        gc.enable()
    return module


class Missing(Exception):
    """Your file defines no such name."""


class BadReturn(Exception):
    """What a function returned cannot be read as arrays."""


def to_plain(value):
    """Your answer as numpy arrays (tensors are detached and copied), tuples kept as tuples."""
    if isinstance(value, tuple):
        return tuple(to_plain(v) for v in value)
    if hasattr(value, "detach"):
        value = value.detach().cpu()
        value = value.float() if str(value.dtype) == "torch.bfloat16" else value
        return value.numpy()
    try:
        array = np.asarray(value)
    except (ValueError, TypeError) as err:
        raise BadReturn(f"returned {type(value).__name__}, which is not an array ({err})") from None
    if array.dtype == object:
        raise BadReturn(f"returned {type(value).__name__}, expected numbers")
    return array


def as_data(value, kind):
    """Your answer as the sandbox's child reads it (its convert.py, here check_convert.py): a dict of
    statistics per d, a figure's description (series, labels, titles, legends), or arrays."""
    if kind not in ("float_dict_dict", "figure"):
        return to_plain(value)
    import check_convert

    try:
        if kind == "figure":
            return check_convert.describe_figure(value)
        return {int(d): row for d, row in check_convert.to_float_dict_dict(value).items()}
    except check_convert.BadReturn as err:
        raise BadReturn(err.message) from None


def call(module, step: dict, arrays: dict, results: list):
    if not hasattr(module, step["name"]):
        raise Missing(step["name"])
    if step["op"] == "value":                 # a constant of the hand computation
        value = getattr(module, step["name"])
        if value is None:
            raise NotImplementedError(step["name"])
        return to_plain(value)
    args = decode(step.get("args", []), arrays, results)
    kwargs = decode({"dict": step.get("kwargs", {})}, arrays, results)
    if step["op"] == "call":
        return as_data(getattr(module, step["name"])(*args, **kwargs), step.get("returns"))
    import torch                              # a module's forward, built as the grader builds it

    torch.manual_seed(0)
    layer = getattr(module, step["name"])(*args)
    with torch.no_grad():
        for name, array in kwargs["state"].items():
            part, param = name.split(".")
            getattr(getattr(layer, part), param).copy_(torch.from_numpy(np.array(array)))
        mask = kwargs.get("mask")
        out = layer(torch.from_numpy(np.array(kwargs["x"])),
                    **({} if mask is None else {"mask": torch.from_numpy(np.array(mask))}))
    return to_plain(out)


def once_key(step: dict) -> str | None:
    """The key of a call the grader makes once per submission (scalar arguments, not asked anew)."""
    values = [*step["args"], *step["kwargs"].values()]
    flat = [v for x in values for v in (x["tuple"] if isinstance(x, dict) and set(x) == {"tuple"} else [x])]
    if step["op"] != "call" or step.get("fresh") or any(isinstance(v, (list, dict)) for v in flat):
        return None
    return json.dumps([step["name"], step["args"], step["kwargs"]], sort_keys=True)


def child(out_dir: Path, path: Path, check_ids: list[str]) -> None:
    """Import your file, run the checks' calls, write each answer to out_dir/<n>.npz."""
    channel, sys.stdout = sys.stdout, sys.stderr      # your prints go to the terminal, not the checker

    def tell(**event):
        channel.write(EVENT + json.dumps(event) + "\n")
        channel.flush()

    spec, arrays = load_spec(path.stem), load_arrays(path.stem)
    if any(step.get("returns") == "figure" for check in spec["checks"] for step in check["calls"]):
        import matplotlib

        matplotlib.use("Agg")                         # as in the grader: figures are read, never shown
    try:
        module = import_student(path)
    except BaseException as err:  # noqa: BLE001 - what your file raised is what the checker reports
        tell(status="error", message=f"{path.name} could not be run: {describe(err, path)}")
        return
    checks = {c["id"]: c for c in spec["checks"]}
    made: dict = {}                 # answers of calls with only scalar arguments, made once as in the grader
    for n, check_id in enumerate(check_ids):
        tell(status="started", check=check_id)
        results: list = []
        try:
            for step in checks[check_id]["calls"]:
                key = once_key(step)
                answer = made[key] if key in made else call(module, step, arrays, results)
                if key is not None:
                    made[key] = answer
                results.append(answer)
            answer = decode(checks[check_id]["answer"], {}, results)
        except Missing as err:
            tell(status="error", check=check_id, message=f"{path.name} defines no {err}")
            continue
        except NotImplementedError:
            name = checks[check_id]["calls"][0]["name"]
            still = "is still None" if checks[check_id]["kind"] == "hand" else "raises NotImplementedError"
            tell(status="not_implemented", check=check_id, message=f"not implemented yet: {name} {still}")
            continue
        except BadReturn as err:
            tell(status="error", check=check_id, message=f"{checks[check_id]['calls'][-1]['name']} {err}")
            continue
        except Exception as err:  # noqa: BLE001
            tell(status="error", check=check_id, message=describe(err, path), raised=[type(err).__name__, str(err)],
                 line=line_of(err, path))
            continue
        save(answer, out_dir / str(n))
        tell(status="answered", check=check_id, file=str(n))


def save(answer, where: Path) -> None:
    """An answer as <where>.json, its arrays in <where>.npz (no pickle on either side)."""
    arrays: dict = {}

    def store(array):
        arrays[f"a{len(arrays)}"] = array
        return f"a{len(arrays) - 1}"

    data = encode(answer, store)
    np.savez(where.with_suffix(".npz"), **arrays)
    where.with_suffix(".json").write_text(json.dumps(data), encoding="utf-8")


def line_of(err: BaseException, path: Path) -> int | None:
    """The line of your file that raised `err` (the innermost one)."""
    import traceback

    if isinstance(err, SyntaxError):
        return err.lineno
    frames = [f for f in traceback.extract_tb(err.__traceback__) if Path(f.filename).name == path.name]
    return frames[-1].lineno if frames else None


def describe(err: BaseException, path: Path) -> str:
    """The error and the line of your file that raised it."""
    import linecache

    line = line_of(err, path)
    text = (err.text or "") if isinstance(err, SyntaxError) else linecache.getline(str(path), line or 0)
    where = f" (line {line} of {path.name}: {text.strip()})" if line else ""
    return f"{type(err).__name__}: {err}{where}"


if __name__ == "__main__":
    args = sys.argv[2:] if NICE else sys.argv[1:]
    child(Path(args[0]), Path(args[1]), args[2:])
