"""Grader side: work started before it is asked for, so that it is ready when it is.

`ForkedAhead`: per zygote, one child forked ahead, placed in its cgroup and waiting for its first
frame, so that the next session of that kind starts at once.

From a zygote's second child on, the next child is forked while the last one works: the zygote's
fork and the kernel's move into a cgroup (mostly a wait: about 8 ms on cgroup v1) overlap that
work instead of coming before the next child. A child forked ahead never sees a submission before
its first frame: until then its monitor only waits (inside/monitor.py).

`SessionsAhead`: the next stem of a submission, importing in its own child while the grader
checks the current one (`Sandbox.open_ahead`; autograder.grading.submission opens each stem one
ahead). `Sandbox.session` adopts it when asked for the same file: the session is the same as one
opened then (a fresh child, the same file, the same provided names), only its import started
sooner, on a core that would otherwise wait for the grader. Each is used once; one never asked
for is closed with the submission (`drop`).
"""

from __future__ import annotations

from typing import Any, Callable

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


class SessionsAhead:
    def __init__(self):
        self._open: dict[str, Any] = {}       # stem -> a deferred Session nobody has asked for yet

    def holds(self, stem: str) -> bool:
        return stem in self._open

    def keep(self, stem: str, session) -> None:
        self._open[stem] = session

    def adopt(self, stem: str, source: Any, filename: str, provided: dict, needs: tuple[bool, bool]):
        """The session opened ahead for exactly this file (its source, name, provided names and
        zygote), taken out; None when there is none. One opened for other contents is closed."""
        session = self._open.pop(stem, None)
        if session is None:
            return None
        if (session.filename, session.needs, session.provided) == (filename, needs, provided) \
                and session.source == source:
            return session
        session.close()
        return None

    def drop(self) -> None:
        """Closes every session nobody asked for."""
        sessions, self._open = list(self._open.values()), {}
        for session in sessions:
            session.close()
