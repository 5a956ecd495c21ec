"""An exercise file's bytes as text, or why it has none: the grader's rule and check.py's.

A file over MAX_BYTES, empty, binary (a NUL byte) or not UTF-8 (a byte-order mark is allowed) is
not read further; what its text holds (a .py file's code, a notebook's cells) is read by
notebook.py. The callers read the bytes: the grader without leaving the student's folder
(autograder/intake/files.py), check.py from the student's own folder.
"""

from __future__ import annotations

MAX_BYTES = 2 * 1024 * 1024   # a hand-written exercise file is a few KB; a notebook with plots maybe 1 MB


def too_big(name: str, size: int) -> str:
    return (f"{name} is {size / 1e6:.1f} MB or more; the limit is {MAX_BYTES / 1e6:.0f} MB "
            f"(clear the notebook's outputs and submit again)")


def text_of(data: bytes, name: str) -> str | tuple[str]:
    """The text of a file's bytes; or (why there is none,)."""
    if len(data) > MAX_BYTES:
        return (too_big(name, len(data)),)
    if not data.strip():
        return (f"{name} is empty",)
    if b"\x00" in data:
        return (f"{name} is a binary file, not Python source or a notebook",)
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        line = data[: err.start].count(b"\n") + 1
        return (f"{name} is not UTF-8 text (byte 0x{data[err.start]:02x} on line {line}); save it as UTF-8",)
