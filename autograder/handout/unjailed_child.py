"""check.py's child: your file imported and the checks' calls made on it, in a plain process
(`python unjailed_child.py --child [--nice] OUT_DIR STEM PATH CHECK_ID...`, started by
unjailed.run_child). Each answer goes to OUT_DIR as <n>.json and <n>.npz (no pickle); what happened
is told on stdout in lines that start with unjailed.EVENT, and your own prints go to stderr. A call
that outlives its limit is stopped by the Watchdog, after saying which of your functions was
running.
"""

from __future__ import annotations

import json
import os
import sys
import types
from pathlib import Path

if __package__:               # in the kit
    from . import unjailed, unjailed_imports, unjailed_siblings
else:                         # run by check.py: this folder is on the path
    import unjailed
    import unjailed_imports
    import unjailed_siblings

EVENT, WALL_FACTOR, calls, clock, errors, forms, judge, notebook = (
    unjailed.EVENT, unjailed.WALL_FACTOR, unjailed.calls, unjailed.clock, unjailed.errors, unjailed.forms,
    unjailed.judge, unjailed.notebook)
call_limit, describe, load_arrays, load_spec, read_exercise, run_exercise = (
    unjailed.call_limit, unjailed.describe, unjailed.load_arrays, unjailed.load_spec, unjailed.read_exercise,
    unjailed.run_exercise)
CALLS, CountedSiblings = unjailed_siblings.CALLS, unjailed_siblings.CountedSiblings
OwnModules, stand_in_for_absent = unjailed_imports.OwnModules, unjailed_imports.stand_in_for_absent


INSTALL = {"torch": "pip install torch --index-url https://download.pytorch.org/whl/cpu (or: conda install "
                    "pytorch cpuonly -c pytorch)",
           "matplotlib": "pip install matplotlib (or: conda install matplotlib)",
           "numpy": "pip install numpy (or: conda install numpy)"}

def import_student(path: Path, stem: str, files: dict):
    """Your file run as a module, as the grader runs it: a .py file at once, a notebook cell by
    cell (a cell that raises is skipped and named, as in Jupyter's Run All). The module, the notes
    on skipped cells, the source run (a stub in it that returns None is not implemented yet), and
    name -> the skipped cell that would have defined it."""

    read = read_exercise(path)
    sys.path.insert(0, str(path.parent))       # `from attention import ...` finds your attention.py
    sys.meta_path.insert(0, CountedSiblings(path.parent, stem, files, path.name, read.source))
    sys.meta_path.insert(0, OwnModules(path.parent))
    module = types.ModuleType(stem)
    module.__file__ = str(path)
    sys.modules[stem] = module
    skipped = run_exercise(read, path, module, files)
    return (module, read.notes + [skipped_note(s) for s in skipped], read.source,
            read.skipped_definitions([s["index"] for s in skipped]))

def import_failed(err: BaseException, path: Path, files: dict) -> str:
    """What check.py says of your file that could not be run, as the grader says it."""
    said = f"{path.name} could not be run: {describe(err, path, files, at_import=True)}"
    return said + errors.own_module(said, [p.name for p in path.parent.iterdir()], unjailed.exercise_stems())

def skipped_note(cell: dict) -> str:
    error = cell["error"]
    return notebook.raised_note(cell["index"], cell["first_line"], cell["solution"], error["type"], error["text"], error["line"])


def missing_package(err: BaseException) -> str | None:
    """The sentence for a package that is not installed (numpy, torch, matplotlib), else None."""
    name = getattr(err, "name", None) if isinstance(err, ImportError) else None
    top = (name or "").split(".")[0]
    return f"{top} is not installed: {INSTALL[top]}" if top in INSTALL else None


class Missing(Exception):
    """Your file defines no such name."""


class BadReturn(Exception):
    """What a function returned cannot be read as arrays (`name`: the function, `returned`: the
    type it returned), set by call()."""

    name, returned = "", ""


# A check's answers that came as bfloat16 tensors, which numpy cannot hold: said with the answer,
# for a hint to name that dtype as the grader's does.
BFLOAT16_RETURNED: set = set()


def to_plain(value):
    """Your answer as numpy arrays (tensors are detached and copied), tuples kept as tuples."""
    if isinstance(value, tuple):
        return tuple(to_plain(v) for v in value)
    if hasattr(value, "detach"):
        value = value.detach().cpu()
        if str(value.dtype) == "torch.bfloat16":
            BFLOAT16_RETURNED.add("bfloat16")
            value = value.float()
        return value.numpy()
    import numpy as np

    try:
        array = np.asarray(value)
    except (ValueError, TypeError) as err:
        raise BadReturn(f"returned {type(value).__name__}, which is not an array ({err})") from None
    if array.dtype == object:
        raise BadReturn(f"returned {type(value).__name__}, expected numbers")
    return array


def as_data(value, kind):
    """Your answer as the sandbox's child reads it (the judge's convert.py): a dict of
    statistics per d, a figure's description (series, labels, titles, legends), or arrays."""
    if kind not in ("float_dict_dict", "figure"):
        return to_plain(value)
    convert = judge("convert")

    try:
        if kind == "figure":
            return convert.describe_figure(value)
        return {int(d): row for d, row in convert.to_float_dict_dict(value).items()}
    except convert.BadReturn as err:
        raise BadReturn(err.message) from None


def call(module, step: dict, arrays: dict, results: list):
    if step["op"] == "value":                 # a constant of the hand computation
        return hand_value(module, step)
    if not hasattr(module, step["name"]):
        raise Missing(step["name"])
    decode, arguments = judge("answers").decode, judge("arguments")
    args = decode(step.get("args", []), arrays, results)
    kwargs = decode({"dict": step.get("kwargs", {})}, arrays, results)
    if step["op"] == "call":
        # arrays of this call's own, as the grader's child gets them: an array the check passed
        # several times is one array, read-only when asked (judge/arguments.py)
        same = arguments.same_groups(args)
        args, kwargs = arguments.handed(_copied(args), _copied(kwargs), same, bool(step.get("read_only")))
        returned = getattr(module, step["name"])(*args, **kwargs)
    else:
        how = {k: True for k in ("echo", "again", "read_only") if step.get(k)}
        returned = forward(getattr(module, step["name"]), step["name"], args, kwargs, how)
    try:
        if step["op"] != "call":
            return to_plain(returned)
        answer = as_data(returned, step.get("returns"))
        return (answer, tuple(to_plain(a) for a in arguments.after(args))) if step.get("echo") else answer
    except BadReturn as err:        # the grader's rule needs which function returned what (calls)
        err.name, err.returned = step["name"], type(returned).__name__
        raise


def hand_value(module, step: dict):
    """A constant of your file, read as the grader reads it (the judge's convert.to_array: lists,
    tuples, numpy scalars and arrays, Fraction, Decimal); a given input your file does not define
    is the handout's ("given": the grader needs only your answers)."""
    import numpy as np

    name = step["name"]
    if not hasattr(module, name):
        if "given" in step:
            return np.asarray(step["given"], dtype=np.float64)
        raise Missing(name)
    value = getattr(module, name)
    if value is None:
        raise NotImplementedError(name)
    convert = judge("convert")
    try:
        return convert.to_array(value)[0]
    except convert.BadReturn as err:
        bad = BadReturn(f"is {err.got}, expected {err.expected}{err.note}")
        bad.name, bad.returned = name, type(value).__name__
        raise bad from None


def _copied(value):
    """Arguments with each array a copy of its own (as the grader's child receives them)."""
    if isinstance(value, (list, tuple)):
        return type(value)(_copied(v) for v in value)
    if isinstance(value, dict):
        return {k: _copied(v) for k, v in value.items()}
    return value.copy() if type(value).__name__ == "ndarray" else value


def forward(cls, name: str, args: list, kwargs: dict, how: dict | None = None):
    """A module's forward on the check's input, the module built and its tensors handed as the
    grader does (judge/torch_module.py)."""
    import numpy as np
    import torch

    torch_module = judge("torch_module")
    mask = kwargs.get("mask")
    forward_kwargs = {} if mask is None else {"mask": torch.from_numpy(np.array(mask))}
    try:
        return torch_module.forward(cls, name, args, {}, kwargs["state"], [torch.from_numpy(np.array(kwargs["x"]))],
                                    forward_kwargs, how)
    except torch_module.CannotLoad as err:
        bad = BadReturn(err.message)
        bad.name = name
        raise bad from None


def once_key(step: dict) -> str | None:
    """The key of a call the grader makes once per submission (scalar arguments, not asked anew)."""
    values = [*step["args"], *step["kwargs"].values()]
    flat = [v for x in values for v in (x["tuple"] if isinstance(x, dict) and set(x) == {"tuple"} else [x])]
    if step["op"] != "call" or step.get("fresh") or any(isinstance(v, (list, dict)) for v in flat):
        return None
    return json.dumps([step["name"], step["args"], step["kwargs"]], sort_keys=True)


def child(out_dir: Path, stem: str, path: Path, check_ids: list[str]) -> None:
    """Import your file, run the checks' calls, write each answer to out_dir/<n>.npz."""
    channel, sys.stdout = sys.stdout, sys.stderr      # your prints go to the terminal, not the checker

    def tell(**event):
        if event.get("check") and event["status"] != "started" and CALLS.called:
            event["siblings"] = CALLS.snapshot()      # whose code this check ran besides yours
        channel.write(EVENT + json.dumps(event) + "\n")
        channel.flush()

    spec, arrays = load_spec(stem), load_arrays(stem)
    if any(step.get("returns") == "figure" for check in spec["checks"] for step in check["calls"]):
        try:
            import matplotlib
        except ImportError as err:
            tell(status="error", message=missing_package(err))
            return
        matplotlib.use("Agg")                         # as in the grader: figures are read, never shown
    files: dict = {}
    stand_in_for_absent()
    watchdog = Watchdog(tell, files, spec["limits"].get("wall_factor", WALL_FACTOR))
    watchdog.watch(None, spec["limits"]["import_timeout"])
    try:
        module, notes, source, defined_in_skipped = import_student(path, stem, files)
    except BaseException as err:  # noqa: BLE001 - what your file raised is what the checker reports
        tell(status="error", message=missing_package(err) or import_failed(err, path, files))
        return
    finally:
        watchdog.stop()
    if notes:
        tell(status="notes", notes=notes)
    checks = {c["id"]: c for c in spec["checks"]}
    made: dict = {}                 # answers of calls with only scalar arguments, made once as in the grader
    place = {c["id"]: n for n, c in enumerate(spec["checks"])}
    for check_id in check_ids:
        CALLS.clear()
        tell(status="started", check=check_id)
        BFLOAT16_RETURNED.clear()
        watchdog.watch(check_id, call_limit(spec, check_id), checks[check_id]["calls"])
        results: list = []
        try:
            for step in checks[check_id]["calls"]:
                key = once_key(step)
                if key in made:
                    answer, called = made[key]
                    CALLS.merge(called)
                else:
                    answer = call(module, step, arrays, results)
                if key is not None:
                    made[key] = answer, CALLS.snapshot()
                results.append(answer)
            answer = judge("answers").decode(checks[check_id]["answer"], {}, results)
        except Missing as err:
            tell(status=calls.check_status("missing"), check=check_id,
                 message=calls.missing(path.name, str(err), defined_in_skipped.get(str(err))))
            continue
        except NotImplementedError:
            name = checks[check_id]["calls"][0]["name"]
            still = "is still None" if checks[check_id]["kind"] == "hand" else "raises NotImplementedError"
            tell(status="not_implemented", check=check_id, message=f"not implemented yet: {name} {still}")
            continue
        except BadReturn as err:
            name = err.name or checks[check_id]["calls"][-1]["name"]
            stub = calls.stub_returned_none(name, err.returned, forms.stub_names(source, spec.get("graded", ())))
            if stub is not None:
                tell(status="not_implemented", check=check_id, message=stub)
            else:
                tell(status=calls.check_status("bad_return"), check=check_id, message=f"{name} {err}")
            continue
        except Exception as err:  # noqa: BLE001
            missing = missing_package(err)
            if missing:
                tell(status="error", check=check_id, message=missing)
                continue
            info = errors.error_info(err, files)
            tell(status="error", check=check_id, message=describe(err, path, files),
                 raised=[info["type"], info["text"]], operation=info["operation"], line=info["line"],
                 cell=info["cell"])
            continue
        finally:
            watchdog.stop()
        save(answer, out_dir / str(place[check_id]))
        tell(status="answered", check=check_id, file=str(place[check_id]), dtypes=sorted(BFLOAT16_RETURNED))


def save(answer, where: Path) -> None:
    """An answer as <where>.json, its arrays in <where>.npz (no pickle on either side)."""
    arrays: dict = {}

    def store(array):
        arrays[f"a{len(arrays)}"] = array
        return f"a{len(arrays) - 1}"

    import numpy as np

    data = judge("answers").encode(answer, store)
    np.savez(where.with_suffix(".npz"), **arrays)
    where.with_suffix(".json").write_text(json.dumps(data), encoding="utf-8")

class Watchdog:
    """Stops this process when your file's import or a check's calls outlive their limit, by the
    grader's clock (judge/clock.py: CPU time, no progress, the wall backstop), after telling which of
    your functions was running then (the innermost frame of your file) and the check's own function."""

    POLL = 0.05      # s between two looks at the clocks

    def __init__(self, tell, files: dict, wall_factor: float):
        import threading

        self.tell, self.files, self.wall_factor = tell, files, wall_factor
        self.main = threading.main_thread().ident
        self.current = None          # (check id or None for the import, limit, calls, its clock)
        threading.Thread(target=self.look, daemon=True).start()

    def watch(self, check_id: str | None, limit: float, calls: list = ()) -> None:
        """From now on: `check_id`'s calls (None: the import of your file) against `limit`."""
        import time

        self.current = (check_id, limit, calls, clock.CallClock(limit, self.wall_factor, time.monotonic(),
                                                          time.process_time()))

    def stop(self) -> None:
        self.current = None

    def look(self) -> None:
        import time

        while True:
            time.sleep(self.POLL)
            current = self.current
            if current is not None and current[3].over(time.monotonic(), time.process_time()):
                self.expired(*current[:3])

    def expired(self, check_id: str | None, limit: float, calls: list) -> None:
        frame = sys._current_frames().get(self.main)
        running = None
        while frame is not None:
            if frame.f_code.co_filename in self.files and frame.f_code.co_name != "<module>":
                running = frame.f_code.co_name
                break
            frame = frame.f_back
        names = {c["name"] for c in calls}
        self.tell(status="hung", check=check_id, limit=limit, function=running,
                  called_by=next(iter(names)) if len(names) == 1 else None)
        os._exit(3)

def child_main(argv: list[str]) -> None:
    """`python unjailed_child.py --child [--nice] OUT_DIR STEM PATH CHECK_ID...` (check.py starts it; you need
    not): the exercise STEM's checks on the file PATH, your file of it."""
    nice = argv[:1] == ["--nice"]
    if nice and hasattr(os, "nice"):    # check.py asks: another child, slower to start, goes first
        os.nice(5)
    args = argv[1:] if nice else argv
    try:
        import numpy  # noqa: F401
    except ImportError:
        print(EVENT + json.dumps({"status": "error", "message": "numpy is not installed: pip install numpy "
                                                                 "matplotlib (or: conda install numpy matplotlib)"}))
        return
    child(Path(args[0]), args[1], Path(args[2]), args[3:])


if __name__ == "__main__" and sys.argv[1:2] == ["--child"]:
    child_main(sys.argv[2:])
