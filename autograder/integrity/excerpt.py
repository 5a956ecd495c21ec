"""What an instructor is shown of a pair of similar submissions (integrity/similarity.py): the line
ranges their shared fingerprints cover, and an excerpt of each side with those lines marked and a
little context around them."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

CONTEXT_LINES = 1       # lines shown around a shared fragment
EXCERPT_LINES = 120     # lines shown of one side of one exercise, at most


@dataclass(frozen=True)
class ExcerptLine:
    number: int | None      # None: lines left out here
    text: str = ""
    shared: bool = False


def shared_lines(token_lines: np.ndarray, slices: np.ndarray) -> tuple[tuple[int, int], ...]:
    """The line ranges of copied token slices (copydetect's 2 x n starts and ends), merged."""
    ranges: list[list[int]] = []
    for start, end in sorted(zip(slices[0].tolist(), slices[1].tolist())):
        span = token_lines[start:end]
        first, last = int(span.min()), int(span.max())
        if ranges and first <= ranges[-1][1] + 1:
            ranges[-1][1] = max(ranges[-1][1], last)
        else:
            ranges.append([first, last])
    return tuple((first, last) for first, last in ranges)


def excerpt_of(source: str, fragments: tuple[tuple[int, int], ...]) -> tuple[ExcerptLine, ...]:
    """The shared lines with a little context; a gap where lines are left out."""
    lines = source.splitlines()
    shared = {n for first, last in fragments for n in range(first, last + 1)}
    shown = sorted({m for n in shared for m in range(n - CONTEXT_LINES, n + CONTEXT_LINES + 1)
                    if 1 <= m <= len(lines)})
    excerpt: list[ExcerptLine] = []
    previous = 0
    for n in shown[:EXCERPT_LINES]:
        if n > previous + 1:
            excerpt.append(ExcerptLine(None))
        excerpt.append(ExcerptLine(n, lines[n - 1], n in shared))
        previous = n
    if len(shown) > EXCERPT_LINES or (shown and shown[-1] < len(lines)):
        excerpt.append(ExcerptLine(None))
    return tuple(excerpt)
