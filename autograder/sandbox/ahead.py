"""Grader side: work started before it is asked for, so that it is ready when it is.

`ForkedAhead`: per zygote, children forked ahead, placed in their cgroups and waiting for their
first frame, so that the next session of that kind starts at once.

From a zygote's second child on, the next child is forked while the last one works: the zygote's
fork and the kernel's move into a cgroup (mostly a wait: 5-12 ms on cgroup v1, in the zygote, not
in the grader's lane) overlap that work instead of coming before the next child. Once in its
cgroup, a child forked ahead builds its jail and starts its worker, which then waits: it sees no
submission before its first frame (inside/monitor.py), and the session that takes it starts the
import at once. Where a student waits between saves (`attnkit check --watch`), the children are
forked then instead (`top_up`): as many as the last grading took, none while a grading runs.

`SessionsAhead`: the next stem of a submission, importing in its own child while the grader
checks the current one (`Sandbox.open_ahead`; autograder.grading.submission opens each stem one
ahead). `Sandbox.session` adopts it when asked for the same file: the session is the same as one
opened then (a fresh child, the same file, the same provided names), only its import started
sooner, on a core that would otherwise wait for the grader. Each is used once; one never asked
for is closed with the submission (`drop`).

`CallsAhead`: the sessions with a call sent ahead (grading/alongside.py: the scaling figure, then
the hidden run with other dims, in a second child). While the grader waits for another child's
answer it waits for theirs too (exchange.receive_answer's `beside`): one read as it comes lets the
call queued behind it go at once, so the second child works while the first does instead of once
the check that asked for it is graded (a watched scaling re-grade 2-20 ms sooner).
"""

from __future__ import annotations

from typing import Any, Callable

from autograder.sandbox.exchange import Child
from autograder.sandbox.outcome import SandboxError
from autograder.sandbox.zygote_process import _Zygote, _ZygoteDied


class ForkedAhead:
    def __init__(self):
        self.waiting: dict[_Zygote, list[Child]] = {}
        self._forks: dict[_Zygote, int] = {}
        self._taken: dict[_Zygote, int] = {}      # children taken since the last top-up
        self._round: dict[_Zygote, int] = {}      # children taken by the submission being graded
        self._per_round: dict[_Zygote, int] = {}  # ... and by the last one graded
        # Set once the caller tops up between gradings (a watcher waiting for the next save): then
        # no child is forked while a grading runs, where the fork would delay the student's answer.
        self.when_idle = False

    def take(self, z: _Zygote, discard: Callable[[Child], None], usable: Callable[[Child], bool]) -> Child | None:
        """A child forked ahead of `z` if one still waits (counted as one of `z`'s children),
        else None; one that died while it waited (`usable` says) is discarded."""
        self._forks[z] = self._forks.get(z, 0) + 1
        self._taken[z] = self._taken.get(z, 0) + 1
        self._round[z] = self._round.get(z, 0) + 1
        waiting = self.waiting.get(z, [])
        if waiting:
            z.poll(0)      # the zygote's news first: a child that died while it waited is not used
        while waiting:
            child = waiting.pop(0)
            if child.alive and not z.dead and usable(child):
                return child
            discard(child)
        return None

    def fork(self, z: _Zygote, fork_now: Callable[[_Zygote], Child], most: int = 3) -> None:
        """Forks `z`'s next children now, from its second child on (not when topped up between
        gradings): as many waiting as the last submission took of `z` (at most `most`). The numpy
        zygote serves two stems a submission, the second opened a moment after the first: with one
        child waiting, the second took the child forked for it a moment before, still being placed
        in its cgroup."""
        if self.when_idle or self._forks.get(z, 0) < 2:
            return
        wanted = max(1, min(most, self._per_round.get(z, 1)))
        while not z.dead and len(self.waiting.get(z, [])) < wanted:
            if not self._fork_into(z, fork_now):
                break

    def end_round(self) -> None:
        """A submission is graded: what it took of each zygote is what the next is expected to take."""
        if self._round:
            self._per_round, self._round = self._round, {}

    def top_up(self, fork_now: Callable[[_Zygote], Child], most: int = 3) -> None:
        """Between gradings: as many children waiting for each zygote as the last grading took
        (at most `most`), so that the next one, likely of the same file, forks none."""
        self.when_idle = True
        taken, self._taken = self._taken, {}
        for z, n in taken.items():
            while not z.dead and len(self.waiting.get(z, [])) < min(n, most):
                if not self._fork_into(z, fork_now):
                    break

    def _fork_into(self, z: _Zygote, fork_now: Callable[[_Zygote], Child]) -> bool:
        try:
            self.waiting.setdefault(z, []).append(fork_now(z))
            return True
        except (_ZygoteDied, SandboxError, OSError):
            return False     # the next session forks its own child and says what went wrong

    def close(self, discard: Callable[[Child], None]) -> None:
        for children in self.waiting.values():
            for child in children:
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


class CallsAhead:
    """Sessions with a call sent ahead, whose answers are read while another child is awaited."""

    def __init__(self):
        self._sessions: list = []
        self._reading = False

    def keep(self, session) -> None:
        if session not in self._sessions:
            self._sessions.append(session)

    def others(self, child: Child) -> dict:
        """{socket: read} of the calls ahead on children other than `child` (none while one is read:
        reading it waits for its child alone)."""
        if self._reading:
            return {}
        self._sessions = [s for s in self._sessions if s.ahead_child() is not None]
        return {c.sock: (lambda s=s: self._read(s)) for s in self._sessions if (c := s.ahead_child()) is not child}

    def _read(self, session) -> None:
        self._reading = True
        try:
            session.poll_ahead()     # the answer, and the call queued behind it sent
        finally:
            self._reading = False
