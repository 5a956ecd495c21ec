"""The whole walk for one submission: solutions score full marks, untouched stubs score 0,
an independent correct submission scores full marks, and mistakes stay in their exercise."""

import dataclasses
import json
import os
import shutil
import textwrap
from pathlib import Path

import pytest

from autograder.checks import check_ids
from autograder.config import KIT_ROOT
from autograder.grading.submission import grade_submission
from autograder.reports.gradescope import to_gradescope

DEMO = KIT_ROOT / "demo" / "class"


def _copy(tmp_path: Path, files: dict[str, str | Path]) -> Path:
    folder = tmp_path / "submission"
    folder.mkdir()
    for name, content in files.items():
        if isinstance(content, Path):
            shutil.copy(content, folder / name)
        else:
            (folder / name).write_text(textwrap.dedent(content), encoding="utf-8")
    return folder


def test_the_solutions_score_full_marks(course, sandbox):
    result = grade_submission(KIT_ROOT / "solutions", course, sandbox)
    failed = [(c.check_id, c.message) for c in result.checks if not c.passed]
    assert failed == []
    assert result.score == result.max_score == sum(course.max_points(s) for s in course.exercises)


@pytest.mark.parametrize("suffix", [".py", ".ipynb"])
def test_untouched_stubs_score_zero_with_not_implemented_messages(course, sandbox, tmp_path, suffix):
    folder = _copy(tmp_path, {p.name: p for p in (KIT_ROOT / "exercises").glob(f"*{suffix}")})
    result = grade_submission(folder, course, sandbox)
    assert result.score == 0
    assert len(result.checks) == sum(len(ids) for ids in check_ids().values())
    for check in result.checks:
        assert check.status == "not_implemented", (check.check_id, check.message)
        assert "not implemented yet" in check.message


@pytest.mark.parametrize("body", ["pass", "...", "return None", '"""Only a docstring."""'])
def test_a_stub_that_does_nothing_is_not_implemented_yet(course, sandbox, tmp_path, body):
    folder = _copy(tmp_path, {"attention.py": f"""\
        import numpy as np

        def softmax(x, axis=-1):
            {body}

        def scaled_dot_product_attention(Q, K, V, mask=None):
            \"\"\"Attention.\"\"\"
            {body}
        """})
    result = grade_submission(folder, course, sandbox, stems=("attention",))
    assert {(c.status, c.message.split(" does nothing")[0]) for c in result.checks} == {
        ("not_implemented", "not implemented yet: softmax"),
        ("not_implemented", "not implemented yet: scaled_dot_product_attention")}
    assert all(c.hint == "" for c in result.checks)


def test_a_function_that_works_but_returns_nothing_is_a_wrong_answer(course, sandbox, tmp_path):
    folder = _copy(tmp_path, {"attention.py": """\
        import numpy as np

        def softmax(x, axis=-1):
            e = np.exp(x - x.max(axis=axis, keepdims=True))
            e / e.sum(axis=axis, keepdims=True)
        """})
    result = grade_submission(folder, course, sandbox, stems=("attention",))
    softmax = [c for c in result.checks if c.check_id.startswith("attention.softmax.")]
    assert {(c.status, c.message) for c in softmax} == {("failed", "softmax returned NoneType, expected an array")}


def test_an_independent_correct_submission_scores_full_marks(course, sandbox):
    # demo/class/ada was written from docs/contract.md alone: einsum, -inf masks, pyplot,
    # a causal_mask.py that imports attention, hand answers typed with 4 decimals.
    result = grade_submission(DEMO / "ada", course, sandbox)
    assert [(c.check_id, c.message) for c in result.checks if not c.passed] == []


def test_a_notebook_with_magics_is_graded(course, sandbox):
    result = grade_submission(DEMO / "dan", course, sandbox, stems=("attention",))
    ex = result.exercise("attention")
    assert ex.graded_file == "attention.ipynb"
    assert ex.score == ex.max_score, [c.message for c in ex.checks if not c.passed]


def test_a_wrong_softmax_costs_nothing_in_the_other_exercises(course, sandbox, tmp_path):
    folder = _copy(tmp_path, {
        "attention.py": """
            import numpy as np

            def softmax(x, axis=-1):
                e = np.exp(x - np.max(x, axis=0, keepdims=True))
                return e / e.sum(axis=0, keepdims=True)          # the wrong axis

            def scaled_dot_product_attention(Q, K, V, mask=None):
                s = Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])
                if mask is not None:
                    s = np.where(mask, s, -1e9)
                w = softmax(s, axis=-1)
                return w @ V, w
        """,
        "causal_mask.py": """
            import numpy as np
            from attention import scaled_dot_product_attention

            def create_causal_mask(seq_len):
                return np.tril(np.ones((seq_len, seq_len), dtype=bool))

            def causal_attention(Q, K, V):
                return scaled_dot_product_attention(Q, K, V, mask=create_causal_mask(Q.shape[-2]))
        """,
    })
    result = grade_submission(folder, course, sandbox, stems=("attention", "causal_mask"))
    assert result.exercise("attention").score < result.exercise("attention").max_score
    causal = result.exercise("causal_mask")
    assert causal.score == causal.max_score, [c.message for c in causal.checks if not c.passed]


def test_attention_may_not_borrow_another_exercise(course, sandbox, tmp_path):
    folder = _copy(tmp_path, {"attention.py": """
        from causal_mask import causal_attention

        def softmax(x, axis=-1):
            raise RuntimeError("unused")

        def scaled_dot_product_attention(Q, K, V, mask=None):
            return causal_attention(Q, K, V)
    """})
    ex = grade_submission(folder, course, sandbox, stems=("attention",)).exercise("attention")
    assert ex.score == 0
    assert all(c.status == "error" for c in ex.checks)
    assert "causal_mask" in ex.checks[0].message


def test_a_missing_file_costs_only_its_exercise(course, sandbox, tmp_path):
    folder = _copy(tmp_path, {"attention.py": KIT_ROOT / "solutions" / "attention.py"})
    result = grade_submission(folder, course, sandbox, stems=("attention", "multihead"))
    assert result.exercise("attention").score == course.max_points("attention")
    multihead = result.exercise("multihead")
    assert multihead.score == 0 and multihead.graded_file is None
    assert {c.status for c in multihead.checks} == {"missing"}
    assert "no multihead.py or multihead.ipynb" in multihead.checks[0].message


def test_the_newer_of_py_and_ipynb_is_graded_and_said(course, sandbox, tmp_path):
    folder = _copy(tmp_path, {"attention.py": KIT_ROOT / "solutions" / "attention.py",
                              "attention.ipynb": KIT_ROOT / "exercises" / "attention.ipynb"})
    os.utime(folder / "attention.ipynb", (1_000_000, 1_000_000))      # the notebook is older
    ex = grade_submission(folder, course, sandbox, stems=("attention",)).exercise("attention")
    assert ex.graded_file == "attention.py" and ex.score == ex.max_score
    assert "graded attention.py" in ex.note


def test_a_failed_check_says_what_was_expected_what_came_back_and_where(course, sandbox, tmp_path):
    folder = _copy(tmp_path, {"causal_mask.py": """
        import numpy as np

        def create_causal_mask(seq_len):
            return np.triu(np.ones((seq_len, seq_len)))            # upper instead of lower

        def causal_attention(Q, K, V):
            raise ValueError("not today")
    """})
    ex = grade_submission(folder, course, sandbox, stems=("causal_mask",)).exercise("causal_mask")
    values = next(c for c in ex.checks if c.check_id == "causal_mask.create_causal_mask.values")
    assert values.status == "failed"
    assert "mask[" in values.message and "expected" in values.message and "got" in values.message
    raised = next(c for c in ex.checks if c.check_id == "causal_mask.causal_attention.weights")
    assert raised.status == "error"
    assert "ValueError: not today" in raised.message and "line" in raised.message


def test_gradescope_results_follow_the_schema(course, sandbox):
    result = grade_submission(DEMO / "cleo", course, sandbox, stems=("attention", "multihead"))
    data = json.loads(json.dumps(to_gradescope(result)))
    assert data["score"] == result.score
    assert {"score", "tests"} <= set(data)
    for test in data["tests"]:
        assert {"name", "score", "max_score", "status", "output", "tags"} <= set(test)
        assert test["status"] in ("passed", "failed")
        assert test["tags"][0].startswith("exercise:")
    tags = {t for test in data["tests"] for t in test["tags"]}
    assert "misconception:mask_after_softmax" in tags
    assert "misconception:reshape_without_transpose" in tags


@pytest.mark.parametrize("policy", ["diagnose", "generic", "off"])
def test_the_hint_policy_decides_what_a_student_is_told(course, sandbox, policy):
    from autograder.diagnosis.advice import GENERIC_HINT

    strict = dataclasses.replace(course, hints=policy)
    ex = grade_submission(DEMO / "cleo", strict, sandbox, stems=("attention",)).exercise("attention")
    masked = next(c for c in ex.checks if c.check_id == "attention.scaled_dot_product_attention.bool_mask")
    assert masked.status == "failed" and masked.score == 0 and "sums to" in masked.message
    if policy == "diagnose":
        assert masked.misconceptions == ("mask_after_softmax",) and "softmax" in masked.hint
    elif policy == "generic":
        assert masked.misconceptions == ("mask_after_softmax",) and masked.hint == GENERIC_HINT
    else:
        assert masked.misconceptions == () and masked.hint == ""
    assert ex.score == 11   # the policy never changes a score


def test_hidden_checks_keep_their_details_unless_the_course_shows_them(course, sandbox):
    result = grade_submission(DEMO / "cleo", course, sandbox, stems=("attention",))
    hidden = [t for t in to_gradescope(result)["tests"] if "binary_mask" in t["name"]]
    assert hidden[0]["status"] == "failed" and "hidden check" in hidden[0]["output"]
    assert "sums to" not in hidden[0]["output"]
    shown = [t for t in to_gradescope(result, show_hidden=True)["tests"] if "binary_mask" in t["name"]]
    assert "sums to" in shown[0]["output"]


@pytest.mark.parametrize("drawing, passes", [
    ("a.plot(d, u); a.plot(d, s); a.legend(['unscaled', 'scaled'])", True),          # legend labels the lines
    ("a.scatter(d, u, label='unscaled'); a.scatter(d, s, label='scaled'); a.legend()", True),
    ("a.semilogx(d, u, label='unscaled'); a.semilogx(d, s, label='scaled'); a.set_title('t')", True),
    ("a.plot(d, u); a.plot(d, s)", False),                                          # no labels at all
    ("a.plot(range(len(d)), u, label='u'); a.plot(range(len(d)), s, label='s'); a.legend()", False),  # x is not d
])
def test_the_figure_is_inspected_as_an_object(course, sandbox, tmp_path, drawing, passes):
    folder = _copy(tmp_path, {"scaling.py": f"""
        import matplotlib.pyplot as plt

        def scaling_experiment(dims=(4, 16, 64, 256), seq_len=4, n_trials=1000, seed=0):
            raise NotImplementedError

        def plot_scaling(results):
            d = sorted(results)
            u = [results[k]["entropy_unscaled"] for k in d]
            s = [results[k]["entropy_scaled"] for k in d]
            fig, a = plt.subplots()
            {drawing}
            a.set_xlabel("d"); a.set_ylabel("entropy")
            return fig
    """})
    ex = grade_submission(folder, course, sandbox, stems=("scaling",)).exercise("scaling")
    figure = next(c for c in ex.checks if c.check_id == "scaling.plot_scaling.figure")
    assert figure.passed is passes, figure.message


def _notebook_folder(tmp_path, *cells):
    import nbformat
    from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

    folder = tmp_path / "nb"
    folder.mkdir()
    made = [new_markdown_cell("# Exercise")] + [
        new_code_cell(src, metadata={"nbgrader": {"solution": True, "grade": False, "grade_id": f"c{i}"}} if sol else {})
        for i, (src, sol) in enumerate(cells)]
    nbformat.write(new_notebook(cells=made), folder / "attention.ipynb")
    return folder


def test_a_scratch_cell_that_raises_is_skipped_with_a_note(course, sandbox, tmp_path):
    solution = (KIT_ROOT / "solutions" / "attention.py").read_text()
    folder = _notebook_folder(tmp_path, ("import numpy as np", False), ("softmax(np.ones(3))", False),
                              (solution, True), ("assert 1 == 2, 'my own check'", False),
                              ("import seaborn", False), ("print(softmax(np.ones(3))", False))
    ex = grade_submission(folder, course, sandbox, stems=("attention",)).exercise("attention")
    assert ex.score == ex.max_score, [c.message for c in ex.checks if not c.passed]
    for cell, words in ((3, "NameError"), (5, "AssertionError"), (6, "seaborn"), (7, "syntax error")):
        assert f"cell {cell} (" in ex.note and words in ex.note, ex.note


def test_a_solution_cell_that_raises_keeps_what_it_defined_and_is_named(course, sandbox, tmp_path):
    """As in nbgrader, which runs on past a raising cell: what the cell defined before the error
    is graded, and the note names the solution cell, its line and the error."""
    softmax = ("def softmax(x, axis=-1):\n"
               "    e = np.exp(x - np.max(x, axis=axis, keepdims=True))\n"
               "    return e / np.sum(e, axis=axis, keepdims=True)\n\n"
               "undefined_name + 1")
    folder = _notebook_folder(tmp_path, ("import numpy as np", False), (softmax, True))
    ex = grade_submission(folder, course, sandbox, stems=("attention",)).exercise("attention")
    softmax_checks = [c for c in ex.checks if c.check_id.startswith("attention.softmax.")]
    assert softmax_checks and all(c.passed for c in softmax_checks), [c.message for c in softmax_checks]
    assert "solution cell 3" in ex.note and "NameError" in ex.note and "line 5" in ex.note, ex.note


def test_a_name_defined_only_in_a_skipped_cell_names_that_cell(course, sandbox, tmp_path):
    """A check of a function the notebook defines only in a cell that was skipped says which cell,
    not just that the notebook defines no such function."""
    softmax = ("def softmax(x, axis=-1):\n"
               "    e = np.exp(x - np.max(x, axis=axis, keepdims=True))\n"
               "    return e / np.sum(e, axis=axis, keepdims=True)\n")
    folder = _notebook_folder(tmp_path, ("import numpy as np", False),
                              ("x = not_defined_yet\n" + softmax, False),                       # raises first
                              ("def scaled_dot_product_attention(Q, K, V, mask=None:\n    pass", False))  # no compile
    ex = grade_submission(folder, course, sandbox, stems=("attention",)).exercise("attention")
    rows = next(c for c in ex.checks if c.check_id == "attention.softmax.rows")
    assert not rows.passed and "cell 3, which defines it, was skipped" in rows.message, rows.message
    sdpa = next(c for c in ex.checks if c.check_id.startswith("attention.scaled_dot_product_attention."))
    assert "cell 4, which defines it, was skipped" in sdpa.message, sdpa.message
    assert "cell 3 (" in ex.note and "cell 4 (" in ex.note, ex.note


def test_a_raise_in_a_function_names_the_cell_and_line(course, sandbox, tmp_path):
    folder = _notebook_folder(tmp_path, ("import numpy as np", False),
                              ("def softmax(x, axis=-1):\n    x = np.asarray(x)\n    return x / undefined_total", True))
    ex = grade_submission(folder, course, sandbox, stems=("attention",)).exercise("attention")
    rows = next(c for c in ex.checks if c.check_id == "attention.softmax.rows")
    assert rows.status == "error" and "cell 3, line 3" in rows.message, rows.message


ATTENTION_TEMPLATE = """
    import numpy as np

    def softmax(x, axis=-1):
        e = np.exp(x - np.max(x, axis=axis, keepdims=True))
        return e / np.sum(e, axis=axis, keepdims=True)

    def scaled_dot_product_attention(Q, K, V, mask=None):
        scores = {scores} / np.sqrt(Q.shape[-1])
        {mask_test}
            scores = np.where(np.asarray(mask) != 0, scores, -1e9)
        weights = softmax(scores)
        return weights @ V, weights
"""


@pytest.mark.parametrize("scores, mask_test, named", [
    ("Q @ K.T", "if mask is not None:", "transpose_all_axes"),       # tutorial code on batched input
    ("Q @ np.swapaxes(K, -1, -2)", "if mask:", "array_truth_value"),
    ("Q @ np.swapaxes(K, -1, -2) @ np.eye(Q.shape[-1] + 1)", "if mask is not None:", None),  # no known mistake
])
def test_an_error_is_named_only_by_the_mistake_that_raises_it(course, sandbox, tmp_path, scores, mask_test, named):
    folder = _copy(tmp_path, {"attention.py": ATTENTION_TEMPLATE.format(scores=scores, mask_test=mask_test)})
    ex = grade_submission(folder, course, sandbox, stems=("attention",)).exercise("attention")
    errors = [c for c in ex.checks if c.status == "error"]
    assert errors
    for c in errors:
        assert c.misconceptions == ((named,) if named else ()), (c.check_id, c.misconceptions, c.message)
        assert c.hint, c.check_id                          # a generic hint when nothing is named


def test_the_hint_is_decided_once_and_hidden_checks_reveal_no_inputs(course, sandbox, tmp_path):
    from autograder.diagnosis.advice import GENERIC_HINT

    folder = _copy(tmp_path, {"attention.py": ATTENTION_TEMPLATE.format(
        scores="Q @ np.swapaxes(K, -1, -2) @ np.eye(Q.shape[-1] + 1)", mask_test="if mask is not None:")})
    generic = dataclasses.replace(course, hints="generic")
    ex = grade_submission(folder, generic, sandbox, stems=("attention",)).exercise("attention")
    assert all(c.hint == GENERIC_HINT for c in ex.checks if c.status in ("failed", "error"))

    cleo = grade_submission(DEMO / "cleo", course, sandbox, stems=("attention",)).exercise("attention")
    hidden = next(c for c in cleo.checks if c.check_id.endswith("binary_mask"))
    visible = next(c for c in cleo.checks if c.check_id.endswith("bool_mask"))
    assert hidden.hidden and hidden.hint.startswith("A hidden check failed")
    assert "mask_after_softmax" in hidden.misconceptions
    observation = visible.hint.split(". ", 1)[0]         # what was seen: rows, positions, numbers
    assert observation not in hidden.hint and "row" not in hidden.hint.split(":")[0]


def test_the_hidden_checks_are_graded_once_every_visible_check_is(course):
    """The child may remember what it was given: the visible checks run first, the results stay in
    the checks' order."""
    from autograder.checks import CHECKS
    from autograder.grading.submission import _visible_first

    checks = list(CHECKS["attention"])
    hidden = {c.id for c in checks if course.check(c.id).hidden}
    assert hidden and len(hidden) < len(checks)
    graded = []
    results = _visible_first(checks, course, lambda c: graded.append(c.id) or c.id)
    assert results == tuple(c.id for c in checks)
    first_hidden = min(i for i, name in enumerate(graded) if name in hidden)
    assert not hidden & set(graded[:first_hidden]) and not set(graded[first_hidden:]) - hidden
