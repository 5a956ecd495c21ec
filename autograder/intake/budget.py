"""What reading one student's submission may cost the grader in all (`IntakeLimits`, course.yml
`limits.intake`), and what it has cost so far (`Account`).

Everything the grader does with a student's bytes -- listing their folder, staging their uploads,
unpacking archives, reading notebooks, compiling and parsing their code, fingerprinting it for
the similarity signal -- runs in a child of the parse helper (autograder/intake/bounded.py) and is
charged to that student's Account: the CPU time each child used (measured, not estimated), the
bytes and files staged, the entries looked at, the archives opened, the notebook code read. A
child starts with at most what is left. Past a total, what does not fit is left out: the rest is
graded, and `Account.summary` says in one line what was left out and why. A refusal is
remembered by the digest of the bytes, in the student's own account: the same archive handed in
under sixty names is read once, and costs its author alone.

The defaults are far above what an honest submission uses (a dozen files of a few KB, a notebook
of 1 MB: a second of CPU time and a few MB).
"""

from __future__ import annotations

import contextlib
import contextvars
import math
import resource
import threading
from dataclasses import asdict, dataclass, field
from typing import Iterator

from autograder.config.limits import IntakeLimits

MIN_CHILD_CPU = 1       # s: less than this left, no child is started


# What is counted, the limit it is held to, and how the feedback says it.
COUNTED = {
    "staged_bytes": (lambda lim: lim.staged_bytes, lambda lim: f"{lim.staged_mb} MB of files staged"),
    "files": (lambda lim: lim.files, lambda lim: f"{lim.files} files staged"),
    "entries": (lambda lim: lim.entries, lambda lim: f"{lim.entries} entries looked at"),
    "archives": (lambda lim: lim.archives, lambda lim: f"{lim.archives} archives opened"),
    "notebook_bytes": (lambda lim: lim.notebook_kb * 1024, lambda lim: f"{lim.notebook_kb} KB of notebook code"),
}


class Spent(Exception):
    """What an item needs is more than is left of the submission's budget (the message says which)."""


@dataclass
class Account:
    """One student's reading so far: the CPU time of every child, the refusals and what was left
    out, for the whole run (grading, then the similarity pass); `used`, the totals counted, summed
    over the readings. A student is read by one lane at a time; its changes hold a lock all the same."""
    limits: IntakeLimits = field(default_factory=IntakeLimits)
    cpu_seconds: float = 0.0
    used: dict[str, int] = field(default_factory=lambda: dict.fromkeys(COUNTED, 0))
    refused: dict[str, str] = field(default_factory=dict)     # digest of the bytes -> why they were refused
    left_out: dict[str, list[str]] = field(default_factory=dict)   # why -> what was left out for it
    # How grading reads the submission (a staging.Reader; None: the parse helper's `read`), and what
    # that reader made of the student's sources in the same child (the class run's fingerprints),
    # kept with the student's record until the class run takes it.
    reader: object = field(default=None, repr=False, compare=False)
    made: tuple = field(default=(), repr=False, compare=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)
    _clock: object = field(default=None, repr=False, compare=False)    # in a child: its own CPU time, measured

    # ---- CPU time

    def spent(self) -> float:
        return self.cpu_seconds + (self._clock() if self._clock is not None else 0.0)

    def cpu_left(self) -> float:
        return self.limits.cpu_seconds - self.spent()

    def child_cpu(self, item: bool = True) -> int:
        """The CPU time (whole seconds) a child may use now: an item's limit, or (`item` False: the
        reading of the whole submission, whose items are children of its own) all that is left.
        Raises Spent when less than MIN_CHILD_CPU is left."""
        left = math.floor(self.cpu_left())
        if left < MIN_CHILD_CPU:
            raise Spent(f"this submission has used the {self.limits.cpu_seconds:g} s of CPU time the grader "
                        f"gives to reading one submission")
        return min(left, self.limits.item_cpu_seconds) if item else left

    def must_stop(self, margin: float = 0.5) -> bool:
        """Whether a child reading the whole submission stops now, while it can still answer with
        what it has done: `margin` seconds before its own CPU limit (RLIMIT_CPU, as it was started
        with: past it the child ends with nothing said), or once the student's time is spent.
        Outside a child: when less is left than a child is started with."""
        if self._clock is None:
            return self.cpu_left() < MIN_CHILD_CPU
        limit = resource.getrlimit(resource.RLIMIT_CPU)[0]
        own = resource.getrusage(resource.RUSAGE_SELF)
        return (limit != resource.RLIM_INFINITY and own.ru_utime + own.ru_stime > limit - margin) \
            or self.cpu_left() <= 0

    def charge_cpu(self, seconds: float) -> None:
        if self._clock is None:       # a child's own time is measured by its clock
            with self._lock:
                self.cpu_seconds += max(0.0, seconds)

    # ---- what is counted

    def left(self, what: str) -> int:
        return COUNTED[what][0](self.limits) - self.used[what]

    def take(self, what: str, amount: int = 1) -> bool:
        """Counts `amount` of `what` if it fits, else nothing (False)."""
        with self._lock:
            if self.used[what] + amount > COUNTED[what][0](self.limits):
                return False
            self.used[what] += amount
            return True

    def take_all(self, amounts: dict[str, int]) -> str | None:
        """Counts every one of `amounts` if all fit; else nothing, and the first that does not fit."""
        with self._lock:
            for what, amount in amounts.items():
                if self.used[what] + amount > COUNTED[what][0](self.limits):
                    return what
            for what, amount in amounts.items():
                self.used[what] += amount
            return None

    def over(self, what: str) -> str:
        """Why something was left out for `what`: "more than the 8 archives opened a submission may use"."""
        return f"more than the {COUNTED[what][1](self.limits)} a submission may use"

    def over_time(self) -> str:
        """Why something was left out when the CPU time ran out."""
        return f"more than the {self.limits.cpu_seconds:g} s of CPU time the grader gives to reading one submission"

    def leave_out(self, why: str, name: str) -> None:
        with self._lock:
            names = self.left_out.setdefault(why, [])
            if name not in names:
                names.append(name)

    def remember(self, digest: str | None, why: str) -> None:
        if digest is not None:
            with self._lock:
                self.refused[digest] = why

    def summary(self) -> str:
        """One line for the feedback: what was left out of reading the submission, and why ("")."""
        if not self.left_out:
            return ""
        parts = []
        for why, names in self.left_out.items():
            shown = ", ".join(names[:5]) + (f" and {len(names) - 5} more" if len(names) > 5 else "")
            parts.append(f"{shown} ({why})")
        return "part of your submission was not read, as it goes past what the grader reads of one submission: " \
               + "; ".join(parts) + "; the rest was graded"

    # ---- across a child

    def state(self) -> dict:
        """What a child that reads the submission needs of this account (JSON): its limits, the CPU
        time used, the refusals. The counted totals hold for one reading (what one staged copy
        holds, what one pass looks at): a child counts from nothing."""
        return {"limits": asdict(self.limits), "cpu_seconds": self.spent(), "refused": dict(self.refused)}

    @classmethod
    def in_child(cls, state: dict) -> "Account":
        """The account a child works with: its CPU time is what the parent had used plus the child's
        own and its children's, measured."""
        start = _cpu_now()
        return cls(IntakeLimits(**state["limits"]), float(state["cpu_seconds"]), refused=dict(state["refused"]),
                   _clock=lambda: _cpu_now() - start)

    def changes(self, before: dict) -> dict:
        """What a child adds to the account it was given (`before`, its state), for `absorb`."""
        return {"used": dict(self.used),
                "refused": {k: v for k, v in self.refused.items() if k not in before["refused"]},
                "left_out": self.left_out}

    def absorb(self, changes: dict) -> None:
        """A child's changes (see `changes`), checked as the data of a child's answer."""
        with self._lock:
            for what, amount in changes.get("used", {}).items():
                if what in COUNTED and type(amount) is int and amount > 0:
                    self.used[what] += amount
            for key, why in changes.get("refused", {}).items():
                if isinstance(key, str) and isinstance(why, str):
                    self.refused[key] = why[:500]
        for why, names in changes.get("left_out", {}).items():
            for name in names if isinstance(names, list) else ():
                if isinstance(why, str) and isinstance(name, str):
                    self.leave_out(why[:300], name[:300])


def _cpu_now() -> float:
    own, waited = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + waited.ru_utime + waited.ru_stime


_CURRENT: contextvars.ContextVar[Account | None] = contextvars.ContextVar("attnkit_intake_account", default=None)


def current() -> Account:
    """The account of the submission being read here; outside any (a tool reading one file) a
    fresh one with the defaults."""
    account = _CURRENT.get()
    return account if account is not None else Account()


@contextlib.contextmanager
def charging(account: Account) -> Iterator[Account]:
    """Everything read in this context (this thread) is charged to `account`."""
    token = _CURRENT.set(account)
    try:
        yield account
    finally:
        _CURRENT.reset(token)


class Accounts:
    """The accounts of a run's students, by student key: grading and the similarity pass draw from
    one per student."""

    def __init__(self, limits: IntakeLimits):
        self.limits = limits
        self.reader = None       # how grading reads each student (Account.reader)
        self._held: dict[str, Account] = {}
        self._lock = threading.Lock()

    def of(self, student: str) -> Account:
        with self._lock:
            if student not in self._held:
                self._held[student] = Account(self.limits)
            account = self._held[student]
            account.reader = self.reader
            return account
