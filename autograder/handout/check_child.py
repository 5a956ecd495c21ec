"""The child of check.py: imports your file and runs the checks' calls on it, in its own process.

    python check_child.py [--nice] OUT_DIR PATH CHECK_ID...      (check.py starts it; you need not)

Each answer goes to OUT_DIR as <n>.json and <n>.npz, n the check's place in check_data (no pickle
on either side: a child started after one that hung writes beside it, never over it); what happened is
told on stdout in lines that start with check.py's EVENT, and your own prints go to stderr.
Kept apart from check.py so that check.py starts this child before it imports numpy itself.
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import json
import os
import sys
import types
from pathlib import Path

NICE = sys.argv[1:2] == ["--nice"]
if NICE and hasattr(os, "nice"):    # check.py asks: another child, slower to start, goes first
    os.nice(5)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))     # its modules, beside it (even under -P)
try:
    import numpy as np  # noqa: E402
except ImportError:
    print('@@check {"status": "error", "message": "numpy is not installed: pip install numpy matplotlib '
          '(or: conda install numpy matplotlib)"}')
    sys.exit(0)

import check_siblings as siblings  # noqa: E402 - another exercise of yours that a check calls
from judge import calls as check_calls  # noqa: E402 - a call that gave no answer: the check's status
from judge import errors as check_errors  # noqa: E402 - the grader's sandbox says an error this way
from judge import torch_module as check_module  # noqa: E402 - a torch module built as the grader builds it
from judge.answers import decode, encode  # noqa: E402
from judge.clock import CallClock  # noqa: E402
from judge.forms import stub_names  # noqa: E402
from judge.notebook import run_cells  # noqa: E402
from unjailed import (DATA, EVENT, WALL_FACTOR, call_limit, counted_files, load_arrays, load_spec,  # noqa: E402
                          read_exercise)

INSTALL = {"torch": "pip install torch --index-url https://download.pytorch.org/whl/cpu (or: conda install "
                    "pytorch cpuonly -c pytorch)",
           "matplotlib": "pip install matplotlib (or: conda install matplotlib)",
           "numpy": "pip install numpy (or: conda install numpy)"}


def import_student(path: Path, files: dict):
    """Your file run as a module, as the grader runs it: a .py file at once, a notebook cell by
    cell (a cell that raises is skipped and named, as in Jupyter's Run All). The module, the notes
    on skipped cells, the source run (a stub in it that returns None is not implemented yet), and
    name -> the skipped cell that would have defined it."""

    read = read_exercise(path)
    sys.path.insert(0, str(path.parent))       # `from attention import ...` finds your attention.py
    sys.meta_path.insert(0, CountedSiblings(path.parent, path.stem, files))
    module = types.ModuleType(path.stem)
    module.__file__ = str(path)
    sys.modules[path.stem] = module
    skipped = run_exercise(read, path, module, files)
    return (module, read.notes + [skipped_note(s) for s in skipped], read.source,
            read.skipped_definitions([s["index"] for s in skipped]))


def run_exercise(read, path: Path, module, files: dict) -> list:
    """`read` (read_exercise of `path`) run in `module`: a .py file at once, a notebook's cells as
    Jupyter's Run All runs them; the cells skipped."""
    if read.cells is None:
        files[str(path)] = None
        exec(compile(read.source, str(path), "exec", dont_inherit=True), module.__dict__)   # noqa: S102
        return []
    return run_cells(read.cells, module.__dict__, str(path), files)


class CountedSiblings:
    """`from attention import softmax` in another exercise's file gets your attention as the grader
    counts it (counted_files): the notebook that holds your work where attention.py beside it is
    the untouched stub, which Python's own import would find. Its functions are recorded when a
    check calls them, and one that cannot be imported (missing, a syntax error, an error while it
    runs) is a stand-in whose functions raise: the grader gives a correct one there, so only the
    checks that call it wait on it (check_siblings.py)."""

    def __init__(self, folder: Path, own: str, files: dict):
        self.folder, self.own, self.files = folder, own, files

    def find_spec(self, name, path=None, target=None):
        if path is not None or name == self.own or not (DATA / f"{name}.json").is_file():
            return None
        counted, _ = counted_files(name, self.folder, load_spec(name).get("graded", []))
        return importlib.util.spec_from_loader(name, _SiblingLoader(name, counted[0] if counted else None,
                                                                    self.folder, self.files),
                                               origin=str(counted[0]) if counted else None)


class _SiblingLoader:
    def __init__(self, stem: str, path: Path | None, folder: Path, files: dict):
        self.stem, self.path, self.folder, self.files = stem, path, folder, files

    def create_module(self, spec):
        return None

    def exec_module(self, module) -> None:
        graded = load_spec(self.stem).get("graded", [])
        if self.path is None:
            siblings.stand_in(module, self.stem, f"{self.stem}.py", graded,
                              f"there is no {self.stem}.py or {self.stem}.ipynb in {self.folder.name}")
            return
        read = read_exercise(self.path)
        if read.problem is not None:
            siblings.stand_in(module, self.stem, self.path.name, graded, read.problem)
            return
        module.__file__ = str(self.path)
        try:
            run_exercise(read, self.path, module, self.files)
        except Exception as err:  # noqa: BLE001 - the checks that call it wait on it; the others run
            siblings.stand_in(module, self.stem, self.path.name, graded,
                              f"{self.path.name} could not be run: {describe(err, self.path, self.files, True)}")
            return
        siblings.watch(module, self.stem, self.path.name, graded,
                       lambda name: check_calls.missing(self.path.name, name))


class _AbsentMeta(type):
    """A name of a package that is not installed: it can be named, subclassed and annotated with
    (`class MultiHeadSelfAttention(nn.Module)` still defines the class), never used."""

    def __getattr__(cls, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return _absent(cls.package, f"{cls.__name__}.{name}")

    def __call__(cls, *args, **kwargs):
        raise ModuleNotFoundError(f"No module named {cls.package!r}", name=cls.package)


def _absent(package: str, name: str) -> type:
    return _AbsentMeta(name, (), {"package": package})


class _AbsentModule(types.ModuleType):
    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return _absent(self.__name__.split(".")[0], f"{self.__name__}.{name}")


class _AbsentFinder:
    """Imports of a package that is not installed give stand-ins, so the checks that do not use it
    still run (multihead's numpy functions beside its torch module); a check that uses it is told
    `missing_package`'s sentence."""

    def __init__(self, package: str):
        self.package = package

    def find_spec(self, fullname, path=None, target=None):
        if fullname != self.package and not fullname.startswith(self.package + "."):
            return None
        return importlib.machinery.ModuleSpec(fullname, self, is_package=True)

    def create_module(self, spec):
        module = _AbsentModule(spec.name)
        module.__path__ = []
        return module

    def exec_module(self, module) -> None:
        pass


def stand_in_for_absent(packages=("torch",)) -> None:
    """Stand-ins for those of `packages` that are not installed (check.py only: the grader has them)."""
    for package in packages:
        if importlib.util.find_spec(package) is None:
            sys.meta_path.append(_AbsentFinder(package))


def skipped_note(cell: dict) -> str:
    from judge.notebook import raised_note

    error = cell["error"]
    return raised_note(cell["index"], cell["first_line"], cell["solution"], error["type"], error["text"], error["line"])


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
    from judge import convert as check_convert

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
        returned = getattr(module, step["name"])(*args, **kwargs)
    else:
        returned = forward(getattr(module, step["name"]), step["name"], args, kwargs)
    try:
        return as_data(returned, step.get("returns")) if step["op"] == "call" else to_plain(returned)
    except BadReturn as err:        # the grader's rule needs which function returned what (check_calls)
        err.name, err.returned = step["name"], type(returned).__name__
        raise


def forward(cls, name: str, args: list, kwargs: dict):
    """A module's forward on the check's input, the module built as the grader builds it (check_module)."""
    import torch

    mask = kwargs.get("mask")
    forward_kwargs = {} if mask is None else {"mask": torch.from_numpy(np.array(mask))}
    try:
        return check_module.forward(cls, name, args, {}, kwargs["state"], [torch.from_numpy(np.array(kwargs["x"]))],
                                    forward_kwargs)
    except check_module.CannotLoad as err:
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


def child(out_dir: Path, path: Path, check_ids: list[str]) -> None:
    """Import your file, run the checks' calls, write each answer to out_dir/<n>.npz."""
    channel, sys.stdout = sys.stdout, sys.stderr      # your prints go to the terminal, not the checker

    def tell(**event):
        if event.get("check") and event["status"] != "started" and siblings.CALLS.called:
            event["siblings"] = siblings.CALLS.snapshot()      # whose code this check ran besides yours
        channel.write(EVENT + json.dumps(event) + "\n")
        channel.flush()

    spec, arrays = load_spec(path.stem), load_arrays(path.stem)
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
        module, notes, source, defined_in_skipped = import_student(path, files)
    except BaseException as err:  # noqa: BLE001 - what your file raised is what the checker reports
        tell(status="error", message=missing_package(err) or
             f"{path.name} could not be run: {describe(err, path, files, at_import=True)}")
        return
    finally:
        watchdog.stop()
    if notes:
        tell(status="notes", notes=notes)
    checks = {c["id"]: c for c in spec["checks"]}
    made: dict = {}                 # answers of calls with only scalar arguments, made once as in the grader
    place = {c["id"]: n for n, c in enumerate(spec["checks"])}
    for check_id in check_ids:
        siblings.CALLS.clear()
        tell(status="started", check=check_id)
        BFLOAT16_RETURNED.clear()
        watchdog.watch(check_id, call_limit(spec, check_id), checks[check_id]["calls"])
        results: list = []
        try:
            for step in checks[check_id]["calls"]:
                key = once_key(step)
                if key in made:
                    answer, called = made[key]
                    siblings.CALLS.merge(called)
                else:
                    answer = call(module, step, arrays, results)
                if key is not None:
                    made[key] = answer, siblings.CALLS.snapshot()
                results.append(answer)
            answer = decode(checks[check_id]["answer"], {}, results)
        except Missing as err:
            tell(status=check_calls.check_status("missing"), check=check_id,
                 message=check_calls.missing(path.name, str(err), defined_in_skipped.get(str(err))))
            continue
        except NotImplementedError:
            name = checks[check_id]["calls"][0]["name"]
            still = "is still None" if checks[check_id]["kind"] == "hand" else "raises NotImplementedError"
            tell(status="not_implemented", check=check_id, message=f"not implemented yet: {name} {still}")
            continue
        except BadReturn as err:
            name = err.name or checks[check_id]["calls"][-1]["name"]
            stub = check_calls.stub_returned_none(name, err.returned, stub_names(source, spec.get("graded", ())))
            if stub is not None:
                tell(status="not_implemented", check=check_id, message=stub)
            else:
                tell(status=check_calls.check_status("bad_return"), check=check_id, message=f"{name} {err}")
            continue
        except Exception as err:  # noqa: BLE001
            missing = missing_package(err)
            if missing:
                tell(status="error", check=check_id, message=missing)
                continue
            info = check_errors.error_info(err, files)
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

    data = encode(answer, store)
    np.savez(where.with_suffix(".npz"), **arrays)
    where.with_suffix(".json").write_text(json.dumps(data), encoding="utf-8")


def describe(err: BaseException, path: Path, files: dict, at_import: bool = False) -> str:
    """The error and where in your file (cell and line), as the grader's sandbox says it."""
    return check_errors.sentence(check_errors.error_info(err, files, at_import=at_import), path.name)


class Watchdog:
    """Stops this process when your file's import or a check's calls outlive their limit, by the
    grader's clock (check_clock: CPU time, no progress, the wall backstop), after telling which of
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

        self.current = (check_id, limit, calls, CallClock(limit, self.wall_factor, time.monotonic(),
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


if __name__ == "__main__":
    args = sys.argv[2:] if NICE else sys.argv[1:]
    child(Path(args[0]), Path(args[1]), args[2:])
