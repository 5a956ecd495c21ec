"""The optional speed-ups, behind one switch.

The plain path (start a zygote, fork a child, call, compare, write) is always right; each name
below only makes it faster, and the whole suite passes with every one of them off:

    ATTNKIT_FAST=0                      every speed-up off (the plain path)
    ATTNKIT_FAST=1 (or unset)           every speed-up on
    ATTNKIT_FAST=-course_cache         all on but these (a name without "-": only those on)

`attnkit --no-fast ...` sets ATTNKIT_FAST=0 for the run (and the processes it starts).
benchmarks/bench_speedups.py measures what each one earns on its target path, on and off in the
same run; one that earns under 10% there is removed, not kept behind the switch.
"""

from __future__ import annotations

import os

SWITCH = "ATTNKIT_FAST"

SPEEDUPS = {
    "course_cache": "a course validated before is read without pydantic",
}


class UnknownSpeedup(ValueError):
    pass


def _parse(value: str) -> set[str]:
    value = value.strip().lower()
    if value in ("", "1", "on", "true", "yes", "all"):
        return set(SPEEDUPS)
    if value in ("0", "off", "false", "no", "none"):
        return set()
    names = [part.strip() for part in value.split(",") if part.strip()]
    unknown = [n.lstrip("-+") for n in names if n.lstrip("-+") not in SPEEDUPS]
    if unknown:
        raise UnknownSpeedup(f"{SWITCH}={value!r}: no speed-up {unknown[0]!r}; the speed-ups are "
                             f"{', '.join(SPEEDUPS)} (0 turns every one off)")
    if all(n.startswith("-") for n in names):
        return set(SPEEDUPS) - {n[1:] for n in names}
    return {n.lstrip("+") for n in names if not n.startswith("-")}


def enabled() -> set[str]:
    """The speed-ups on, as $ATTNKIT_FAST says (read each time: a test or `--no-fast` may set it)."""
    return _parse(os.environ.get(SWITCH, ""))


def on(name: str) -> bool:
    if name not in SPEEDUPS:
        raise UnknownSpeedup(f"no speed-up {name!r}")
    try:
        return name in enabled()
    except UnknownSpeedup:
        return True       # said where the command line is read (check_switch); never a crash here


def check_switch() -> str | None:
    """What is wrong with $ATTNKIT_FAST, in one sentence; None where it reads."""
    try:
        enabled()
    except UnknownSpeedup as err:
        return str(err)
    return None
