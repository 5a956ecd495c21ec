"""The anchor of the kit's nbgrader benchmarks: a PLAIN nbgrader assignment of the same exercises.

Two forms: ONE notebook holding every exercise (the fastest honest form an instructor without
the kit would write: one kernel per submission; the headline anchor), and one notebook per
exercise. Each exercise is: the solution (the teaching notebook of solutions/<stem>.py, with the
same imports, torch included where the solution imports it), its solution regions marked as
nbgrader solution cells, and one autograded test cell per task of ordinary ``assert np.allclose(...)``
lines, as an instructor without the kit would write them. Nothing of the kit runs in it.
"""

from __future__ import annotations

import re
import textwrap
from pathlib import Path

import nbformat

from autograder.build.exercises import to_notebook

KIT = Path(__file__).resolve().parent.parent
SOLUTIONS = KIT / "solutions"

# One plain test cell per exercise: {stem: asserts}.
TEST_CELLS = {
    "hand_computation": """
        import numpy as np
        Q = np.array([[1.0, 0.0], [0.0, 1.0]]); K = np.array([[1.0, 1.0], [1.0, 0.0]]); V = np.array([[2.0, 1.0], [1.0, 2.0]])
        s = Q @ K.T; w = np.exp(s / np.sqrt(2)); w /= w.sum(-1, keepdims=True)
        assert np.allclose(SCORES, s, atol=0.006) and np.allclose(SCALED_SCORES, s / np.sqrt(2), atol=0.006)
        assert np.allclose(WEIGHTS, w, atol=0.006) and np.allclose(OUTPUT, w @ V, atol=0.006)
        X = np.array([[1.0, 0.5, 0.2, 0.8], [0.3, 0.9, 0.1, 0.4], [0.6, 0.2, 0.7, 0.3]])
        s = X @ X.T; w = np.exp(s / 2); w /= w.sum(-1, keepdims=True)
        assert np.allclose(CSM_SCORES, s, atol=0.006) and np.allclose(CSM_WEIGHTS, w, atol=0.006)
        assert np.allclose(CSM_OUTPUT, w @ X, atol=0.006)
    """,
    "attention": """
        import numpy as np
        rng = np.random.default_rng(0)
        x = rng.normal(size=(4, 6))
        assert np.allclose(softmax(x).sum(-1), 1) and np.allclose(softmax(x, axis=0).sum(0), 1)
        assert np.isfinite(softmax(np.array([1e4, 0.0, -1e4]))).all()
        Q, K, V = rng.normal(size=(2, 3, 4)), rng.normal(size=(2, 5, 4)), rng.normal(size=(2, 5, 6))
        out, w = scaled_dot_product_attention(Q, K, V)
        s = Q @ K.transpose(0, 2, 1) / 2.0; e = np.exp(s - s.max(-1, keepdims=True)); ref = e / e.sum(-1, keepdims=True)
        assert np.allclose(w, ref) and np.allclose(out, ref @ V)
        mask = rng.random((3, 5)) > 0.3; mask[:, 0] = True
        out, w = scaled_dot_product_attention(Q, K, V, mask=mask)
        assert np.allclose(w[:, ~mask], 0) and np.allclose(w.sum(-1), 1)
    """,
    "causal_mask": """
        import numpy as np
        assert (np.asarray(create_causal_mask(4)).astype(bool) == np.tril(np.ones((4, 4), bool))).all()
        rng = np.random.default_rng(1)
        Q, K, V = rng.normal(size=(5, 4)), rng.normal(size=(5, 4)), rng.normal(size=(5, 3))
        out, w = causal_attention(Q, K, V)
        assert np.allclose(np.triu(w, 1), 0) and np.allclose(w.sum(-1), 1) and np.allclose(out, w @ V)
    """,
    "scaling": """
        import numpy as np
        r = scaling_experiment(dims=(4, 64), n_trials=200)
        assert abs(r[64]["std_unscaled"] / 8 - 1) < 0.15 and abs(r[64]["std_scaled"] - 1) < 0.15
        assert r[64]["entropy_unscaled"] < r[64]["entropy_scaled"]
        fig = plot_scaling(r)
        assert len(fig.axes) >= 1
    """,
    "multihead": """
        import numpy as np, torch
        rng = np.random.default_rng(2)
        x = rng.normal(size=(2, 5, 12))
        assert split_heads(x, 3).shape == (2, 3, 5, 4) and np.allclose(merge_heads(split_heads(x, 3)), x)
        W = [rng.normal(size=(12, 12)) for _ in range(4)]
        out, w = multi_head_attention(x, *W, num_heads=3)
        assert out.shape == (2, 5, 12) and w.shape == (2, 3, 5, 5) and np.allclose(w.sum(-1), 1)
        m = MultiHeadAttention(8, 2)
        o, ww = m(torch.randn(2, 4, 8))
        assert tuple(o.shape) == (2, 4, 8) and tuple(ww.shape) == (2, 2, 4, 4)
    """,
}


def solution_notebook(stem: str) -> str:
    return to_notebook((SOLUTIONS / f"{stem}.py").read_text(encoding="utf-8"), stem)


def plain_notebook(stem: str) -> nbformat.NotebookNode:
    """The solution notebook with its solution cells marked and one plain assert test cell."""
    nb = nbformat.reads(solution_notebook(stem), as_version=4)
    for cell in nb.cells:
        if cell.cell_type == "code" and "### BEGIN SOLUTION" in cell.source:
            cell.metadata["nbgrader"] = {"grade": False, "solution": True, "locked": False,
                                         "grade_id": f"{cell.id}-solution", "schema_version": 3}
    test = nbformat.v4.new_code_cell(textwrap.dedent(TEST_CELLS[stem]).strip())
    test.id = f"{stem}-test"
    test.metadata["nbgrader"] = {"grade": True, "solution": False, "locked": True, "points": 1,
                                 "grade_id": f"test_{stem}", "schema_version": 3}
    nb.cells.append(test)
    return nb


ONE_NOTEBOOK = "self_attention"
SIBLING_IMPORT = re.compile(r"^\s*from\s+(\w+)\s+import\s.*$|^\s*import\s+(\w+)\s*$", re.M)


def one_notebook(stems) -> nbformat.NotebookNode:
    """Every exercise in ONE notebook, as an instructor without the kit would write a single
    assignment: each exercise's cells (its solution cells marked) then its plain assert cell.
    An import of another exercise's module is dropped: its functions are defined above."""
    nb = nbformat.v4.new_notebook()
    for stem in stems:
        part = plain_notebook(stem)
        nb.metadata = nb.metadata or part.metadata
        for k, cell in enumerate(part.cells):
            cell.id = f"{stem}-{k}"
            if cell.cell_type == "code":
                cell.source = SIBLING_IMPORT.sub(
                    lambda m: "" if (m.group(1) or m.group(2)) in stems else m.group(0), cell.source)
            meta = cell.metadata.get("nbgrader")
            if meta:     # grade ids unique across the one notebook; the stem says whose cell it is
                meta["grade_id"] = f"{stem}__{meta['grade_id']}"
        nb.cells += part.cells
    nb.metadata = part.metadata
    return nb


def write_plain_course(course_dir: Path, assignment: str, stems, timeout: int = 60, *, one: bool = False) -> None:
    """A minimal nbgrader course: nbgrader_config.py and source/<assignment>/<stem>.ipynb, or
    with `one`, source/<assignment>/self_attention.ipynb holding every exercise."""
    (course_dir / "source" / assignment).mkdir(parents=True, exist_ok=True)
    (course_dir / "nbgrader_config.py").write_text(textwrap.dedent(f"""
        c = get_config()
        c.CourseDirectory.root = {str(course_dir)!r}
        c.CourseDirectory.course_id = "plain"
        c.Execute.timeout = {timeout}
    """), encoding="utf-8")
    if one:
        nbformat.write(one_notebook(stems), course_dir / "source" / assignment / f"{ONE_NOTEBOOK}.ipynb")
        return
    for stem in stems:
        nbformat.write(plain_notebook(stem), course_dir / "source" / assignment / f"{stem}.ipynb")
