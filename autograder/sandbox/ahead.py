"""Grader side: per zygote, one child forked ahead, placed in its cgroup and waiting for its first
frame, so that the next session of that kind starts at once.

From a zygote's second child on, the next child is forked while the last one works: the zygote's
fork and the kernel's move into a cgroup (mostly a wait: about 8 ms on cgroup v1) overlap that
work instead of coming before the next child. A child forked ahead never sees a submission before
its first frame: until then its monitor only waits (inside/monitor.py).
"""

from __future__ import annotations

from typing import Callable

from autograder.sandbox.exchange import Child
from autograder.sandbox.outcome import SandboxError
from autograder.sandbox.zygote_process import _Zygote, _ZygoteDied


class ForkedAhead:
    def __init__(self):
        self.waiting: dict[_Zygote, Child] = {}
        self._forks: dict[_Zygote, int] = {}

    def take(self, z: _Zygote, discard: Callable[[Child], None]) -> Child | None:
        """The child forked ahead of `z` if it still waits (counted as one of `z`'s children),
        else None; one that died while it waited is discarded."""
        self._forks[z] = self._forks.get(z, 0) + 1
        child = self.waiting.pop(z, None)
        if child is None:
            return None
        z.poll(0)      # the zygote's news first: a child that died while it waited is not used
        if child.alive and not z.dead and child.pid in z.live:
            return child
        discard(child)
        return None

    def fork(self, z: _Zygote, fork_now: Callable[[_Zygote], Child]) -> None:
        """Forks `z`'s next child now, from its second child on."""
        if z in self.waiting or self._forks.get(z, 0) < 2 or z.dead:
            return
        try:
            self.waiting[z] = fork_now(z)
        except (_ZygoteDied, SandboxError, OSError):
            pass     # the next session forks its own child and says what went wrong

    def close(self, discard: Callable[[Child], None]) -> None:
        for child in self.waiting.values():
            discard(child)
        self.waiting.clear()
