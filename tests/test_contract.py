"""docs/contract.md's tables are the exercise descriptors': the stems, each graded name and what it
returns, the stems each may import. A descriptor changed without the contract (or the other way
round) fails here; `python -m autograder.checks.contract` rewrites the tables."""

from __future__ import annotations

import re
import shutil

import pytest

from autograder.checks import contract
from autograder.checks import EXERCISES
from autograder.config import KIT_ROOT

CONTRACT = KIT_ROOT / "docs" / "contract.md"


def _tables() -> str:
    text = CONTRACT.read_text(encoding="utf-8")
    return text.split(contract.TABLES_BEGIN, 1)[1].split(contract.TABLES_END, 1)[0]


def _rows(table_text: str, columns: int) -> list[list[str]]:
    rows = [[cell.strip().strip("`") for cell in line.strip().strip("|").split("|")]
            for line in table_text.splitlines() if line.startswith("|") and not line.startswith("|---")]
    return [r for r in rows if len(r) == columns][1:]          # without the header


def test_the_contract_holds_the_tables_the_descriptors_make():
    text = CONTRACT.read_text(encoding="utf-8")
    assert contract.TABLES_BEGIN + _tables() + contract.TABLES_END in text
    assert contract.tables_markdown() == contract.TABLES_BEGIN + _tables() + contract.TABLES_END, \
        "docs/contract.md's tables differ from the descriptors: run `python -m autograder.checks.contract`"


def test_the_tables_name_every_stem_graded_name_return_kind_and_import():
    """Read back from the page, not from the renderer: what a student reads is what is graded."""
    files, names = _tables().split("| file | graded name")
    stems = {row[1].removesuffix(".py"): row for row in _rows(files, 4)}
    assert list(stems) == list(EXERCISES)
    for stem, (order, _, title, imports) in stems.items():
        exercise = EXERCISES[stem]
        assert (int(order), title) == (exercise.order, exercise.title)
        said = [] if imports == "none" else [p.strip().strip("`") for p in imports.split(",")]
        assert tuple(said) == exercise.provided, stem
    graded = [(file.removesuffix(".py"), name, kind) for file, name, kind in _rows("| file | graded name" + names, 3)]
    want = [(stem, name, kind) for stem, e in EXERCISES.items() for name, kind in e.returns.items()]
    assert [(s, n) for s, n, _ in graded] == [(s, n) for s, n, _ in want]
    for (stem, name, said), (_, _, kind) in zip(graded, want):
        arrays = kind[1:] if isinstance(kind, tuple) else None
        if arrays is not None:                             # a tuple: "(array, array)"
            assert said == "(" + ", ".join(arrays) + ")", (stem, name, said)
        else:
            assert said == {"array": "array", "float_dict_dict": "dict[int, dict[str, float]]",
                            "figure": "matplotlib Figure"}[kind], (stem, name, said)


@pytest.mark.parametrize("stem", list(EXERCISES))
def test_each_graded_name_is_described_in_its_stem_s_section(stem):
    """The prose of the contract and the descriptor agree on what a file must define."""
    text = CONTRACT.read_text(encoding="utf-8")
    section = re.split(r"\n## ", text.split(f"`{stem}.py` —", 1)[1], maxsplit=1)[0]
    for name in EXERCISES[stem].returns:
        assert re.search(rf"\b{re.escape(name)}\b", section), f"{name} is not in the contract's section on {stem}.py"


def test_a_drifted_table_is_rewritten(tmp_path):
    copy = tmp_path / "contract.md"
    shutil.copy(CONTRACT, copy)
    drifted = copy.read_text(encoding="utf-8").replace("| `attention.py` | `softmax` | array |",
                                                       "| `attention.py` | `softmax` | (array, array) |")
    copy.write_text(drifted, encoding="utf-8")
    assert contract.write_tables(copy) is True
    assert copy.read_text(encoding="utf-8") == CONTRACT.read_text(encoding="utf-8")
    assert contract.write_tables(copy) is False
