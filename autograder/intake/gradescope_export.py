"""Gradescope's "Export Submissions" download, graded with `attnkit grade CLASS`.

The export (unzipped) holds `submission_metadata.yml` at its top and one folder per submission,
`submission_<id>/`, with what the student uploaded. The YAML, written by Gradescope's Ruby,
keys each folder to its submitters and time with Ruby-symbol keys:

    submission_123456:
      :submitters:
      - :name: Ada Lovelace
        :sid: '106221'
        :email: ada@uni.edu
      :created_at: 2026-03-02 21:14:03.000000000 -05:00
      :score: 7.0

A submission's student is its first submitter, known by their email, else their SID (the id a
Gradescope roster gives them: autograder/intake/roster.py, and the one the runner on Gradescope
uses); `:created_at:` is its submission time. The YAML is read with yaml's safe loader under a
size cap; a Ruby object tag (`!ruby/object:BigDecimal`, `!ruby/hash:...`) is read as the plain
value it tags, never constructed. A file that is not such a mapping is refused with its line.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import yaml

METADATA = "submission_metadata.yml"
MAX_BYTES = 32 * 1024 * 1024      # each entry may carry its :results:; a class's is a few MB
FOLDER_PREFIX = "submission_"


class ExportError(ValueError):
    """submission_metadata.yml cannot be used; the message names the file and line."""


@dataclass(frozen=True)
class Submitter:
    name: str = ""
    sid: str = ""
    email: str = ""

    @property
    def key(self) -> str:
        return self.email or self.sid


@dataclass(frozen=True)
class ExportEntry:
    folder: str                           # submission_<id>
    submitters: tuple[Submitter, ...]
    created_at: str                       # as written, "" when absent
    line: int                             # where in the YAML


def export_root(class_dir: Path) -> Path | None:
    """The folder holding submission_metadata.yml: `class_dir`, or the one folder inside it (the
    zip's own top folder, `assignment_123_export/`); None when it is no Gradescope export."""
    class_dir = Path(class_dir)
    if (class_dir / METADATA).is_file():
        return class_dir
    try:
        inside = [e for e in os.scandir(class_dir) if not e.name.startswith((".", "__MACOSX"))]
    except OSError:
        return None
    if len(inside) == 1 and inside[0].is_dir(follow_symlinks=False) and Path(inside[0].path, METADATA).is_file():
        return Path(inside[0].path)
    return None


class _Loader(yaml.SafeLoader):
    """yaml's safe loader, with Ruby's local tags read as the plain value they tag."""


def _plain(loader: _Loader, _suffix: str, node: yaml.Node):
    if isinstance(node, yaml.MappingNode):
        return loader.construct_mapping(node, deep=True)
    if isinstance(node, yaml.SequenceNode):
        return loader.construct_sequence(node, deep=True)
    return loader.construct_scalar(node)


_Loader.add_multi_constructor("!", _plain)


def read_export(path: Path) -> list[ExportEntry]:
    """Every submission the metadata lists, in the file's order. Raises ExportError (file, line)."""
    path = Path(path)
    try:
        if os.path.islink(path):
            raise ExportError(f"{path}: a symbolic link, not Gradescope's file")
        with open(path, "rb") as fh:
            raw = fh.read(MAX_BYTES + 1)
    except OSError as err:
        raise ExportError(f"{path}: {err.strerror or err}") from None
    if len(raw) > MAX_BYTES:
        raise ExportError(f"{path}: larger than {MAX_BYTES // 2**20} MB; is it Gradescope's submission_metadata.yml?")
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        raise ExportError(f"{path}: not UTF-8 (byte {err.start})") from None
    loader = _Loader(text)
    try:
        root = loader.get_single_node()
        if root is None:
            raise ExportError(f"{path} line 1: empty; expected submission_<id>: entries")
        if not isinstance(root, yaml.MappingNode):
            raise ExportError(f"{path} line {root.start_mark.line + 1}: expected submission_<id>: entries, "
                              f"found a {root.id}")
        entries = [_entry(path, loader, key, value) for key, value in root.value]
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None) or getattr(err, "context_mark", None)
        where = f" line {mark.line + 1}" if mark is not None else ""
        raise ExportError(f"{path}{where}: not YAML Gradescope writes ({getattr(err, 'problem', None) or err})") \
            from None
    finally:
        loader.dispose()
    return entries


def _entry(path: Path, loader: _Loader, key: yaml.Node, value: yaml.Node) -> ExportEntry:
    line = key.start_mark.line + 1
    name = key.value if isinstance(key, yaml.ScalarNode) else ""
    if not name.startswith(FOLDER_PREFIX) or "/" in name or name in (".", ".."):
        raise ExportError(f"{path} line {line}: {str(name)[:80]!r} is not a submission_<id> entry")
    data = loader.construct_object(value, deep=True)
    if not isinstance(data, dict):
        raise ExportError(f"{path} line {line}: {name} holds no :submitters: and :created_at:")
    people = data.get(":submitters", data.get("submitters"))
    if not isinstance(people, list) or not all(isinstance(p, dict) for p in people):
        raise ExportError(f"{path} line {line}: {name} has no :submitters: list")
    submitters = tuple(Submitter(*(_text(p.get(f":{f}", p.get(f))) for f in ("name", "sid", "email")))
                       for p in people)
    when = data.get(":created_at", data.get("created_at"))
    created = when.isoformat() if hasattr(when, "isoformat") else _text(when)
    return ExportEntry(name, submitters, created, line)


def _text(value) -> str:
    return "" if value is None or isinstance(value, (dict, list)) else str(value).strip()
