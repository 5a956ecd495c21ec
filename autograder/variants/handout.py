"""A student's exercise files with their own numbers: the hand computation's stub and notebook.

The generated files show the course's numbers in three places: the LaTeX matrices, the markdown
table of embeddings and the code that defines Q, K, V and X. Each is rewritten from the course's
numbers to the student's; the contract's names stay. A place that is no longer found (the
solution was edited) stops the handout instead of leaving the course's numbers in it.
"""

from __future__ import annotations

import json
from pathlib import Path

from autograder.variants.draw import Matrix, Variant

VARIED_FILES = ("hand_computation",)
WORDS = ("cat", "sat", "mat")


class NumbersNotFound(Exception):
    """The course's numbers are not where the exercise file showed them."""


def _number(value: float, integer: bool) -> str:
    return str(int(value)) if integer else str(float(value))


def _latex(name: str, matrix: Matrix) -> str:
    rows = "\\\\ ".join(" & ".join(_number(v, True) for v in row) for row in matrix)
    return f"{name} = \\begin{{pmatrix}}{rows}\\end{{pmatrix}}"


def _code(name: str, matrix: Matrix) -> str:
    return f"{name} = {[[float(v) for v in row] for row in matrix]}"


def replacements(variant: Variant) -> list[tuple[str, str]]:
    """(the course's text, the student's), for every place the numbers are shown."""
    from reference.hand_computation import K_A, Q_A, V_A, X_CSM

    pairs = []
    for name, course_m, own in (("Q", Q_A, variant.q), ("K", K_A, variant.k), ("V", V_A, variant.v)):
        pairs += [(_latex(name, course_m), _latex(name, own)), (_code(name, course_m), _code(name, own))]
    for word, course_row, own_row in zip(WORDS, X_CSM, variant.x):
        table = lambda row: f"| {word} | {', '.join(_number(v, False) for v in row)} |"  # noqa: E731
        code = lambda row: f"{[float(v) for v in row]},  # {word}"  # noqa: E731
        pairs += [(table(course_row), table(own_row)), (code(course_row), code(own_row))]
    return pairs


def render(text: str, variant: Variant) -> str:
    for old, new in replacements(variant):
        if old not in text:
            raise NumbersNotFound(f"the course's numbers {old!r} are not in the exercise; update "
                                  f"autograder/variants/handout.py to the exercise's new text")
        text = text.replace(old, new)
    return text


def with_numbers(path: Path, variant: Variant) -> bytes:
    """The bytes of the exercise file `path` (.py or .ipynb) with the student's numbers."""
    if path.suffix != ".ipynb":
        return render(path.read_text(encoding="utf-8"), variant).encode("utf-8")
    notebook = json.loads(path.read_text(encoding="utf-8"))
    whole = "\n".join("".join(cell.get("source", [])) for cell in notebook["cells"])
    render(whole, variant)      # every place found somewhere in the notebook (raises otherwise)
    for cell in notebook["cells"]:
        source = "".join(cell.get("source", []))
        for old, new in replacements(variant):
            source = source.replace(old, new)
        cell["source"] = source.splitlines(keepends=True)
    return (json.dumps(notebook, indent=1, ensure_ascii=False) + "\n").encode("utf-8")
