"""How a call hands its arguments to the student's function: the grader's sandbox child and
check.py's child, one code.

Each call gets arrays of its own, so one call's changes never reach another; an array a check
passes several times in one call (`f(x, x, x)`, ordinary self-attention) is one array there too
(`same`); a call may hand its arrays read-only, and may send back the arrays it handed, as the
function left them (`after`), so that a check can see whether they were changed in place.
Needs numpy only when there are arrays.
"""

from __future__ import annotations


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
