"""How a call hands its arguments to the student's function: the grader's sandbox child and
check.py's child, one code.

Each call gets arrays of its own, so one call's changes never reach another; an array a check
passes several times in one call (`f(x, x, x)`, ordinary self-attention) is one array there too
(`same`); a call may hand its arrays read-only, and may send back the arrays it handed, as the
function left them (`after`), so that a check can see whether they were changed in place.

A torch module's forward gets its tensors so too (torch_module.py): each a copy of its own, and
"read-only" as torch can make it (`tensors_handed`, `refusing_writes`): laid out not contiguous,
the input x requiring grad as a layer's input does in a model, and an in-place change to any of
them (`x.mul_()`, `x *= ...`, `mask[...] = ...`, `out=`) refused on the line that makes it, with
the words of numpy's read-only error, so that one recogniser names the mistake for both.
Needs numpy only when there are arrays, torch only when there are tensors.
"""

from __future__ import annotations

import contextlib


def _is_array(value) -> bool:
    return type(value).__module__ == "numpy" and type(value).__name__ == "ndarray" or hasattr(value, "detach")


def same_groups(args) -> list[list[int]]:
    """The positions of the arguments that are one array object, each group in order (only groups of
    two or more)."""
    groups: dict[int, list[int]] = {}
    for n, value in enumerate(args):
        if _is_array(value):
            groups.setdefault(id(value), []).append(n)
    return [positions for positions in groups.values() if len(positions) > 1]


def handed(args: list, kwargs: dict, same=(), read_only: bool = False) -> tuple[list, dict]:
    """The arguments as the function gets them: each group of `same` one object (the first's), and
    with `read_only` every numpy array not writeable."""
    args = list(args)
    for positions in same or ():
        if not (isinstance(positions, list) and positions and all(type(p) is int and 0 <= p < len(args)
                                                                  for p in positions)):
            raise ValueError("a malformed group of shared arguments")
        for p in positions[1:]:
            args[p] = args[positions[0]]
    if read_only:
        for value in [*args, *kwargs.values()]:
            if type(value).__module__ == "numpy" and type(value).__name__ == "ndarray":
                value.setflags(write=False)
    return args, kwargs


def array_positions(args) -> list[int]:
    """The positions of the array (or tensor) arguments: those a call sends back as left (`after`)."""
    return [n for n, value in enumerate(args) if _is_array(value)]


def after(args) -> tuple:
    """The array arguments as the function left them, in order (sent back after the call)."""
    return tuple(args[n] for n in array_positions(args))


# ---------------------------------------------------------------- a torch module's tensors

def tensors_handed(args: list, kwargs: dict, read_only: bool = False) -> tuple[list, dict]:
    """A forward's arguments with each tensor a copy of its own (the caller's arrays never change);
    with `read_only`, each laid out not contiguous (the same values, its last two axes swapped in
    memory as a transpose leaves them; a 1-D one every other element of a longer buffer), and the
    positional float ones (the module's input) requiring grad."""
    def handed(value, positional: bool):
        if not _is_tensor(value):
            return value
        value = value.detach()
        if not read_only or value.dim() == 0:
            return value.clone()
        import torch

        if value.dim() >= 2:
            laid = value.transpose(-1, -2).clone(memory_format=torch.contiguous_format)
            undo = lambda t: t.transpose(-1, -2)    # noqa: E731
        else:
            laid = torch.zeros(2 * value.shape[0], dtype=value.dtype)
            laid[::2] = value
            undo = lambda t: t[::2]                 # noqa: E731
        if positional and value.is_floating_point():
            laid.requires_grad_(True)
        return undo(laid)

    return [handed(v, True) for v in args], {k: handed(v, False) for k, v in kwargs.items()}


def _is_tensor(value) -> bool:
    return type(value).__module__.startswith("torch") and hasattr(value, "detach") and hasattr(value, "dim")


# Python's in-place operators on a tensor; its in-place methods end in "_" (x.mul_, mask.masked_fill_).
_IN_PLACE_OPERATORS = {"__setitem__", "__iadd__", "__isub__", "__imul__", "__itruediv__", "__ifloordiv__",
                       "__imod__", "__ipow__", "__imatmul__", "__iand__", "__ior__", "__ixor__", "__ilshift__",
                       "__irshift__"}
_NOT_A_CHANGE = {"requires_grad_", "retain_grad", "share_memory_"}    # of the tensor's flags, not its values
READ_ONLY_WORDS = "input tensor is read-only"      # numpy's words ("... is read-only"): raised.read_only_write


@contextlib.contextmanager
def refusing_writes(tensors):
    """While in it, an in-place change to one of `tensors` or to a view of one (they share its
    memory) raises ValueError on the line that makes it: torch's read-only arrays. Without torch,
    or where torch cannot do it, nothing is refused."""
    tensors = [t for t in tensors if _is_tensor(t)]
    try:
        from torch.overrides import TorchFunctionMode
    except ImportError:
        TorchFunctionMode = None
    if not tensors or TorchFunctionMode is None:
        yield
        return
    buffers = {_buffer(t) for t in tensors} - {None, 0}

    class RefusingWrites(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            kwargs = kwargs or {}
            name = getattr(func, "__name__", "")
            changed = []
            if name in _IN_PLACE_OPERATORS or (name.endswith("_") and not name.startswith("_")
                                               and name not in _NOT_A_CHANGE) or kwargs.get("inplace") is True:
                changed.append(args[0] if args else None)
            out = kwargs.get("out")
            changed += list(out) if isinstance(out, (tuple, list)) else [out]
            if any(_is_tensor(t) and _buffer(t) in buffers for t in changed):
                how = "an assignment into it" if name == "__setitem__" else "out=" if out is not None and \
                    not name.endswith("_") else name
                raise ValueError(f"{READ_ONLY_WORDS}: {how} would change the caller's tensor in place")
            return func(*args, **kwargs)

    with RefusingWrites():
        yield


def _buffer(tensor):
    """Where a tensor's values are (shared by its views), or None where torch cannot say."""
    try:
        return tensor.untyped_storage().data_ptr()
    except Exception:  # noqa: BLE001 - a tensor without storage (meta, sparse): not compared
        return None
