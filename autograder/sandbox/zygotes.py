"""Grader side: the warm zygotes a Sandbox forks its children from, one per kind of source.

A numpy-only zygote serves the sources that import neither torch nor matplotlib; a zygote that
imported torch, matplotlib or both starts only when a source needs it (`needs`: read from its
import lines), and one with both serves torch-only sources too. As root, all the zygotes of one
Sandbox run as its private uid.
"""

from __future__ import annotations

from typing import Iterable

import atexit
import os

from autograder.config.limits import Limits
from autograder.sandbox.outcome import SandboxError
from autograder.sandbox.zygote_process import _Zygote, next_private_uid

Needs = tuple[bool, bool]      # (torch, matplotlib)


def needs_of(imports: frozenset[str]) -> Needs:
    """(torch, matplotlib): which zygote a source needs, from the modules it imports."""
    return "torch" in imports, "matplotlib" in imports


def private_uid_wanted(limits: Limits) -> bool:
    """As root (unless told not to drop privileges): zygotes and children run as a private uid."""
    return limits.drop_privileges and os.geteuid() == 0


def zygote_config(needs: Needs, uid: int | None, limits: Limits) -> dict:
    return {"torch": needs[0], "matplotlib": needs[1], "uid": uid,
            "jail": limits.drop_privileges or os.geteuid() != 0, "tmp_mb": limits.tmp_mb}


def needs(imports: frozenset[str], torch: bool | None = None, matplotlib: bool | None = None) -> Needs:
    """Which zygote a source needs, from the modules it imports (as its import lines say, read by
    the Sandbox's reader); `torch` / `matplotlib` say so instead."""
    found = needs_of(imports)
    return (found[0] if torch is None else bool(torch), found[1] if matplotlib is None else bool(matplotlib))


# Zygotes started before the Sandbox that will use them exists (start_early), by what they serve.
_EARLY: dict[Needs, _Zygote] = {}
_early_uid: int | None = None


def start_early(limits: Limits, wanted: Iterable[Needs]) -> None:
    """Starts, without waiting, zygotes a Sandbox about to be made will ask for: they import numpy
    or torch on the other core while the grader imports itself (`attnkit check`). The first
    Sandbox that asks for one with the same configuration takes it; one nobody took is closed at
    exit. A zygote of these needs already started early with the same configuration is kept."""
    global _early_uid
    if private_uid_wanted(limits) and _early_uid is None:
        _early_uid = next_private_uid()     # one Sandbox's: its zygotes share it
    uid = _early_uid if private_uid_wanted(limits) else None
    for needs in wanted:
        early = _EARLY.get(needs)
        config = zygote_config(needs, uid, limits)
        if early is not None and early.config == config and early.alive():
            continue
        if early is not None:
            _discard(early)
        try:
            _EARLY[needs] = _Zygote(config)
        except (OSError, SandboxError):
            _EARLY.pop(needs, None)      # the Sandbox will start it again and say why


def _discard(z: _Zygote) -> None:
    """An early zygote nobody takes: one still importing is killed (it reads no request until it
    is ready), not waited for."""
    if not z.ready_now():
        z.proc.kill()
    z.close()


@atexit.register
def _close_early() -> None:
    for z in _EARLY.values():
        _discard(z)
    _EARLY.clear()


class Zygotes:
    def __init__(self, limits: Limits, startup_timeout: float):
        self.limits, self.startup_timeout = limits, startup_timeout
        self.by_needs: dict[Needs, _Zygote] = {}
        self.private_uid: int | None = None
        self.torch_with_matplotlib = False   # set by a class run: one torch zygote serves every file
        self.restarts = 0                     # zygotes started again after one died
        self.closed = False

    def uid(self) -> int | None:
        """As root: this Sandbox's private uid, unique among the Sandboxes of this process."""
        if not private_uid_wanted(self.limits):
            return None
        if self.private_uid is None:
            self.private_uid = next_private_uid()
        return self.private_uid

    def start(self, needs: Needs) -> _Zygote:
        z = self._adopted(needs) or _Zygote(zygote_config(needs, self.uid(), self.limits))
        self.by_needs[needs] = z
        return z

    def _adopted(self, needs: Needs) -> _Zygote | None:
        """The zygote start_early started for `needs`, if it is the one this Sandbox would start:
        the same configuration, with this Sandbox's private uid (or the early one's, taken)."""
        early = _EARLY.pop(needs, None)
        if early is None:
            return None
        uid = early.config["uid"]
        if (self.private_uid in (None, uid) and early.config == zygote_config(needs, uid, self.limits)
                and early.alive()):
            if uid is not None:
                self.private_uid = uid
            return early
        _discard(early)
        return None

    def serving(self, needs: Needs) -> Needs:
        """A torch zygote that has matplotlib too serves torch-only sources: one torch start
        (torch's import is the slowest part of a zygote's start) instead of two, when files need
        both kinds. `torch_with_matplotlib` (a class: some file will) makes every torch zygote one
        with matplotlib (its import paid once)."""
        if needs == (True, False):
            z = self.by_needs.get((True, True))
            if self.torch_with_matplotlib or (z is not None and z.alive()):
                return True, True
        return needs

    def get(self, needs: Needs) -> _Zygote:
        """The zygote serving `needs`, started (again, if it died) and ready: this waits for it."""
        if self.closed:
            raise SandboxError("the sandbox is closed")
        needs = self.serving(needs)
        z = self.by_needs.get(needs)
        if z is None or not z.alive():
            if z is not None:
                z.close()
                self.restarts += 1
            z = self.start(needs)
        if not z.ready:
            z.wait_ready(self.startup_timeout)
        return z

    def warm(self, needs: Needs) -> _Zygote | None:
        """The zygote serving `needs` if it is ready now (asked without waiting), else None."""
        z = self.by_needs.get(self.serving(needs))
        return z if z is not None and z.ready_now() else None

    def any(self) -> _Zygote:
        return next(iter(self.by_needs.values())) if self.by_needs else self.get((False, False))

    def prepare(self, wanted: Iterable[Needs]) -> None:
        """Starts, without waiting, the zygotes these needs will want."""
        for needs in sorted(set(wanted), reverse=True):     # (True, True) first: it may serve (True, False)
            needs = self.serving(needs)
            z = self.by_needs.get(needs)
            if not self.closed and (z is None or not z.alive()):
                try:
                    if z is not None:
                        z.close()
                        self.restarts += 1
                    self.start(needs)
                except (OSError, SandboxError):
                    pass     # the session will try again and say why

    def ask_to_exit(self) -> None:
        """Asks every zygote to exit, waiting for none: each kills and reaps its children, then exits."""
        self.closed = True
        for z in self.by_needs.values():
            z.ask_to_exit()

    def close(self) -> None:
        """Asks every zygote to exit before waiting for any, so that they wind down together."""
        self.ask_to_exit()
        for z in self.by_needs.values():
            z.close()
        self.by_needs.clear()
