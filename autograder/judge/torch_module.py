"""A check of a torch module: your class built, the check's weights loaded into it, and its forward
run on the check's input.

The grader's sandbox child, the kit's own runs of the reference and the known mistakes, and the
handout's check.py build a module with this one function, so a module that cannot take the
check's weights (not a torch.nn.Module, a parameter missing or of another shape: a layer built with
`bias=False`) fails the check alike, with the same sentence, instead of raising in one of them.

A check of what forward does to its inputs asks for them handed as arguments.py says (`how`):
sent back as forward left them, forward called twice on the same tensors, or the tensors
"read-only" (not contiguous, x requiring grad, an in-place change refused on its line).

Kit-free: the standard library, numpy and torch (imported when a module is built). What a module
returns is read with convert.py beside it, as the sandbox child reads it.
"""

from __future__ import annotations

import contextlib

from . import arguments, convert


class CannotLoad(convert.BadReturn):
    """The module built cannot take the check's weights: the check fails with this sentence
    ("returned ..., expected ...", or `said`, what the module lacks); what your own code raises is
    raised as it is."""

    def __init__(self, got: str, expected: str, note: str = "", said: str = ""):
        self.said = said
        super().__init__(got, expected, note)

    @property
    def message(self) -> str:
        return self.said or super().message


def forward(cls, name: str, init_args: list, init_kwargs: dict, state: dict, args: list, kwargs: dict,
            how: dict | None = None):
    """`cls(*init_args, **init_kwargs)` with each array of `state` (a parameter's dotted name ->
    its values) copied into the tensor of that name, in eval mode, called on `args`, `kwargs`
    (tensors): what it returned. Built after torch's seed 0, so that a tensor the check does not
    set starts the same in every run; the forward runs as your own code would (gradients on).

    `how`: "read_only", the tensors handed read-only (arguments.py); "again", forward called a
    second time on the same tensors, its second answer returned; "echo", (the answer, the tensors
    as forward left them)."""
    import numpy as np
    import torch

    # The CPU generator only: torch.manual_seed also queues the seed for CUDA and XPU with a formatted
    # stack, which reads the source file of every frame in a child that has no such cache yet.
    torch.default_generator.manual_seed(0)
    module = cls(*init_args, **init_kwargs)
    if not isinstance(module, torch.nn.Module):
        raise CannotLoad(f"{convert.type_name(module)} from {name}(...)", "a torch.nn.Module",
                         f" ({name} must subclass torch.nn.Module)")
    with torch.no_grad():
        for key, values in state.items():
            target = _tensor(module, key)
            values = np.array(values)        # a copy: torch warns of an array it may not write to
            if target is None:      # said of the class, in the contract's terms: what it lacks
                layer = key.split(".")[0]
                raise CannotLoad("", "", said=f"has no parameter {key} to load the check's weights into: the "
                                              f"contract's {layer} is an nn.Linear(d_model, d_model) with its bias "
                                              f"(bias=True, torch's default)")
            if tuple(target.shape) != tuple(values.shape):
                raise CannotLoad(f"a {name} whose {key} has shape {tuple(target.shape)}", f"{tuple(values.shape)}")
            target.copy_(torch.from_numpy(values).to(target.dtype))
    torch.nn.Module.eval(module)    # the class's own `eval`, never one your class defines
    how = how or {}
    args, kwargs = arguments.tensors_handed(list(args), dict(kwargs), bool(how.get("read_only")))
    given = [*args, *kwargs.values()]
    with arguments.refusing_writes(given) if how.get("read_only") else contextlib.nullcontext():
        answer = module(*args, **kwargs)
        if how.get("again"):
            answer = module(*args, **kwargs)
    return (answer, arguments.after(given)) if how.get("echo") else answer


def _tensor(module, key: str):
    """The tensor at `key` ("W_q.bias") of `module`, or None when there is none (`bias=False` makes
    the attribute None; a name that is not there at all, or whose lookup raises, is none either)."""
    import torch

    found = module
    for part in key.split("."):
        try:
            found = getattr(found, part)
        except BaseException:  # noqa: BLE001 - a missing name, or a property of yours that raises
            return None
    return found if isinstance(found, torch.Tensor) else None
