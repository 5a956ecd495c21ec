"""Failed checks grouped by cause, so that each cause is told once: the grader's pages and check.py.

Plain data in, groups out; the standard library only (check.py ships this file beside it). Every
page that tells a student what failed groups with `group_causes`: the terminal of `attnkit check`,
the Markdown and HTML feedback, Gradescope's results.json, nbgrader's feedback cell and the
handout's check.py, so a sentence that several checks share is said once on each of them.

Two failed checks share a cause when, in this order of precedence:

1. ``mistake``: the grader named the same catalogued misconceptions for both (``mistakes``);
2. ``hint``: they carry the same hint (what was seen in the answer, "your weights are right but
   your output is not", a diagnosed error), or ``advice``: the same generic advice (`advice`:
   hints given whatever the mistake, such as "read the line the error names"), their messages
   the same or not;
3. ``message``: without a hint, they fail with the very same message (an unimplemented function,
   a missing parameter of a module, the same exception), or with messages that end with the same
   explanation ("...: each query's weights over the keys must add up to 1"), unless a message is a
   stand-in (`concealed`: a hidden check's note).

Anything else is a cause of its own (``alone``). A cause says once what all its checks share: its
hint, and what their messages all say (the whole message, or the explanation they end with);
what a check's message says beyond that (which entry differs) stays with it, as
`Cause.evidence`, each such text once with the checks that have it.

    causes = group_causes([Failure("a.f.one", "failed", "2 differ: rows must sum to 1", "Seen.", ("x",)),
                           Failure("a.f.two", "failed", "5 differ: rows must sum to 1", "Seen.", ("x",))])
    causes[0].headline()   # "1 mistake -> 2 checks"
    causes[0].message      # "rows must sum to 1"
    causes[0].evidence     # (((a.f.one,), "2 differ"), ((a.f.two,), "5 differ"))

The handout's check.py (and later more of the grader's engine it shares) imports this module
beside it: it must stay free of the kit's imports.

`plain_lines` lays the causes out as plain text (check.py, nbgrader's cell), the way the terminal
lays them out with colour.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Callable, Iterable
from .words import counted

MISTAKE, HINT, MESSAGE, ADVICE, ALONE = "mistake", "hint", "message", "advice", "alone"


@dataclass(frozen=True)
class Failure:
    """One check that did not pass, as plain data."""
    id: str                           # the check's id, unique among the failures grouped together
    status: str                       # failed | error | not_implemented | missing
    message: str = ""                 # what went wrong and where
    hint: str = ""                    # what the grader makes of it, as the student may see it
    mistakes: tuple[str, ...] = ()    # the catalogued misconceptions named for it
    concealed: bool = False           # its message is a stand-in (a hidden check's): never grouped by
    title: str = ""                   # what the check is about, for the pages' lists


@dataclass(frozen=True)
class Cause:
    """Failures that one cause explains: what they share said once (`message`, `hint`), then each
    check with what is its own (`evidence`)."""
    kind: str                                   # MISTAKE, HINT, MESSAGE, ADVICE or ALONE
    checks: tuple[Failure, ...]                 # those whose message is real first, else as given
    message: str                                # what every check's message says ("" nothing shared)
    hint: str                                   # the cause's hint, said once ("" none)
    # Every check with what its message says beyond `message` ("" nothing more), in order; checks
    # whose own text is the same are together, each text once.
    evidence: tuple[tuple[tuple[Failure, ...], str], ...] = ()

    @property
    def first(self) -> Failure:
        return self.checks[0]

    @property
    def others(self) -> tuple[Failure, ...]:
        return self.checks[1:]

    @property
    def mistakes(self) -> tuple[str, ...]:
        return self.first.mistakes

    def own_message(self, failure: Failure) -> str:
        """What is said of `failure` alone: its message, less what the cause says for all."""
        return next((text for failures, text in self.evidence if failure in failures), failure.message)

    def within(self, ids) -> Cause:
        """The cause as told where only the checks `ids` are (one notebook cell of several)."""
        keep = set(ids)
        evidence = tuple((kept, text) for failures, text in self.evidence
                         for kept in [tuple(f for f in failures if f.id in keep)] if kept)
        return replace(self, checks=tuple(f for f in self.checks if f.id in keep), evidence=evidence)

    def headline(self, arrow: str = "->") -> str:
        """How many checks the cause explains, in words ("" for a cause of one check)."""
        if len(self.checks) < 2:
            return ""
        what = "1 mistake" if self.kind == MISTAKE else "1 hint" if self.kind == ADVICE and not self.message \
            else "1 cause"
        return f"{what} {arrow} {counted(len(self.checks), 'check')}"


def group_causes(failures: Iterable[Failure], advice: Iterable[str] = ()) -> list[Cause]:
    """The failures grouped by cause (the rules above), in the order each cause's first failure
    comes. `advice`: hints that are generic advice rather than a diagnosis."""
    failures, generic = list(failures), frozenset(advice)
    endings = _explained_alike([f for f in failures if _key(f, generic)[0] in (MESSAGE, ALONE) and
                                f.message and not f.concealed])
    groups: dict[tuple, list[Failure]] = {}
    for failure in failures:
        key = (MESSAGE, "", endings[failure.id]) if failure.id in endings else _key(failure, generic)
        groups.setdefault(key, []).append(failure)
    return [_cause(key[0], group) for key, group in groups.items()]


def _key(failure: Failure, advice: frozenset[str]) -> tuple:
    if failure.mistakes:
        return (MISTAKE, failure.mistakes)
    if failure.hint:
        return (ADVICE if failure.hint in advice else HINT, failure.hint)
    if failure.message and not failure.concealed:
        return (MESSAGE, failure.status, failure.message)
    return (ALONE, failure.id)


def _explained_alike(failures: list[Failure]) -> dict[str, str]:
    """Failures without a hint whose different messages end with the same explanation ("...: each
    query's weights over the keys must add up to 1"): failure id -> that ending, the longest that
    two or more of them share, for them to be one cause."""
    distinct = list(dict.fromkeys(f.message for f in failures))
    found: dict[str, str] = {}
    for message in distinct:
        if message in found:
            continue
        for ending in _endings(message):          # the longest first
            alike = [m for m in distinct if m not in found and ending in _endings(m)]
            if len(alike) > 1:
                found.update((m, ending) for m in alike)
                break
    return {f.id: found[f.message] for f in failures if f.message in found}


def _cause(kind: str, group: list[Failure]) -> Cause:
    # A check whose message is its own comes first: the cause is told from what it shows.
    checks = tuple(sorted(group, key=lambda f: f.concealed))
    real = list(dict.fromkeys(f.message for f in checks if f.message and not f.concealed))
    shared = real[0] if len(real) == 1 else _shared_ending(real)
    if len(checks) == 1 or (len(real) == 1 and all(f.message == shared for f in checks)):
        return Cause(kind, checks, shared, checks[0].hint, tuple(((f,), "") for f in checks))
    own: dict[str, list[Failure]] = {}
    for failure in checks:
        text = failure.message if failure.concealed or not shared else _less(failure.message, shared)
        own.setdefault(text or f"\0{failure.id}", []).append(failure)    # nothing of its own: listed alone
    evidence = tuple((tuple(fs), "" if text.startswith("\0") else text) for text, fs in own.items())
    return Cause(kind, checks, shared, checks[0].hint, evidence)


# Where the kit's messages join their parts: what differs; where; why it matters.
_JOINS = ("; ", ": ")


def _shared_ending(messages: list[str]) -> str:
    """The longest ending every message has after one of its joins (`_JOINS`): the explanation
    several checks' messages repeat. "" when there is none, or fewer than two messages."""
    if len(messages) < 2:
        return ""
    return next((e for e in _endings(messages[0]) if all(e in _endings(m) for m in messages[1:])), "")


def _endings(message: str) -> list[str]:
    """What follows each join of `message` (`_JOINS`) with something before it, the longest first."""
    starts = sorted({i + len(j) for j in _JOINS for i in _find_all(message, j) if i > 0})
    return [message[start:] for start in starts if message[start:]]


def _find_all(text: str, part: str) -> list[int]:
    found, at = [], text.find(part)
    while at >= 0:
        found.append(at)
        at = text.find(part, at + 1)
    return found


def _less(message: str, ending: str) -> str:
    """`message` without the `ending` the cause says, wherever the message says it as a whole part
    (once per problem it lists), and without the join before it."""
    if not ending:
        return message
    parts = re.split(f"({'|'.join(re.escape(j) for j in _JOINS)}){re.escape(ending)}(?={'|'.join(map(re.escape, _JOINS))}|$)",
                     message)
    return "".join(parts[::2])


def plain_lines(causes: list[Cause], mark: Callable[[Failure], str], name: Callable[[Failure], str],
                mistakes: bool = False) -> list[str]:
    """The causes as plain text, indented as check.py and nbgrader's cell print them: a cause of
    one check as its mark, name, message and hint; a cause of several as its headline, the message
    and hint it says once, then each check with what is its own. `mark(f)`: "wrong", "error"...;
    `name(f)`: the check as the page names it; `mistakes`: say the misconceptions' ids."""
    lines: list[str] = []
    for cause in causes:
        first = cause.first
        if len(cause.checks) == 1:
            lines.append(f"  {mark(first)} {name(first)}")
            lines += indented(first.message, "      ")
        else:
            lines.append(f"  {mark(first)} {cause.headline()}" + (f": {cause.message}"
                                                                   if fits_headline(cause.message) else ""))
            if cause.message and not fits_headline(cause.message):
                lines += indented(cause.message, "      ")
        if cause.hint:
            lines += indented(cause.hint, "      ", "hint: ")
        if mistakes and cause.mistakes and not first.concealed:     # a hidden check's ids are not shown
            lines.append(f"      misconception: {', '.join(cause.mistakes)}")
        if len(cause.checks) == 1:
            continue
        for failures, text in cause.evidence:
            lines += [f"      {mark(f)} {name(f)}" for f in failures]
            lines += indented(text, "          ")
    return lines


def fits_headline(text: str) -> bool:
    """Whether a cause's message is said on its headline's line: one line, not long."""
    return bool(text) and "\n" not in text and len(text) <= 160


def indented(text: str, indent: str, lead: str = "") -> list[str]:
    """`text` (several lines: a hint's list) as lines under `indent`, the first after `lead` and the
    others aligned with it."""
    if not text:
        return []
    first, *rest = text.splitlines() or [""]
    return [f"{indent}{lead}{first}"] + [f"{indent}{' ' * len(lead)}{line}" for line in rest]
