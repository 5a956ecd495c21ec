"""A hint names only what the student's code and results show, on both sides: the words a
student reads from check.py (run as a student runs it: a Python without the kit) and from the
grader, for files written as students write them.

- a softmax along another axis leaves a blocked key with weight: the padding mask is not blamed;
- weights not divided by their row's sum are named for that, not for a slip early on;
- a figure whose lines only lack labels is told to label them, with counts that add up;
- entropies in bits are one mistake with one hint on every check they fail;
- "follows from rounded values" only of a step computed from a rounded earlier one;
- a hint that quotes a construct (`.T`, `if mask:`, a fixed axis, `~`) only where the file holds it.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from autograder.checks import check_ids
from autograder.config import KIT_ROOT, load_course
from autograder.handout.write import write_handout

COURSE = load_course(known_checks=check_ids())
SOLUTIONS = KIT_ROOT / "solutions"


@pytest.fixture(scope="module")
def handout(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("handout") / "lab"
    write_handout(out, COURSE)
    return out


@pytest.fixture(scope="module")
def session():
    from autograder.grading.course_session import GradingSession

    with GradingSession(COURSE) as graded:
        yield graded


def _student(handout: Path, tmp_path: Path, files: dict[str, str]) -> Path:
    folder = tmp_path / "student"
    shutil.copytree(handout, folder)
    for name, text in files.items():
        (folder / name).write_text(text, encoding="utf-8")
    return folder


def _check_py(python: Path, folder: Path, stem: str) -> tuple[str, dict]:
    """What check.py printed for `stem`, and its checks by id (--json)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    done = subprocess.run([str(python), "check.py", stem, "--json", "results.json"], cwd=folder,
                          capture_output=True, text=True, timeout=900, env=env)
    assert done.returncode in (0, 1), done.stdout + done.stderr
    written = json.loads((folder / "results.json").read_text())["exercises"][stem]["checks"]
    return done.stdout, {c["id"]: c for c in written}


def _grader(session, folder: Path, stem: str) -> dict:
    (graded,) = session.grade(folder, stems=(stem,), student="sam").exercises
    return {c.check_id: c for c in graded.checks}


def _both(session, python, folder: Path, stem: str) -> tuple[str, dict, dict]:
    printed, mine = _check_py(python, folder, stem)
    return printed, mine, _grader(session, folder, stem)


# ---------------------------------------------------------------- the softmax axis, not the mask

def _sdpa_on_axis(axis: str) -> str:
    """A student's attention.py: the padding mask applied right, the softmax along `axis`."""
    written = (KIT_ROOT / "tests" / "corpus" / "attention" / "buggy" / "softmax_wrong_axis__ho_axis_minus2.py")
    return written.read_text(encoding="utf-8").replace("softmax(scores, axis=-2)", f"softmax(scores, axis={axis})")


PADDING = "attention.scaled_dot_product_attention.padding_mask"


@pytest.mark.parametrize("axis,seen", [
    ("0", "along axis 0 (the batch) adds up to 1"),
    ("1", "along axis 1 (a batch or head axis) adds up to 1"),
    ("-2", "each column of your weights adds up to 1"),
])
def test_a_softmax_on_another_axis_is_not_told_as_a_mask_that_blocks_nothing(handout, session, kit_free_python,
                                                                               tmp_path, axis, seen):
    """softmax(scores, axis=0) with a right padding mask: a key every batch entry blocks gets 1/3 of
    the batch's weight. The student is told where the weights do add up to 1, never that the
    mask lets a blocked key through."""
    folder = _student(handout, tmp_path, {"attention.py": _sdpa_on_axis(axis)})
    printed, mine, graded = _both(session, kit_free_python, folder, "attention")
    hints = [c["hint"] for c in mine.values()] + [c.hint for c in graded.values()]
    assert not any("mask blocks" in h or "mask allows" in h for h in hints), hints
    assert "mask blocks" not in printed, printed
    assert not graded[PADDING].passed and mine[PADDING]["status"] == "failed"
    for hint in (graded[PADDING].hint, mine[PADDING]["hint"]):
        assert seen in hint.lower(), hint
    # named as the batched checks are: one mistake
    assert graded[PADDING].misconceptions == graded["attention.scaled_dot_product_attention.batched"].misconceptions


# ---------------------------------------------------------------- weights not divided by their row's sum

HAND_BUGGY = KIT_ROOT / "tests" / "corpus" / "hand_computation" / "buggy"


def test_an_output_row_from_undivided_exponentials_is_named_for_that(handout, session, kit_free_python, tmp_path):
    """The weights typed right, but OUTPUT's second row made from e^s before the division: the
    student is told that row comes from the exponentials, with their sum, under the mistake's own
    name; not that one number early on is wrong."""
    source = (HAND_BUGGY / "weights_not_normalised__ho_output_row.py").read_text(encoding="utf-8")
    folder = _student(handout, tmp_path, {"hand_computation.py": source})
    printed, mine, graded = _both(session, kit_free_python, folder, "hand_computation")
    output = graded["hand_computation.part_a.output"]
    assert output.misconceptions == ("weights_not_normalised",), (output.misconceptions, output.hint)
    assert output.hint.startswith("Row 1 of OUTPUT is computed from the exponentials of the softmax step, not "
                                  "from your WEIGHTS: the exponentials were not divided by the row's sum (3.0"), \
        output.hint
    assert "early on" not in output.hint and "divided by the sum of its row" in output.hint
    assert [i for i, c in graded.items() if not c.passed] == ["hand_computation.part_a.output"]
    # check.py, which holds no answer, says the output does not follow from the weights
    assert mine["hand_computation.part_a.output"]["status"] == "failed", printed
    assert "OUTPUT does not follow from your WEIGHTS and V" in printed, printed


def test_a_weights_row_left_undivided_is_told_once_with_what_it_adds_up_to(handout, session, kit_free_python,
                                                                            tmp_path):
    source = (HAND_BUGGY / "weights_not_normalised__ho_weights_row.py").read_text(encoding="utf-8")
    folder = _student(handout, tmp_path, {"hand_computation.py": source})
    printed, mine, graded = _both(session, kit_free_python, folder, "hand_computation")
    weights, output = graded["hand_computation.part_b.weights"], graded["hand_computation.part_b.output"]
    for check in (weights, output):
        assert check.misconceptions == ("weights_not_normalised",), (check.check_id, check.misconceptions)
    assert weights.hint == output.hint          # one cause, said where it started
    assert weights.hint.startswith("Row 1 of CSM_WEIGHTS holds the exponentials of your CSM_SCORES / sqrt(4), not "
                                   "yet divided by the row's sum (it adds up to 4.7"), weights.hint
    assert "CSM_OUTPUT follows correctly from it" in weights.hint
    assert "row 1 of your CSM_WEIGHTS sums to 4.75, not 1" in printed, printed


# ---------------------------------------------------------------- a figure whose lines lack labels

def _plot_scaling(body: str) -> str:
    """solutions/scaling.py with plot_scaling's body replaced by `body` (4-space indented lines)."""
    source = (SOLUTIONS / "scaling.py").read_text(encoding="utf-8")
    start = source.index("### BEGIN SOLUTION", source.index("def plot_scaling"))
    end = source.index("### END SOLUTION", start) + len("### END SOLUTION")
    return source[:start] + body.strip() + source[end:]


UNLABELLED = '''dims = sorted(results)
    fig, ax = plt.subplots()
    ax.plot(dims, [results[d]["entropy_unscaled"] for d in dims]{unscaled})
    ax.plot({x}, [results[d]["entropy_scaled"] for d in dims]{scaled})
    ax.set_xlabel("d")
    ax.set_ylabel("entropy")
    ax.set_title("entropy of the weights, unscaled and scaled")
    return fig
'''
FIGURE = "scaling.plot_scaling.figure"


@pytest.mark.parametrize("unscaled,scaled,x,said", [
    ("", "", "dims", "label the lines: the 2 lines plotted against d = [4, 16, 64, 256] have no label; give each "
                     "a label that says what it shows"),
    (', label="unscaled"', "", "dims", "label the lines: 1 of the 2 lines plotted against d = [4, 16, 64, 256] has "
                                       "no label"),
    (', label="unscaled"', ', label="scaled"', "range(4)", "the figure needs at least two lines plotted against d = "
                                                           "[4, 16, 64, 256] (x = the dims): found 2 lines, 1 of "
                                                           "them plotted against d"),
])
def test_a_figure_missing_its_labels_is_told_to_label_its_lines(handout, session, kit_free_python, tmp_path,
                                                                 unscaled, scaled, x, said):
    """Two lines against d without labels: the student reads that the lines are there and need
    labels, and labels alone then pass; no count of lines "with x = d" that says 0 of 2."""
    folder = _student(handout, tmp_path, {"scaling.py": _plot_scaling(UNLABELLED.format(
        unscaled=unscaled, scaled=scaled, x=x))})
    printed, mine, graded = _both(session, kit_free_python, folder, "scaling")
    assert graded[FIGURE].message == mine[FIGURE]["message"], (graded[FIGURE].message, mine[FIGURE]["message"])
    assert graded[FIGURE].message.startswith(said), graded[FIGURE].message
    assert said in printed and "with x = d" not in printed, printed
    if x == "dims":                       # the labels alone were missing
        labelled = _student(handout, tmp_path / "labelled", {"scaling.py": _plot_scaling(UNLABELLED.format(
            unscaled=', label="unscaled"', scaled=', label="scaled"', x=x))})
        assert _grader(session, labelled, "scaling")[FIGURE].passed


# ---------------------------------------------------------------- entropies in bits

def test_entropies_in_bits_are_one_mistake_with_one_hint(handout, session, kit_free_python, tmp_path):
    """-sum p log2 p: every check the bits fail (the range of an entropy of 4 weights, the seed and
    n_trials runs, the entropy's trend) names the one mistake, and the hint is printed once."""
    source = (KIT_ROOT / "tests" / "corpus" / "scaling" / "buggy" / "entropy_log2__ho_log2.py").read_text()
    folder = _student(handout, tmp_path, {"scaling.py": source})
    printed, mine, graded = _both(session, kit_free_python, folder, "scaling")
    failed = {i: c for i, c in graded.items() if not c.passed}
    assert {"scaling.scaling_experiment.keys", "scaling.scaling_experiment.seed",
            "scaling.scaling_experiment.n_trials", "scaling.scaling_experiment.entropy"} <= set(failed), failed
    assert all(c.misconceptions == ("entropy_log2",) for c in failed.values()), \
        {i: c.misconceptions for i, c in failed.items()}
    assert all(c["mistakes"] == ["entropy_log2"] for c in mine.values() if c["status"] == "failed"), mine
    assert "wrong 1 mistake -> 4 checks" in printed and "1 cause" not in printed, printed
    assert printed.count("hint: ") == 1 and printed.count("The entropies are in bits") == 1, printed


# ---------------------------------------------------------------- "follows from rounded values", only where it does

def test_rounding_is_said_of_the_numbers_that_were_rounded(handout, kit_free_python, tmp_path):
    """Typed to one decimal: SCALED_SCORES = 0.7 is computed from exact scores, so its own numbers
    were rounded; OUTPUT is computed from the rounded WEIGHTS, so it follows from them. Nothing
    is said to follow from rounded values that does not."""
    source = (HAND_BUGGY / "hand_imprecise__ho_one_decimal.py").read_text(encoding="utf-8")
    folder = _student(handout, tmp_path, {"hand_computation.py": source})
    printed, mine = _check_py(kit_free_python, folder, "hand_computation")
    assert mine["hand_computation.part_a.scaled_scores"]["message"] == (
        "SCALED_SCORES is off by rounding: its numbers were rounded to too few decimals; the values are graded "
        "after hand-in and will lose points"), printed
    assert mine["hand_computation.part_a.output"]["message"] == (
        "OUTPUT is off by rounding: it follows from your rounded WEIGHTS; the values are graded after hand-in "
        "and will lose points"), printed
    assert "later answers" not in printed, printed


# ---------------------------------------------------------------- a quoted construct only where the file holds it

SWAPPED_FIRST_AND_LAST = _sdpa_on_axis("-1").replace("np.swapaxes(K, -1, -2)", "K.swapaxes(0, -1)")
HEADS_AXIS_FROM_THE_END = (KIT_ROOT / "tests" / "corpus" / "multihead" / "buggy" / "softmax_wrong_axis.py").read_text(
    encoding="utf-8").replace("axis=-2", "axis=-3").replace("dim=-2", "dim=-3")


@pytest.mark.parametrize("stem,source,absent,words", [
    # K.swapaxes(0, -1): on a 3-D batch it fails as K.T does, but the file holds no .T
    ("attention", SWAPPED_FIRST_AND_LAST, "transpose_all_axes", "K.T"),
    # softmax over axis -3, the heads: as axis=1 does, but no axis is a number counted from the front
    ("multihead", HEADS_AXIS_FROM_THE_END, "softmax_hardcoded_axis", "fixed number"),
])
def test_a_mistake_quoting_a_construct_the_file_lacks_is_not_named(handout, session, kit_free_python, tmp_path,
                                                                    stem, source, absent, words):
    assert "K.T" not in source and "axis=1" not in source and "dim=1" not in source
    folder = _student(handout, tmp_path, {f"{stem}.py": source})
    printed, mine, graded = _both(session, kit_free_python, folder, stem)
    assert any(not c.passed for c in graded.values())
    named = {m for c in graded.values() for m in c.misconceptions} | {m for c in mine.values() for m in c["mistakes"]}
    assert absent not in named, named
    assert words not in printed and not any(words in c.hint for c in graded.values()), printed


def test_every_entry_that_quotes_a_construct_declares_it():
    """The audit, kept: an entry whose hint quotes code (`.T`, `if mask:`, a fixed axis, `~`, an
    indexed assignment, axes by number, a bare reshape) says which (Misconception.quotes), and every
    corpus file named after it holds that construct."""
    from autograder.checks import all_misconceptions
    from autograder.judge.quoted import shown

    quoting = {"transpose_all_axes", "array_truth_value", "softmax_hardcoded_axis", "transpose_fixed_axes",
               "mask_boolean_index", "mask_bitwise_not", "reshape_without_transpose", "merge_without_transpose",
               "split_interleaved"}
    entries = [m for m in all_misconceptions() if m.id in quoting]
    assert {m.id for m in entries} == quoting and all(m.quotes for m in entries), \
        [(m.stem, m.id) for m in entries if not m.quotes]
    corpus = KIT_ROOT / "tests" / "corpus"
    for m in entries:
        named_after = [p for p in (corpus / m.stem / "buggy").glob(f"{m.id}*")
                       if p.name.split("__")[0].split(".")[0] == m.id]
        assert all(shown(m.quotes, p.read_text(encoding="utf-8")) for p in named_after), (m.stem, m.id)
