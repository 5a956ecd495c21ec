"""The machine's cores, shared by a class run's lanes: a child that sleeps lends its core.

A class run grades `jobs` submissions at once, one per core. A submission whose code sleeps or
blocks (`time.sleep` in a loop, a thread waiting forever) keeps its lane waiting for the time
limit -- 20 s at import by default -- while its core does nothing. A lane holds one of the
`Cores` while it grades; while it waits on a child that has used almost no CPU for LEND_AFTER
seconds, it lends it, and another lane grades the next submission meanwhile. It takes a core
back (waiting for one if need be) once the answer or the timeout comes.
"""

from __future__ import annotations

import threading

LEND_AFTER = 0.3     # s a request has waited before its child's CPU share is looked at
LEND_BELOW = 0.25    # the child's share of one core below which the wait is lent


class Cores:
    """`n` cores: a lane `take`s one to grade and `give`s it back when done."""

    def __init__(self, n: int):
        self.n = n
        self._free = threading.Semaphore(n)
        self._lock = threading.Lock()
        self.lent = 0           # cores lent by waiting lanes so far (how often it helped)

    def take(self) -> None:
        self._free.acquire()

    def give(self) -> None:
        self._free.release()

    def lend(self) -> None:
        """A waiting lane's core, handed on until `take` gets one back."""
        with self._lock:
            self.lent += 1
        self._free.release()
