"""A count said in words: "1 check", "2 checks", "0 checks". Every message a student or an
instructor reads counts with it, so no page says "1 checks" or "1 students". The standard library
only (check.py ships this file)."""

from __future__ import annotations


def noun(n: int, singular: str, plural: str | None = None) -> str:
    """The noun for `n` things: singular for 1, else `plural` (by default singular + "s")."""
    return singular if n == 1 else plural or singular + "s"


def counted(n: int, singular: str, plural: str | None = None) -> str:
    """`n` and its noun: "1 check", "3 checks"."""
    return f"{n} {noun(n, singular, plural)}"
