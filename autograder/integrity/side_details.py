"""The details of the sides of the similar pairs listed (integrity/similarity.py): each side's
source, its tokens' lines and its fingerprint, made again for the excerpts a report shows."""

from __future__ import annotations

from collections import OrderedDict
from typing import TYPE_CHECKING

import numpy as np

from autograder.integrity.fingerprint import Fingerprint, fingerprint, normalise

if TYPE_CHECKING:
    from autograder.integrity.similarity import _Print as Print

PAIRS_AT_ONCE = 32      # listed pairs whose sides' details are made together


class SideDetails:
    """A listed side's source, tokens and fingerprint, made again from its source (only the listed
    pairs' are needed, so the class's are not kept). Made for PAIRS_AT_ONCE pairs at a time
    (`prepare`: a class run reads theirs again in children side by side); the last KEPT are
    remembered besides: a student in several pairs comes in neighbouring ones."""

    KEPT = 64

    def __init__(self, made):     # similarity.ClassPrints
        self.made = made
        self._made: OrderedDict[tuple, tuple[str, np.ndarray, Fingerprint]] = OrderedDict()

    @staticmethod
    def _key(p: Print) -> tuple:
        return (p.exercise, p.digest) if p.compressed is not None else (p.exercise, p.digest, p.student)

    def __call__(self, p: Print) -> tuple[str, np.ndarray, Fingerprint]:
        key = self._key(p)
        if key not in self._made:
            self.prepare([p])
        return self._made[key]

    def prepare(self, sides: list[Print]) -> None:
        """Makes the details of `sides` not yet made, all at once; keeps them and the last KEPT others."""
        wanted = {}
        for p in sides:
            key = self._key(p)
            if key in self._made:
                self._made.move_to_end(key)
            else:
                wanted.setdefault(key, p)
        if wanted:
            todo = list(wanted.values())
            found = self.made.details(todo) if self.made.details is not None else [None] * len(todo)
            for key, p, made in zip(wanted, todo, found):
                if made is None:
                    source = self.made.source(p) if self.made.details is None else ""
                    tokens = normalise(source, self.made.given[p.exercise]) or normalise("")
                    made = (source, tokens.lines, fingerprint(tokens, self.made.excluded[p.exercise]))
                self._made[key] = made
        while len(self._made) > max(self.KEPT, len(sides)):
            self._made.popitem(last=False)
