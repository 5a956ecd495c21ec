"""The exercise generator (autograder/build/exercises.py), the solutions it reads and the stubs it writes."""

from __future__ import annotations

import ast
import importlib.util
import itertools
import json
import math
import shutil
import sys
from pathlib import Path

import numpy as np
import pytest

import autograder.build.exercises as kb
from autograder.build.exercises import BuildError, build

KIT_ROOT = Path(__file__).resolve().parents[1]
STEMS = ("hand_computation", "attention", "causal_mask", "scaling", "multihead")
TASK_IDS = {
    "hand_computation": {"hand_computation.part_a", "hand_computation.part_b"},
    "attention": {"attention.softmax", "attention.scaled_dot_product_attention"},
    "causal_mask": {"causal_mask.create_causal_mask", "causal_mask.causal_attention"},
    "scaling": {"scaling.scaling_experiment", "scaling.plot_scaling"},
    "multihead": {"multihead.split_heads", "multihead.merge_heads", "multihead.multi_head_attention",
                  "multihead.MultiHeadAttention"},
}
HAND_CONSTANTS = ("SCORES", "SCALED_SCORES", "WEIGHTS", "OUTPUT", "CSM_SCORES", "CSM_WEIGHTS", "CSM_OUTPUT")
KIT_MODULES = {"autograder", "reference", "solutions", "exercises", *STEMS}

_counter = itertools.count()


def _load(path: Path, stem: str):
    """Import a file as a fresh module (a name that cannot collide with anything)."""
    spec = importlib.util.spec_from_file_location(f"_attnkit_test_{stem}_{next(_counter)}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _copy_tree(folder: str, target: Path) -> Path:
    shutil.copytree(KIT_ROOT / folder, target, ignore=shutil.ignore_patterns("__pycache__", ".ipynb_checkpoints"))
    return target


@pytest.fixture(scope="module")
def stubs(tmp_path_factory):
    folder = _copy_tree("exercises", tmp_path_factory.mktemp("stubs") / "exercises")
    return {stem: _load(folder / f"{stem}.py", stem) for stem in STEMS}


@pytest.fixture(scope="module")
def sol(tmp_path_factory):
    folder = _copy_tree("solutions", tmp_path_factory.mktemp("solutions") / "solutions")
    return {stem: _load(folder / f"{stem}.py", stem) for stem in STEMS}


# --------------------------------------------------------------------------- plain-numpy references


def np_softmax(x, axis=-1):
    e = np.exp(x - np.max(x, axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def direct_attention(Q, K, V, allowed=None):
    """One query at a time, one key at a time: (n_q, d) (n_k, d) (n_k, d_v) -> output, weights."""
    n_q, d = Q.shape
    n_k = K.shape[0]
    weights = np.zeros((n_q, n_k))
    for i in range(n_q):
        keys = [j for j in range(n_k) if allowed is None or allowed[i, j]]
        scores = np.array([sum(Q[i, m] * K[j, m] for m in range(d)) / math.sqrt(d) for j in keys])
        e = np.exp(scores - scores.max())
        for j, w in zip(keys, e / e.sum()):
            weights[i, j] = w
    return weights @ V, weights


# --------------------------------------------------------------------------- drift and the generator


def test_exercises_are_up_to_date():
    drift = build(KIT_ROOT, check=True)
    assert drift == [], (
        "exercises/ is out of date with solutions/ - run `attnkit build` (python -m autograder.build.exercises): "
        + ", ".join(str(p.relative_to(KIT_ROOT)) for p in drift))


def test_every_solution_has_a_committed_stub_and_notebook():
    for stem in STEMS:
        assert (KIT_ROOT / "solutions" / f"{stem}.py").is_file()
        assert (KIT_ROOT / "exercises" / f"{stem}.py").is_file()
        assert (KIT_ROOT / "exercises" / f"{stem}.ipynb").is_file()


@pytest.mark.parametrize("stem", STEMS)
def test_task_ids(stem):
    text = (KIT_ROOT / "solutions" / f"{stem}.py").read_text(encoding="utf-8")
    regions = kb.parse_regions(text, f"solutions/{stem}.py", stem)
    assert {r.task for r in regions} == TASK_IDS[stem]
    stub = (KIT_ROOT / "exercises" / f"{stem}.py").read_text(encoding="utf-8")
    assert kb.BEGIN not in stub and kb.END not in stub
    assert "# Task:" not in stub
    assert "solutions" not in stub.lower() and "attnkit" not in stub      # the student's file speaks to them
    for task in TASK_IDS[stem]:
        assert f"# TODO({task}):" in stub


@pytest.mark.parametrize("stem", STEMS)
def test_solutions_are_self_contained(stem):
    text = (KIT_ROOT / "solutions" / f"{stem}.py").read_text(encoding="utf-8")
    tree = ast.parse(text)
    allowed = {"numpy", "torch", "matplotlib", "math", "__future__"} | set(sys.stdlib_module_names)
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            assert node.level == 0
            names = [node.module]
        else:
            continue
        for name in names:
            top = name.split(".")[0]
            assert top in allowed and top not in KIT_MODULES, f"{stem} imports {name}"
    for folder in ("solutions", "exercises"):
        for path in (KIT_ROOT / folder).glob(f"{stem}.*"):
            assert str(KIT_ROOT) not in path.read_text(encoding="utf-8"), f"a machine path in {path.name}"


@pytest.mark.parametrize("stem", STEMS)
def test_demo_code_is_guarded(stem):
    """Module level holds only imports, definitions and constants; calls live under __main__."""
    tree = ast.parse((KIT_ROOT / "solutions" / f"{stem}.py").read_text(encoding="utf-8"))
    for node in tree.body:
        if isinstance(node, ast.If):
            assert ast.unparse(node.test) == "__name__ == '__main__'"
        else:
            assert isinstance(node, (ast.Import, ast.ImportFrom, ast.FunctionDef, ast.ClassDef, ast.Assign,
                                     ast.Expr)), ast.dump(node)[:80]
            if isinstance(node, ast.Assign):
                assert not any(isinstance(n, ast.Call) for n in ast.walk(node.value))


def test_build_into_a_fresh_kit(tmp_path):
    _copy_tree("solutions", tmp_path / "solutions")
    written = build(tmp_path)
    expected = sorted(tmp_path / "exercises" / f"{stem}{ext}" for stem in STEMS for ext in (".py", ".ipynb"))
    assert written == expected
    for path in written:  # deterministic: a fresh build gives the committed bytes
        assert path.read_bytes() == (KIT_ROOT / "exercises" / path.name).read_bytes(), path.name
    assert build(tmp_path, check=True) == []
    assert build(tmp_path) == []

    # a solution edited without a rebuild is drift; check mode writes nothing
    source = tmp_path / "solutions" / "attention.py"
    source.write_text(source.read_text(encoding="utf-8").replace("# ## 1. A softmax", "# ## 1. A stable softmax"),
                      encoding="utf-8")
    before = (tmp_path / "exercises" / "attention.py").read_bytes()
    assert build(tmp_path, check=True) == [tmp_path / "exercises" / "attention.ipynb",
                                           tmp_path / "exercises" / "attention.py"]
    assert (tmp_path / "exercises" / "attention.py").read_bytes() == before
    assert len(build(tmp_path)) == 2 and build(tmp_path, check=True) == []

    # a generated file whose solution is gone is stale; a hand-written file is left alone
    (tmp_path / "solutions" / "scaling.py").unlink()
    (tmp_path / "exercises" / "notes.py").write_text("# my own notes\n", encoding="utf-8")
    stale = [tmp_path / "exercises" / "scaling.ipynb", tmp_path / "exercises" / "scaling.py"]
    assert build(tmp_path, check=True) == stale
    assert build(tmp_path) == stale
    assert not (tmp_path / "exercises" / "scaling.py").exists()
    assert (tmp_path / "exercises" / "notes.py").exists()


def test_main_check_exit_code(tmp_path, capsys):
    _copy_tree("solutions", tmp_path / "solutions")
    assert kb.main(["--check", "--root", str(tmp_path)]) == 1
    assert kb.main(["--root", str(tmp_path)]) == 0
    assert kb.main(["--check", "--root", str(tmp_path)]) == 0
    assert "up to date" in capsys.readouterr().out


@pytest.mark.parametrize("stem", STEMS)
def test_committed_notebooks_are_clean(stem):
    import nbformat

    path = KIT_ROOT / "exercises" / f"{stem}.ipynb"
    nb = nbformat.read(path, as_version=4)
    nbformat.validate(nb)
    assert nb.metadata.kernelspec.name == "python3"
    assert set(nb.metadata) == {"kernelspec", "language_info"}      # nothing of how the kit made it
    ids = [cell.id for cell in nb.cells]
    assert len(set(ids)) == len(ids)
    for cell in nb.cells:
        if cell.cell_type == "code":
            assert cell.outputs == [] and cell.execution_count is None
    assert kb.BEGIN not in path.read_text(encoding="utf-8")
    # the notebook holds the stub's code (whose not-implemented text in the .py file alone says where a
    # notebook's work must go to be imported)
    stub = (KIT_ROOT / "exercises" / f"{stem}.py").read_text(encoding="utf-8").replace(
        f" in {stem}.py; work done in {stem}.ipynb is imported only once downloaded as {stem}.py", "")
    for cell in nb.cells:
        if cell.cell_type == "code":
            assert cell.source in stub


# --------------------------------------------------------------------------- the marker parser


GOOD_FUNC = '''\
# %%
def f(x):
    """Doc."""
    ### BEGIN SOLUTION
    return x
    ### END SOLUTION
'''

BAD_SOURCES = {
    "never_closed": ("# %%\ndef f(x):\n    ### BEGIN SOLUTION\n    return x\n", 3, "never closed"),
    "end_without_begin": ("# %%\ndef f(x):\n    return x\n    ### END SOLUTION\n", 4, "without a matching"),
    "nested": ("# %%\ndef f(x):\n    ### BEGIN SOLUTION\n    y = x\n    ### BEGIN SOLUTION\n    return y\n"
               "    ### END SOLUTION\n", 5, "do not nest"),
    "indent_mismatch": ("# %%\ndef f(x):\n    if x:\n        ### BEGIN SOLUTION\n        return x\n"
                        "    ### END SOLUTION\n", 6, "indented differently"),
    "not_alone": ("# %%\ndef f(x):\n    return x  ### BEGIN SOLUTION\n", 3, "misplaced marker"),
    "commented_out": ("# %%\ndef f(x):\n    # ### END SOLUTION\n    return x\n", 3, "misplaced marker"),
    "crosses_cell": ("# %%\ndef f(x):\n    ### BEGIN SOLUTION\n    return x\n\n# %%\n    ### END SOLUTION\n",
                     6, "cell marker inside"),
    "in_markdown": ("# %% [markdown]\n### BEGIN SOLUTION\n# text\n### END SOLUTION\n", 2, "markdown"),
    "module_level_without_task": ("# %%\n### BEGIN SOLUTION\nA = [[1.0]]\n### END SOLUTION\n", 2, "# Task:"),
    "module_level_not_assignment": ("# %%\n# Task: bad.part_a\n### BEGIN SOLUTION\nprint(1)\n### END SOLUTION\n",
                                    4, "assignments"),
    "wrong_stem": ("# %%\n# Task: other.part_a\n### BEGIN SOLUTION\nA = 1\n### END SOLUTION\n", 2, "bad.<name>"),
    "empty": ("# %%\ndef f(x):\n    ### BEGIN SOLUTION\n    ### END SOLUTION\n", 3, "empty"),
    "in_main_block": ("# %%\nif __name__ == '__main__':\n    ### BEGIN SOLUTION\n    x = 1\n    ### END SOLUTION\n",
                      3, "top-level def or class"),
    "kit_import": ("# %%\nfrom attention import softmax\n", 2, "import of 'attention'"),
}


@pytest.mark.parametrize("case", sorted(BAD_SOURCES))
def test_bad_markers_name_file_and_line(tmp_path, case):
    text, line, words = BAD_SOURCES[case]
    (tmp_path / "solutions").mkdir()
    (tmp_path / "solutions" / "bad.py").write_text(text, encoding="utf-8")
    with pytest.raises(BuildError) as info:
        build(tmp_path, check=True)
    assert f"solutions/bad.py:{line}:" in str(info.value)
    assert words in str(info.value)
    assert info.value.line == line
    assert not (tmp_path / "exercises").exists()


def test_stub_forms():
    stub = kb.make_stub(GOOD_FUNC, "good.py", "good")
    assert '    raise NotImplementedError("good.f: not implemented yet")' in stub
    assert "    # TODO(good.f):" in stub
    assert "return x" not in stub

    text = ("# %%\n# Task: good.part_a\n### BEGIN SOLUTION\nA = [  # the answer\n    [1.0],\n]\nB = 2.0\n"
            "### END SOLUTION\nC = A\n")
    stub = kb.make_stub(text, "good.py", "good")
    assert "A = None  # TODO(good.part_a): the answer\n" in stub
    assert "B = None  # TODO(good.part_a): fill in your answer\n" in stub
    assert "C = A\n" in stub and "1.0" not in stub

    method = ("# %%\nclass M:\n    def __init__(self):\n        self.a = 0\n        ### BEGIN SOLUTION\n"
              "        self.b = 1\n        ### END SOLUTION\n")
    stub = kb.make_stub(method, "good.py", "good")
    assert "        # TODO(good.M): __init__ - " in stub
    assert "        self.a = 0\n" in stub and "self.b" not in stub

    solution = kb.make_solution(text, "good.py", "good")
    assert kb.BEGIN not in solution and "# Task:" not in solution and "B = 2.0" in solution


# --------------------------------------------------------------------------- the stubs


def _stub_calls():
    x3 = np.ones((1, 3, 8))
    q = np.ones((3, 4))
    dims_result = {4: {k: 1.0 for k in ("std_unscaled", "std_scaled", "entropy_unscaled", "entropy_scaled",
                                         "max_weight_unscaled", "max_weight_scaled")}}

    def mha_forward(m):
        import torch

        module = m.MultiHeadAttention.__new__(m.MultiHeadAttention)
        torch.nn.Module.__init__(module)
        return module.forward(torch.ones(1, 3, 8))

    return [
        ("attention", "attention.softmax", lambda m: m.softmax(np.zeros(3))),
        ("attention", "attention.scaled_dot_product_attention", lambda m: m.scaled_dot_product_attention(q, q, q)),
        ("causal_mask", "causal_mask.create_causal_mask", lambda m: m.create_causal_mask(3)),
        ("causal_mask", "causal_mask.causal_attention", lambda m: m.causal_attention(q, q, q)),
        ("scaling", "scaling.scaling_experiment", lambda m: m.scaling_experiment(dims=(4,), n_trials=2)),
        ("scaling", "scaling.plot_scaling", lambda m: m.plot_scaling(dims_result)),
        ("multihead", "multihead.split_heads", lambda m: m.split_heads(x3, 2)),
        ("multihead", "multihead.merge_heads", lambda m: m.merge_heads(np.ones((1, 2, 3, 4)))),
        ("multihead", "multihead.multi_head_attention",
         lambda m: m.multi_head_attention(x3, *[np.eye(8)] * 4, num_heads=2)),
        ("multihead", "multihead.MultiHeadAttention", lambda m: m.MultiHeadAttention(8, 2)),
        ("multihead", "multihead.MultiHeadAttention", mha_forward),
    ]


@pytest.mark.parametrize("stem,task,call", _stub_calls(), ids=lambda v: v if isinstance(v, str) else "")
def test_stub_raises_with_task_id(stubs, stem, task, call):
    with pytest.raises(NotImplementedError) as info:
        call(stubs[stem])
    assert str(info.value).startswith(task)


def test_stub_constants_are_none(stubs):
    for name in HAND_CONSTANTS:
        assert getattr(stubs["hand_computation"], name) is None
    assert stubs["hand_computation"].Q == [[1.0, 0.0], [0.0, 1.0]]


def test_every_task_has_a_stub_call():
    assert {task for _, task, _ in _stub_calls()} | {"hand_computation.part_a", "hand_computation.part_b"} == \
        set().union(*TASK_IDS.values())


# --------------------------------------------------------------------------- the solutions


def test_hand_computation_numbers(sol):
    hc = sol["hand_computation"]
    Q = np.array([[1, 0], [0, 1]], dtype=float)
    K = np.array([[1, 1], [1, 0]], dtype=float)
    V = np.array([[2, 1], [1, 2]], dtype=float)
    scores = Q @ K.T
    scaled = scores / np.sqrt(2)
    weights = np_softmax(scaled)
    X = np.array([[1.0, 0.5, 0.2, 0.8], [0.3, 0.9, 0.1, 0.4], [0.6, 0.2, 0.7, 0.3]])
    csm_scores = X @ X.T
    csm_weights = np_softmax(csm_scores / 2.0)
    expected = {
        "SCORES": scores, "SCALED_SCORES": scaled, "WEIGHTS": weights, "OUTPUT": weights @ V,
        "CSM_SCORES": csm_scores, "CSM_WEIGHTS": csm_weights, "CSM_OUTPUT": csm_weights @ X,
    }
    for name, exact in expected.items():
        typed = getattr(hc, name)
        assert isinstance(typed, list) and all(isinstance(row, list) for row in typed), name
        assert np.array(typed).shape == exact.shape, name
        assert np.abs(np.array(typed) - exact).max() <= 0.006, name


def test_hand_computation_numbers_are_typed_with_three_decimals():
    text = (KIT_ROOT / "solutions" / "hand_computation.py").read_text(encoding="utf-8")
    tree = ast.parse(text)
    seen = set()
    for node in tree.body:
        if isinstance(node, ast.Assign) and node.targets[0].id in HAND_CONSTANTS:
            seen.add(node.targets[0].id)
            for const in ast.walk(node.value):
                if isinstance(const, ast.Constant):
                    literal = ast.get_source_segment(text, const)
                    assert isinstance(const.value, float) and len(literal.split(".")[1]) >= 3, literal
    assert seen == set(HAND_CONSTANTS)


def test_softmax(sol):
    softmax = sol["attention"].softmax
    rng = np.random.default_rng(1)
    x = rng.normal(size=(3, 4, 5))
    for axis in (-1, 0, 1):
        p = np.asarray(softmax(x, axis=axis))
        assert p.shape == x.shape
        np.testing.assert_allclose(p.sum(axis=axis), 1.0, rtol=1e-12)
        np.testing.assert_allclose(p, np.exp(x) / np.exp(x).sum(axis=axis, keepdims=True), rtol=1e-10)
    big = np.asarray(softmax(np.array([[1e4, 0.0], [-1e4, 1e4]])))
    assert np.isfinite(big).all()
    np.testing.assert_allclose(big, [[1.0, 0.0], [0.0, 1.0]], atol=1e-12)
    assert np.asarray(softmax(x.astype(np.float32))).dtype == np.float32


def test_scaled_dot_product_attention(sol):
    sdpa = sol["attention"].scaled_dot_product_attention
    rng = np.random.default_rng(2)
    Q, K, V = rng.normal(size=(3, 5)), rng.normal(size=(4, 5)), rng.normal(size=(4, 2))
    out, w = sdpa(Q, K, V)
    ref_out, ref_w = direct_attention(Q, K, V)
    np.testing.assert_allclose(w, ref_w, rtol=1e-10)
    np.testing.assert_allclose(out, ref_out, rtol=1e-10)

    Qb, Kb, Vb = rng.normal(size=(2, 3, 3, 5)), rng.normal(size=(2, 3, 4, 5)), rng.normal(size=(2, 3, 4, 2))
    out, w = sdpa(Qb, Kb, Vb)
    assert out.shape == (2, 3, 3, 2) and w.shape == (2, 3, 3, 4)
    for b, h in np.ndindex(2, 3):
        ref_out, ref_w = direct_attention(Qb[b, h], Kb[b, h], Vb[b, h])
        np.testing.assert_allclose(out[b, h], ref_out, rtol=1e-10)
        np.testing.assert_allclose(w[b, h], ref_w, rtol=1e-10)

    allowed = rng.random((3, 4)) > 0.4
    allowed[:, 0] = True
    ref_out, ref_w = direct_attention(Q, K, V, allowed)
    for mask in (allowed, allowed.astype(int), allowed.astype(float)):
        out, w = sdpa(Q, K, V, mask=mask)
        np.testing.assert_allclose(w, ref_w, rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(out, ref_out, rtol=1e-10)
    padding = np.array([[1, 1, 0, 1]])  # (1, n_k) broadcast over the queries
    out, w = sdpa(Q, K, V, mask=padding)
    ref_out, _ = direct_attention(Q, K, V, np.broadcast_to(padding, (3, 4)).astype(bool))
    np.testing.assert_allclose(out, ref_out, rtol=1e-10)
    assert np.abs(w[:, 2]).max() < 1e-12

    out32, w32 = sdpa(Q.astype(np.float32), K.astype(np.float32), V.astype(np.float32))
    assert out32.dtype == np.float32
    np.testing.assert_allclose(out32, direct_attention(Q, K, V)[0], rtol=1e-4, atol=1e-5)


def test_causal_mask(sol):
    cm = sol["causal_mask"]
    for T in range(1, 7):
        mask = np.asarray(cm.create_causal_mask(T))
        assert mask.shape == (T, T)
        assert set(np.unique(mask.astype(float))) <= {0.0, 1.0}
        np.testing.assert_array_equal(mask.astype(bool), np.tril(np.ones((T, T), dtype=bool)))


def test_causal_attention(sol):
    cm = sol["causal_mask"]
    rng = np.random.default_rng(3)
    T = 5
    Q, K, V = rng.normal(size=(T, 4)), rng.normal(size=(T, 4)), rng.normal(size=(T, 3))
    out, w = cm.causal_attention(Q, K, V)
    allowed = np.tril(np.ones((T, T), dtype=bool))
    ref_out, ref_w = direct_attention(Q, K, V, allowed)
    np.testing.assert_allclose(w, ref_w, rtol=1e-10)
    np.testing.assert_allclose(out, ref_out, rtol=1e-10)
    assert (np.triu(w, k=1) == 0.0).all()
    Qb, Kb, Vb = (rng.normal(size=(2, 3, T, 4)) for _ in range(3))
    out, w = cm.causal_attention(Qb, Kb, Vb)
    assert out.shape == (2, 3, T, 4) and w.shape == (2, 3, T, T)
    for b, h in np.ndindex(2, 3):
        np.testing.assert_allclose(out[b, h], direct_attention(Qb[b, h], Kb[b, h], Vb[b, h], allowed)[0],
                                   rtol=1e-10)


def test_scaling_experiment(sol):
    sc = sol["scaling"]
    results = sc.scaling_experiment()
    assert list(results) == [4, 16, 64, 256]
    keys = {"std_unscaled", "std_scaled", "entropy_unscaled", "entropy_scaled", "max_weight_unscaled",
            "max_weight_scaled"}
    for d, row in results.items():
        assert type(d) is int and set(row) == keys
        assert all(type(v) is float for v in row.values())
        assert abs(row["std_unscaled"] / math.sqrt(d) - 1) < 0.15
        assert abs(row["std_scaled"] - 1) < 0.15
        assert 0 <= row["entropy_scaled"] <= math.log(4) and 0.25 <= row["max_weight_scaled"] <= 1
    ent = [results[d]["entropy_unscaled"] for d in results]
    top = [results[d]["max_weight_unscaled"] for d in results]
    assert all(a > b for a, b in zip(ent, ent[1:])) and all(a < b for a, b in zip(top, top[1:]))
    assert max(results[d]["entropy_scaled"] for d in results) - min(results[d]["entropy_scaled"] for d in results) < 0.1
    assert results == sc.scaling_experiment()  # seeded

    # an independent numpy computation of one entry
    rng = np.random.default_rng(0)
    Q, K = rng.standard_normal((1000, 4, 4)), rng.standard_normal((1000, 4, 4))
    s = Q @ K.transpose(0, 2, 1)
    assert results[4]["std_unscaled"] == pytest.approx(np.mean([m.std() for m in s]), rel=1e-9)
    p = np_softmax(s / 2.0)
    assert results[4]["max_weight_scaled"] == pytest.approx(p.max(-1).mean(), rel=1e-9)
    assert results[4]["entropy_scaled"] == pytest.approx(-(p * np.log(p)).sum(-1).mean(), rel=1e-9)


def test_plot_scaling(sol):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.figure import Figure

    sc = sol["scaling"]
    results = sc.scaling_experiment(dims=(4, 16, 64), n_trials=50)
    fig = sc.plot_scaling(results)
    try:
        assert isinstance(fig, Figure)
        lines = [ln for ax in fig.axes for ln in ax.get_lines()
                 if ln.get_label() and not ln.get_label().startswith("_")]
        on_d = [ln for ln in lines if list(ln.get_xdata()) == [4, 16, 64]]
        assert len(on_d) >= 2
        assert all(ax.get_xlabel() and ax.get_ylabel() for ax in fig.axes)
        assert all(ax.get_legend() is not None for ax in fig.axes)
    finally:
        plt.close(fig)


def test_split_and_merge_heads(sol):
    mh = sol["multihead"]
    B, T, d_model = 2, 3, 12
    x = np.random.default_rng(4).normal(size=(B, T, d_model))
    for h in (1, 2, 3, 4, 6, 12):
        d_head = d_model // h
        heads = np.asarray(mh.split_heads(x, h))
        assert heads.shape == (B, h, T, d_head)
        for b, k, t in np.ndindex(B, h, T):
            np.testing.assert_array_equal(heads[b, k, t], x[b, t, k * d_head:(k + 1) * d_head])
        np.testing.assert_array_equal(mh.merge_heads(heads), x)


def test_multi_head_attention(sol):
    mh = sol["multihead"]
    rng = np.random.default_rng(5)
    B, T, d_model, h = 2, 4, 8, 2
    d_head = d_model // h
    X = rng.normal(size=(B, T, d_model))
    W_q, W_k, W_v, W_o = (rng.normal(size=(d_model, d_model)) / 3 for _ in range(4))
    causal = np.tril(np.ones((T, T), dtype=bool))
    for mask in (None, causal, causal.astype(int)[None, None]):
        out, w = mh.multi_head_attention(X, W_q, W_k, W_v, W_o, h, mask=mask)
        assert out.shape == (B, T, d_model) and w.shape == (B, h, T, T)
        for b in range(B):
            heads = []
            for k in range(h):
                cols = slice(k * d_head, (k + 1) * d_head)
                allowed = None if mask is None else causal
                o, a = direct_attention((X[b] @ W_q)[:, cols], (X[b] @ W_k)[:, cols], (X[b] @ W_v)[:, cols], allowed)
                np.testing.assert_allclose(w[b, k], a, rtol=1e-10, atol=1e-14)
                heads.append(o)
            np.testing.assert_allclose(out[b], np.concatenate(heads, axis=-1) @ W_o, rtol=1e-10)


@pytest.mark.parametrize("use_mask", [False, True])
def test_multihead_module_matches_torch(sol, use_mask):
    import torch

    mh = sol["multihead"]
    torch.manual_seed(0)
    d_model, h, B, T = 12, 3, 2, 5
    mine = mh.MultiHeadAttention(d_model, h)
    for name in ("W_q", "W_k", "W_v", "W_o"):
        layer = getattr(mine, name)
        assert isinstance(layer, torch.nn.Linear) and layer.bias is not None
        assert (layer.in_features, layer.out_features) == (d_model, d_model)
    assert set(mine.state_dict()) == {f"W_{p}.{t}" for p in "qkvo" for t in ("weight", "bias")}
    theirs = torch.nn.MultiheadAttention(d_model, h, batch_first=True)
    with torch.no_grad():
        theirs.in_proj_weight.copy_(torch.cat([mine.W_q.weight, mine.W_k.weight, mine.W_v.weight]))
        theirs.in_proj_bias.copy_(torch.cat([mine.W_q.bias, mine.W_k.bias, mine.W_v.bias]))
        theirs.out_proj.weight.copy_(mine.W_o.weight)
        theirs.out_proj.bias.copy_(mine.W_o.bias)
    x = torch.randn(B, T, d_model)
    if use_mask:
        allowed = torch.rand(T, T) > 0.5
        allowed |= torch.eye(T, dtype=torch.bool)
        out, w = mine(x, mask=allowed)
        ref_out, ref_w = theirs(x, x, x, attn_mask=~allowed, average_attn_weights=False)
        out_np, w_np = mine(x, mask=allowed.numpy().astype(int))  # a 0/1 numpy mask works too
        torch.testing.assert_close(out_np, out)
    else:
        out, w = mine(x)
        ref_out, ref_w = theirs(x, x, x, average_attn_weights=False)
    assert out.shape == (B, T, d_model) and w.shape == (B, h, T, T)
    torch.testing.assert_close(out, ref_out, rtol=1e-4, atol=1e-5)
    torch.testing.assert_close(w, ref_w, rtol=1e-4, atol=1e-5)


# --------------------------------------------------------------------------- notebooks (slow)


@pytest.fixture(scope="session")
def python3_kernel():
    """The python3 kernelspec, installed for the user if this machine has none."""
    from jupyter_client.kernelspec import KernelSpecManager, NoSuchKernel

    try:
        KernelSpecManager().get_kernel_spec("python3")
    except NoSuchKernel:
        from ipykernel.kernelspec import install

        install(user=True)
    return "python3"


def _execute(path: Path, kernel: str) -> str:
    """Run a notebook top to bottom in its own folder; return everything it printed."""
    import nbformat
    from nbclient import NotebookClient

    nb = nbformat.read(path, as_version=4)
    NotebookClient(nb, timeout=120, kernel_name=kernel, resources={"metadata": {"path": str(path.parent)}}).execute()
    printed = []
    for cell in nb.cells:
        for output in cell.get("outputs", []):
            assert output.output_type != "error", f"{path.name}: {output.get('ename')}: {output.get('evalue')}"
            if output.output_type == "stream":
                printed.append(output.text)
    return "".join(printed)


@pytest.mark.slow
@pytest.mark.parametrize("stem", STEMS)
def test_stub_notebook_runs(tmp_path, python3_kernel, stem):
    folder = _copy_tree("exercises", tmp_path / "exercises")
    printed = _execute(folder / f"{stem}.ipynb", python3_kernel)
    assert ("not implemented yet" in printed) or ("not filled in yet" in printed)


@pytest.mark.slow
@pytest.mark.parametrize("stem", STEMS)
def test_solution_notebook_runs(tmp_path, python3_kernel, stem):
    source = f"{kb.SOLUTIONS_DIR}/{stem}.py"
    completed = kb.make_solution((KIT_ROOT / source).read_text(encoding="utf-8"), source, stem)
    path = tmp_path / f"{stem}.ipynb"
    path.write_text(kb.to_notebook(completed, stem), encoding="utf-8")
    nb = json.loads(path.read_text(encoding="utf-8"))
    assert "NotImplementedError(\"" not in path.read_text(encoding="utf-8")
    assert nb["metadata"]["kernelspec"]["name"] == "python3"
    printed = _execute(path, python3_kernel)
    assert printed.strip()
    for bad in ("not implemented yet", "not filled in yet", "False", "NO - look again"):
        assert bad not in printed, f"{stem}: {bad!r} in\n{printed}"


def test_build_never_overwrites_an_edited_exercise_without_force(tmp_path, capsys):
    _copy_tree("solutions", tmp_path / "solutions")
    build(tmp_path)
    exercises = tmp_path / "exercises"
    stub = exercises / "attention.py"
    edited = stub.read_text(encoding="utf-8").replace("def softmax(", "def softmax(  # my change\n        ", 1)
    stub.write_text(edited, encoding="utf-8")
    # the build would change the file (it reverts any hand edit): refused, the edit kept
    with pytest.raises(BuildError) as err:
        build(tmp_path)
    assert "exercises/attention.py: edited since `attnkit build` wrote it" in str(err.value)
    assert "--force" in str(err.value)
    assert stub.read_text(encoding="utf-8") == edited
    assert kb.main(["--root", str(tmp_path)]) == 2
    assert "exercises/attention.py: edited" in capsys.readouterr().err
    # a solution edited afterwards changes nothing about that
    source = tmp_path / "solutions" / "attention.py"
    source.write_text(source.read_text(encoding="utf-8").replace("# ## 1. A softmax", "# ## 1. A stable softmax"),
                      encoding="utf-8")
    with pytest.raises(BuildError):
        build(tmp_path)
    assert stub.read_text(encoding="utf-8") == edited
    assert not (exercises / "attention.ipynb").read_text(encoding="utf-8").count("A stable softmax")  # nothing written
    # an edited file whose solution is gone is not deleted either
    (tmp_path / "solutions" / "scaling.py").unlink()
    (exercises / "scaling.py").write_text("# my answers\n" + (exercises / "scaling.py").read_text(encoding="utf-8"),
                                          encoding="utf-8")
    with pytest.raises(BuildError) as err:
        build(tmp_path)
    assert "exercises/attention.py, exercises/scaling.py:" in str(err.value)
    assert (exercises / "scaling.py").exists()
    # --force overwrites, and the next build (unedited files) needs no force
    assert kb.main(["--root", str(tmp_path), "--force"]) == 0
    assert "A stable softmax" in stub.read_text(encoding="utf-8") and not (exercises / "scaling.py").exists()
    source.write_text(source.read_text(encoding="utf-8").replace("A stable softmax", "A softmax"), encoding="utf-8")
    assert build(tmp_path) == [exercises / "attention.ipynb", exercises / "attention.py"]


def test_the_build_manifest_records_the_committed_exercises():
    # Else the kit's own next `attnkit build` would take the committed files for edited ones.
    recorded = kb._written_hashes(KIT_ROOT)
    generated = kb.generate(KIT_ROOT)
    assert set(recorded) == {path.name for path in generated}
    for path in generated:
        assert recorded[path.name] == kb._sha256(path.read_bytes()), path.name
