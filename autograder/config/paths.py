"""Where the kit's files are: its checkout (or installed package data), the default course, and
the folders where it keeps what it computed once."""

from __future__ import annotations

import os
from pathlib import Path

KIT_ROOT = Path(__file__).resolve().parents[2]
# The course, solutions/ and exercises/: the checkout's own, or, installed from a wheel, the
# copies that ship inside the package (autograder/data links to the checkout's in a clone).
KIT_DATA = KIT_ROOT if (KIT_ROOT / "course.yml").is_file() else Path(__file__).resolve().parents[1] / "data"
DEFAULT_COURSE = KIT_DATA / "course.yml"


def cache_dir(part: str) -> Path:
    """Where the kit keeps what it computed once (`part`: reference, course, preflight):
    $ATTNKIT_CACHE_DIR/part, else $XDG_CACHE_HOME/attnkit/part, else ~/.cache/attnkit/part."""
    explicit = os.environ.get("ATTNKIT_CACHE_DIR")
    if explicit:
        return Path(explicit) / part
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "attnkit" / part
