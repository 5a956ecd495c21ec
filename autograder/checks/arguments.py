"""The check that a function leaves the arrays it is given as they were: every array function of
the contract has one, with the same three calls.

1. the arguments as the function leaves them are sent back (`echo`): none may have changed;
2. one array passed as several arguments (`f(x, x, x)`, ordinary self-attention) must give the
   answer that separate copies of it give: a change made in place to one changes the others;
3. read-only arrays must be accepted, with the same answer (a function that writes into an
   argument raises there, on the line that writes).

The torch module's forward has one too (`module_arguments_check`), in torch's terms: x and mask
sent back as forward left them; forward called twice on the same tensors (every layer of a model
is given the same mask) must give its first answer again; and the tensors handed "read-only" (laid
out not contiguous, x requiring grad as a layer's input does, an in-place change refused on its
line) must give the same answer.

A function that writes into a new array, or returns a view of its argument, passes; a wrong answer
earns nothing here either (the function's other checks say what is wrong). The property
is the judge's (judge/properties.py, `arguments`), so check.py decides it the same way; the calls
hand their arguments as judge/arguments.py says, in the grader's child and in check.py's.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from autograder.checks.base import Check, compare_property


def arguments_check(stem: str, function: str, inputs: Callable[[np.random.Generator], dict],
                    arrays: tuple[str, ...], scalars: tuple[Any, ...] = (), alias: tuple[str, ...] = ()) -> Check:
    """The check of `function(*arrays, *scalars)` (the arrays by their names in `inputs`); `alias`:
    the arguments given one array (inputs["X"]) in the aliasing call."""
    def run(impl, i):
        args = [i[name] for name in arrays] + list(scalars)
        kept = impl.probe(function, args, echo=True)
        answers = [kept]
        if alias:
            x = i["X"]
            one = [x if name in alias else i[name] for name in arrays] + list(scalars)
            copies = [x.copy() if name in alias else i[name] for name in arrays] + list(scalars)
            answers += [impl.probe(function, one), impl.probe(function, copies)]
        read_only = impl.probe(function, args, read_only=True)     # last: a write into an argument raises here
        return (kept, read_only, *answers[1:])

    said = ", ".join(arrays)
    title = f"{function} leaves {said} as {'they were' if len(arrays) > 1 else 'it was'} and takes read-only arrays"
    if alias:
        title += f"; {', '.join(alias)} as one array (self-attention) gives the same answer as copies"
    return Check(f"{stem}.{function}.arguments", title, inputs=inputs, run=run,
                 compare=compare_property("arguments", _params(function, arrays, alias=list(alias))))


def module_arguments_check(stem: str, class_name: str, inputs: Callable[[np.random.Generator], dict]) -> Check:
    """The check of `class_name`'s forward on inputs["x"] and inputs["mask"], the module built from
    inputs["init"] and loaded with inputs["state"] (as the module's other checks build it)."""
    def run(impl, i):
        def forward(**how):
            return impl.module_forward(class_name, i["init"], i["state"], i["x"], i["mask"], **how)

        kept = forward(echo=True)
        again = forward(again=True)
        read_only = forward(read_only=True)     # last: an in-place change to an input raises here, on its line
        return (kept, read_only, again)

    function = f"{class_name}.forward"
    names = ("x", "mask")
    title = (f"{function} leaves x and mask as they were, gives the same answer when called again on them, "
             f"and takes tensors that are not contiguous and an x that requires grad")
    return Check(f"{stem}.{class_name}.arguments", title, inputs=inputs, run=run,
                 compare=compare_property("arguments", _params(
                     function, names, again=list(names),
                     read_only="x and mask are not contiguous and x requires grad (as a layer's input does)")))


def _params(function: str, names: tuple[str, ...], **said) -> Callable:
    """The property's parameters: the function, its arguments' names and values before the call,
    the tolerance, the reference's first answer, and what the check's calls are said by (`said`)."""
    def params(ctx, expected) -> dict:
        tol = ctx.tol
        right = {} if expected is None else {"expected": expected[0][0]}    # the reference's answer
        return {"function": function, "names": list(names), "before": [ctx.inputs[name] for name in names],
                "rtol": tol.rtol, "atol": tol.atol} | said | right

    return params
