"""The misconception catalogue, the diagnosis, and the diagnosis corpus.

(a) every catalogue entry's mutant differs from the reference on a check it applies to, and
    diagnose() names the entry when a student's answer is what that mutant gives;
(b) the mutants are told apart: on each check, no two entries give answers that match each
    other, except the pairs listed (and justified) in GENUINE_TIES;
(c) the corpus (tests/corpus): every correct submission grades full, every buggy one loses
    points and is diagnosed with the misconception its file name gives, through the real
    pipeline and sandbox.
"""

from __future__ import annotations

import importlib.util
import itertools
import re
import socket
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

from autograder.diagnosis import explain as dg
from autograder.checks import CHECKS
from autograder.checks.base import Context, RaisedError, rng_for
from autograder.config import load_course
from autograder.checks import all_misconceptions
from autograder.checks.misconception import Misconception
from autograder.judge.raised import operation_kind

ROOT = Path(__file__).resolve().parents[1]
COURSE = load_course(ROOT / "course.yml")
CATALOGUE = all_misconceptions()      # every exercise's entries
ALL_CHECKS = {c.id: c for checks in CHECKS.values() for c in checks}

# On these checks two entries give the same answer, and no input could separate them there.
GENUINE_TIES = {
    # softmax over axis=1 is softmax over the query axis (-2) for 3-D scores (batch, n_q, n_k):
    # the hard-coded axis and the query axis are the same axis on these checks. The 4-D batched
    # check (attention.scaled_dot_product_attention.batched) tells them apart.
    ("attention.scaled_dot_product_attention.float32", "softmax_hardcoded_axis", "softmax_wrong_axis"),
    ("attention.scaled_dot_product_attention.binary_mask", "softmax_hardcoded_axis", "softmax_wrong_axis"),
    ("attention.scaled_dot_product_attention.broadcast_mask", "softmax_hardcoded_axis", "softmax_wrong_axis"),
    # A mask applied only when it is 2-D is no mask at all on a check whose mask has another rank;
    # the 2-D mask checks (bool_mask, mask) tell them apart, so the student sees both names only here.
    *((check, "mask_ignored", "mask_rank_ignored") for check in (
        "attention.scaled_dot_product_attention.binary_mask", "attention.scaled_dot_product_attention.padding_mask",
        "multihead.multi_head_attention.random_mask", "multihead.multi_head_attention.padding_mask",
        "multihead.MultiHeadAttention.random_mask", "multihead.MultiHeadAttention.padding_mask")),
    # ... and a mask applied only when it is 3-D or 4-D (or of the scores' own rank) is no mask at
    # all on the 2-D mask checks; the checks whose mask has that rank tell them apart.
    *((check, "mask_ignored", "mask_rank_ignored") for check in (
        "attention.scaled_dot_product_attention.bool_mask", "attention.scaled_dot_product_attention.broadcast_mask",
        "multihead.multi_head_attention.mask", "multihead.MultiHeadAttention.mask")),
    # merge_heads alone cannot show whether split_heads dealt the features out in turn too: a merge that
    # joins (seq, d_head, heads) is both "merged with the axes in the wrong order" and the interleaved
    # split's inverse. The round trip and multi-head checks tell them apart, and so does a split_heads
    # the student got right (grading rules out an explanation the student's own passing checks contradict).
    ("multihead.merge_heads.values", "merge_wrong_axes", "split_interleaved"),
    # causal_attention alone cannot show whether the mask was made the wrong way round or a right mask
    # was read as "1 = blocked": the answers are the same. create_causal_mask's own checks tell them
    # apart (narrowing drops mask_inverted where they pass: tests/test_reachable.py).
    *((check, "mask_inverted", "mask_read_inverted") for check in (
        "causal_mask.causal_attention.batched", "causal_mask.causal_attention.no_future",
        "causal_mask.causal_attention.output", "causal_mask.causal_attention.weights")),
}


def entry_name(mis: Misconception) -> str:
    return f"{mis.stem}:{mis.id}"


def setup(check):
    inputs = check.inputs(rng_for(COURSE.seed, check.id))
    return inputs, Context(course=COURSE, inputs=inputs)


def applicable(mis: Misconception):
    return [c for c in CHECKS[mis.stem] if mis.applies_to(c.id)]


def differs(check, answer, expected, ctx) -> bool:
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        return bool(check.compare(answer, expected, ctx))


# ---------------------------------------------------------------- the catalogue as data


def contract_ids() -> set[str]:
    text = (ROOT / "docs" / "contract.md").read_text(encoding="utf-8")
    table = text.split("## Misconception ids", 1)[1]
    return set(re.findall(r"^\| ([a-z_0-9]+) \|", table, flags=re.M)) - {"id"}


def test_every_contract_id_is_in_the_catalogue():
    assert contract_ids() <= {m.id for m in CATALOGUE}, contract_ids() - {m.id for m in CATALOGUE}


def test_every_catalogue_id_is_in_the_contract():
    """The ids are a public interface (results.json carries them): each one is documented."""
    from autograder.checks import all_misconceptions

    assert {m.id for m in all_misconceptions()} <= contract_ids(), \
        {m.id for m in all_misconceptions()} - contract_ids()


def test_one_entry_per_id_and_exercise_and_well_formed():
    keys = [(m.id, m.stem) for m in CATALOGUE]
    assert len(keys) == len(set(keys))
    for mis in CATALOGUE:
        assert mis.stem in CHECKS, mis
        assert applicable(mis), f"{entry_name(mis)} applies to no check"
        for prefix in mis.checks:
            assert any(c.id.startswith(prefix) for c in CHECKS[mis.stem]), (entry_name(mis), prefix)
        # A hint teaches; it holds no code to copy: no code blocks, no numpy calls, no method calls.
        assert len(mis.hint) > 60 and "```" not in mis.hint and "np." not in mis.hint, entry_name(mis)
        assert not re.search(r"[A-Za-z_]\w*\.\w+\(", mis.hint), entry_name(mis)


def test_misconception_keeps_its_positional_api():
    m = Misconception("x", "attention", "a hint", lambda: {}, ("attention.softmax",))
    assert m.applies_to("attention.softmax.rows") and not m.applies_to("attention.scaled_dot_product_attention.single")
    assert m.variants() == [{}]


@pytest.mark.parametrize("stem", list(CHECKS))
def test_mutant_functions_have_a_one_line_docstring(stem):
    import importlib

    mutants = importlib.import_module(f"autograder.checks.{stem}.mutants")
    for name in dir(mutants):
        obj = getattr(mutants, name)
        if callable(obj) and getattr(obj, "__module__", None) == mutants.__name__ and not name.startswith("_") \
                and not isinstance(obj, type):
            assert obj.__doc__ and obj.__doc__.strip(), name


# ---------------------------------------------------------------- (a) each mutant is caught and named


@pytest.mark.parametrize("mis", CATALOGUE, ids=entry_name)
def test_mutant_fails_a_check_and_is_diagnosed(mis: Misconception):
    failed = []
    for check in applicable(mis):
        inputs, ctx = setup(check)
        expected = dg.reference_answer(check, inputs)
        for n, overrides in enumerate(mis.variants(errors=True)):
            answer = dg._run(check, ("test", mis.id, mis.stem, n), overrides, inputs)
            if answer is dg._FAILED:
                # A mutant that raises where the reference returns is named by the error it raises.
                kind, text = dg._raised_by(check, overrides, inputs)
                failed.append((check.id, n))
                found = dg.diagnose_error(check, inputs, RaisedError(kind, text))
                assert found is not None and mis.id in found.ids, (check.id, n, kind, text, found)
                continue
            if not differs(check, answer, expected, ctx):
                continue
            failed.append((check.id, n))
            found = dg.diagnose(check, inputs, answer, ctx)
            assert found is not None and mis.id in found.ids, (check.id, n, found)
            assert mis.hint.split("{")[0] in found.hint
    assert any(n == 0 for _, n in failed), f"the main mutant of {entry_name(mis)} passes every check it applies to"
    assert {n for _, n in failed} == set(range(len(mis.variants(errors=True)))), \
        f"an alternative of {entry_name(mis)} is never wrong on its checks: {failed}"


def test_reference_answers_are_not_diagnosed():
    for check in (c for checks in CHECKS.values() for c in checks):
        inputs, ctx = setup(check)
        expected = dg.reference_answer(check, inputs)
        if expected is None or check.exercise == "scaling":
            continue
        found = dg.diagnose(check, inputs, expected, ctx)
        assert found is None or not found.ids, (check.id, found)


# ---------------------------------------------------------------- (b) mutants are told apart


def _agreeing_pairs():
    pairs = set()
    for check in ALL_CHECKS.values():
        inputs, ctx = setup(check)
        expected = dg.reference_answer(check, inputs)
        answers = []
        for mis in dg.candidates(check):
            # as in dg.fits: a variant that gives the right answer on this check explains nothing here
            answers += [(mis.id, a) for a in dg.mutant_answers(check, mis, inputs)
                        if expected is None or not dg._agrees(check, a, expected, ctx)]
        for (id_a, a), (id_b, b) in itertools.combinations(answers, 2):
            if id_a != id_b and (dg._agrees(check, a, b, ctx) or dg._agrees(check, b, a, ctx)):
                pairs.add((check.id, *sorted((id_a, id_b))))
    return pairs


def test_no_two_mutants_agree_unless_genuinely_indistinguishable():
    pairs = _agreeing_pairs()
    assert pairs <= GENUINE_TIES, sorted(pairs - GENUINE_TIES)
    assert GENUINE_TIES <= pairs, f"listed as ties but told apart now: {sorted(GENUINE_TIES - pairs)}"


def test_a_tie_is_reported_as_both():
    check = ALL_CHECKS["attention.scaled_dot_product_attention.float32"]
    inputs, ctx = setup(check)
    mis = next(m for m in CATALOGUE if m.id == "softmax_hardcoded_axis" and m.stem == "attention")
    found = dg.diagnose(check, inputs, dg.mutant_answers(check, mis, inputs)[0], ctx)
    assert set(found.ids) == {"softmax_hardcoded_axis", "softmax_wrong_axis"}
    assert "2 explanations fit" in found.hint


# ---------------------------------------------------------------- observations and fallbacks


def _diagnose_mutant(check_id: str, mis_id: str, variant: int = 0):
    check = ALL_CHECKS[check_id]
    inputs, ctx = setup(check)
    mis = next(m for m in dg.candidates(check) if m.id == mis_id)
    return dg.diagnose(check, inputs, dg.mutant_answers(check, mis, inputs)[variant], ctx)


@pytest.mark.parametrize("check_id,mis_id,seen", [
    ("causal_mask.causal_attention.weights", "mask_upper_triangular", "Position 0 attends to position 1, which comes after it"),
    ("causal_mask.causal_attention.batched", "mask_excludes_diagonal", "In batch index (0, 0), position 0 attends"),
    ("causal_mask.causal_attention.weights", "mask_after_softmax", "Row 0 of your weights adds up to"),
    ("attention.scaled_dot_product_attention.bool_mask", "mask_fill_zero", "though the mask blocks that key"),
    ("attention.scaled_dot_product_attention.single", "softmax_wrong_axis", "Each column of your weights adds up to 1"),
    ("attention.softmax.rows", "softmax_whole_array", "All the entries of your softmax together add up to 1"),
    ("multihead.split_heads.layout", "reshape_without_transpose", "split[0, 0, 1, 0] holds x[0, 0, 4]"),
    ("multihead.MultiHeadAttention.matches_torch", "no_output_projection", "Your weights are right but your output is not"),
    ("multihead.multi_head_attention.weights", "heads_not_split", "Every head of your weights is the same"),
    ("causal_mask.create_causal_mask.values", "mask_excludes_diagonal", "stops position 0 attending to itself"),
    ("hand_computation.part_a.weights", "hand_slip_carried", "Row 1 of WEIGHTS is off"),
])
def test_hint_starts_with_what_was_seen(check_id, mis_id, seen):
    found = _diagnose_mutant(check_id, mis_id)
    first_sentence = found.hint.split(". ", 1)[0]
    assert mis_id in found.ids and seen in first_sentence, found.hint
    assert found.hint.endswith(next(m.hint for m in CATALOGUE if m.id == mis_id and m.stem == found_stem(check_id)))


def found_stem(check_id: str) -> str:
    return check_id.split(".", 1)[0]


def test_unknown_mistake_gets_an_observation_without_an_id():
    check = ALL_CHECKS["causal_mask.causal_attention.weights"]
    inputs, ctx = setup(check)
    weights = dg.reference_answer(check, inputs).copy()
    weights[2] = weights[2, ::-1]                       # row 2 attends to the future, nothing else changes
    found = dg.diagnose(check, inputs, weights, ctx)
    assert found is not None and found.ids == ()
    assert found.hint.startswith("Position 2 attends to position"), found.hint


def test_unknown_mistake_without_a_property_gets_nothing():
    check = ALL_CHECKS["attention.scaled_dot_product_attention.rectangular"]
    inputs, ctx = setup(check)
    out, w = dg.reference_answer(check, inputs)
    assert dg.diagnose(check, inputs, (out + 1.0, w), ctx).ids == ()   # "the mistake is after the softmax"
    assert dg.diagnose(check, inputs, (out, w[::-1]), ctx) is None or dg.diagnose(check, inputs, (out, w[::-1]), ctx).ids == ()


@pytest.mark.parametrize("delta,expected", [(0.004, None), (0.012, "hand_imprecise"), (0.017, "hand_imprecise"),
                                            (0.025, None), (0.05, None), (0.3, None)])
def test_hand_imprecise_is_a_band(delta, expected):
    check = ALL_CHECKS["hand_computation.part_b.output"]
    inputs, ctx = setup(check)
    answer = np.asarray(dg.reference_answer(check, inputs)) + delta
    if not check.compare(answer, dg.reference_answer(check, inputs), ctx):
        assert expected is None
        return
    found = dg.diagnose(check, inputs, answer, ctx)
    ids = found.ids if found else ()
    assert (expected in ids) if expected else ("hand_imprecise" not in ids)


def test_numbers_typed_with_one_decimal_are_imprecise_within_their_rounding():
    check = ALL_CHECKS["hand_computation.part_a.output"]
    inputs, ctx = setup(check)
    answer = np.round(np.asarray(dg.reference_answer(check, inputs)), 1)     # 1.6698 typed as 1.7: 0.03 off
    assert dg.diagnose(check, inputs, answer, ctx).ids == ("hand_imprecise",)


def test_a_hand_answer_for_reordered_words_is_named_as_such_not_imprecise():
    """An answer for "cat sat mat" taken as "cat mat sat", typed with 4 decimals, is about 9 times
    the tolerance off: it is named as reordered inputs, not told "close but not close enough"."""
    from reference.hand_computation import X_CSM

    check = ALL_CHECKS["hand_computation.part_b.output"]
    inputs, ctx = setup(check)
    X = np.asarray(X_CSM)[[0, 2, 1]]
    weights = np.exp(X @ X.T / 2) / np.exp(X @ X.T / 2).sum(axis=1, keepdims=True)
    answer = np.round(weights @ X, 4)
    worst = float(np.abs(answer - np.asarray(dg.reference_answer(check, inputs))).max())
    assert 6 * ctx.course.tolerances.hand < worst < 12 * ctx.course.tolerances.hand
    assert dg.diagnose(check, inputs, answer, ctx).ids == ("hand_inputs_reordered",)


def test_hand_slip_in_one_entry_is_not_imprecision():
    check = ALL_CHECKS["hand_computation.part_b.scores"]
    inputs, ctx = setup(check)
    answer = np.array(dg.reference_answer(check, inputs))
    answer[1, 2] = answer[2, 1] = 0.95                  # sat . mat miscomputed, copied to its mirror
    assert dg.diagnose(check, inputs, answer, ctx).ids == ("hand_slip_carried",)


def test_softmax_unstable_is_recognised_by_any_overflow():
    check = ALL_CHECKS["attention.softmax.stable"]
    inputs, ctx = setup(check)
    answer = np.array(dg.reference_answer(check, inputs))
    answer[0, 0] = np.inf                               # another overflow pattern than the mutant's
    assert "softmax_unstable" in dg.diagnose(check, inputs, answer, ctx).ids


def test_a_broken_answer_does_not_break_diagnosis():
    for check in ALL_CHECKS.values():
        inputs, ctx = setup(check)
        for junk in ([], [[1.0, 2.0]], (np.zeros((2, 2)), np.zeros(3)), {"4": {}}, np.full((3, 3), np.nan)):
            try:
                dg.diagnose(check, inputs, junk, ctx)
            except Exception as err:  # pragma: no cover - the assertion says which
                pytest.fail(f"{check.id} with {junk!r}: {type(err).__name__}: {err}")


# ---------------------------------------------------------------- (c) the corpus, through the real pipeline


def _measure_module():
    spec = importlib.util.spec_from_file_location("measure_diagnosis", ROOT / "scripts" / "measure_diagnosis.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module                    # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


MEASURE = _measure_module()
CORPUS = MEASURE.corpus_files()


def test_corpus_is_large_enough():
    kinds = [kind for _, kind, _ in CORPUS]
    assert kinds.count("correct") >= 25 and kinds.count("buggy") >= 80 and kinds.count("degenerate") >= 8
    labels = {MEASURE.label_of(p) for _, kind, p in CORPUS if kind == "buggy"} - {MEASURE.UNNAMED}
    assert labels <= {m.id for m in CATALOGUE}, labels - {m.id for m in CATALOGUE}
    for stem, kind, path in CORPUS:
        if kind == "buggy" and MEASURE.label_of(path) != MEASURE.UNNAMED:
            ids = {m.id for m in CATALOGUE if m.stem == stem}
            assert MEASURE.label_of(path) in ids, f"{path.name}: no such misconception for {stem}"


@pytest.mark.parametrize("stem,kind,path", CORPUS, ids=[f"{s}/{k}/{p.name}" for s, k, p in CORPUS])
def test_corpus_submission(sandbox, stem, kind, path):
    from autograder.grading.submission import grade_exercise

    result = grade_exercise(stem, MEASURE.load_as(stem, path), COURSE, sandbox)
    problems = [f"{c.check_id} [{c.status}] {c.message}" for c in result.checks if not c.passed]
    if kind == "correct":
        assert result.score == result.max_score, problems
        return
    if kind == "degenerate":
        assert result.score == 0, [c.check_id for c in result.checks if c.passed]
        return
    label = MEASURE.label_of(path)
    assert result.score < result.max_score, f"{path.name} gets full marks"
    reported = {m for c in result.checks if not c.passed for m in c.misconceptions}
    if label == MEASURE.UNNAMED:      # no entry knows this mistake: a generic hint, never a wrong name
        assert not reported, (reported, problems)
        return
    assert label in reported, (reported, problems)
    # A check that names mistakes names this one (two names are fine where a check cannot tell them apart).
    wrong = [(c.check_id, c.misconceptions) for c in result.checks if c.misconceptions and label not in c.misconceptions]
    assert not wrong, wrong


# ---------------------------------------------------------------- (d) errors, named by their cause


def _error(check_id: str, kind: str, text: str, operation: str):
    check = ALL_CHECKS[check_id]
    inputs, _ = setup(check)
    return dg.diagnose_error(check, inputs, RaisedError(kind, text, operation=operation))


def test_an_error_raised_at_a_product_is_not_explained_by_a_mutant_failing_elsewhere():
    """torch words a failed broadcast in `q @ k.transpose(1, 2)` as it words one in `e / e.sum(-1)`:
    a mutant that fails in another kind of operation does not explain an error raised at a product."""
    seen = 0
    for check in (c for c in ALL_CHECKS.values() if c.exercise in ("attention", "causal_mask", "multihead")):
        inputs, _ = setup(check)
        for mis in dg.candidates(check):
            if mis.matches is not None or mis.raises is not None:
                continue
            for overrides in mis.variants():
                raised = dg._raised_at(check, overrides, inputs)
                if raised is None or operation_kind(raised[2]) != "other":
                    continue
                seen += 1
                found = dg.diagnose_error(check, inputs, RaisedError(raised[0], raised[1],
                                                                     operation="scores = q @ k / d ** 0.5"))
                assert found is None or mis.id not in found.ids, (check.id, mis.id, raised)
    assert seen, "no mutant raises outside a product: the test tests nothing"


def test_np_dot_with_T_on_a_batch_is_named():
    found = _error("attention.scaled_dot_product_attention.batched", "ValueError",
                   "shapes (2,3,4,8) and (8,5,3,2) not aligned: 8 (dim 3) != 3 (dim 2)",
                   "scores = np.dot(Q, K.T) / np.sqrt(K.shape[-1])")
    assert found is not None and found.ids == ("transpose_all_axes",)


@pytest.mark.parametrize("kind,text", [
    ("IndexError", "Dimension out of range (expected to be in range of [-2, 1], but got 2)"),
    ("RuntimeError", "The size of tensor a (3) must match the size of tensor b (5) at non-singleton dimension 1"),
])
def test_axes_swapped_by_number_from_the_front_are_named(kind, text):
    found = _error("attention.scaled_dot_product_attention.batched", kind, text,
                   "scores = q @ k.transpose(1, 2) / k.shape[-1] ** 0.5")
    assert found is not None and found.ids == ("transpose_fixed_axes",)


def test_an_error_no_entry_explains_gets_no_name():
    found = _error("causal_mask.causal_attention.batched", "ValueError",     # the mask made for len(Q): the batch
                   "operands could not be broadcast together with shapes (2,2) (2,3,5,5) ()",
                   "s = np.where(create_causal_mask(len(Q)), s, -1e9)")
    assert found is None or not found.ids


@pytest.mark.parametrize("kind,text,operation,named", [
    ("IndexError", "boolean index did not match indexed array along axis 0; size of axis is 3 but size of "
                   "corresponding boolean axis is 5", "scores[mask == 0] = -1e9", "mask_boolean_index"),
    ("IndexError", "The shape of the mask [5, 4] at index 0 does not match the shape of the indexed tensor "
                   "[3, 5, 4] at index 0", "scores[mask == 0] = -1e9", "mask_boolean_index"),
    ("TypeError", "ufunc 'invert' not supported for the input types, and the inputs could not be safely coerced "
                  "to any supported types according to the casting rule ''safe''",
     "scores = np.where(~mask, -np.inf, scores)", "mask_bitwise_not"),
    ("TypeError", "~ (operator.invert) is only implemented on integer and Boolean-type tensors",
     "att = att.masked_fill(~mask, float('-inf'))", "mask_bitwise_not"),
])
def test_a_mask_used_in_a_way_only_some_masks_allow_is_named(kind, text, operation, named):
    found = _error("attention.scaled_dot_product_attention.broadcast_mask", kind, text, operation)
    assert found is not None and found.ids == (named,)


def test_one_diagnosis_hashes_its_inputs_once(monkeypatch):
    """Every mutant's answer is looked up by the inputs' fingerprint: one diagnosis makes it once,
    not once per mutant (hashing them is the grader's share of a buggy submission)."""
    check = ALL_CHECKS["attention.softmax.rows"]
    inputs, ctx = setup(check)
    mis = next(m for m in CATALOGUE if m.id == "softmax_wrong_axis" and m.stem == "attention")
    answer = dg._run(check, ("test", mis.id, mis.stem, 0), mis.variants()[0], inputs)
    real, made = dg._fingerprint, []

    def counted(value, digest=None):
        if digest is None:
            made.append(value)
        return real(value, digest)

    monkeypatch.setattr(dg, "_fingerprint", counted)
    found = dg.diagnose(check, inputs, answer, ctx)
    assert found is not None and "softmax_wrong_axis" in found.ids
    assert len(made) == 1


WRONG_ANSWER_WITHOUT_TORCH = """
import sys
from autograder.checks import CHECKS
from autograder.checks.base import Context, rng_for
from autograder.config import load_course
from autograder.diagnosis import explain as dg

course = load_course()
WANTED = {"attention": ("softmax_no_keepdims", "keys_not_transposed"),
          "multihead": ("keys_not_transposed", "linear_bias_ignored", "reshape_without_transpose")}
found = set()
for stem, wanted in WANTED.items():
    for check in CHECKS[stem]:
        inputs = check.inputs(rng_for(course.seed, check.id))
        for mis in dg.candidates(check):
            if mis.id not in wanted:
                continue
            answer = dg._run(check, ("test", mis.id, 0), mis.variants()[0], inputs)
            if answer is dg._FAILED:
                continue
            diagnosis = dg.diagnose(check, inputs, answer, Context(course=course, inputs=inputs))
            found |= {(stem, check.id.split(".")[1], i) for i in (diagnosis.ids if diagnosis else ())}
assert {("attention", "scaled_dot_product_attention", "keys_not_transposed"),
        ("attention", "softmax", "softmax_no_keepdims"),
        ("multihead", "MultiHeadAttention", "keys_not_transposed"),
        ("multihead", "MultiHeadAttention", "linear_bias_ignored"),
        ("multihead", "MultiHeadAttention", "reshape_without_transpose")} <= found, sorted(found)
print("torch" in sys.modules)
"""


def test_explaining_a_wrong_answer_never_imports_torch_in_the_grader():
    """Mistakes with a torch-written mutant (for torch's own error messages), and mistakes in the
    torch module (its mutants' forward has a numpy twin), are named from a wrong answer in a fresh
    process that never imports torch (torch's import would be most of the grader's first diagnosis
    of a wrong attention or module)."""
    import subprocess

    out = subprocess.run([sys.executable, "-c", WRONG_ANSWER_WITHOUT_TORCH], capture_output=True, text=True,
                         cwd=Path(__file__).resolve().parent.parent, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip() == "False"


TORCH_ERROR_TWICE = """
import json, sys
from autograder.checks import CHECKS
from autograder.checks.base import RaisedError, rng_for
from autograder.config import load_course
from autograder.diagnosis import explain as dg

course = load_course()
check = next(c for c in CHECKS["attention"] if c.id == "attention.scaled_dot_product_attention.batched")
inputs = check.inputs(rng_for(course.seed, check.id))
if sys.argv[1] == "error":        # what the torch-written mutant raises, as a student's torch code would
    mis = next(m for m in dg.candidates(check) if m.id == "keys_not_transposed")
    kind, text, line = dg._raised_at(check, mis.torch_alternatives[0](), inputs)
    print(json.dumps({"type": kind, "text": text, "operation": line}))
    sys.exit(0)
error = json.loads(sys.argv[2])
found = dg.diagnose_error(check, inputs, RaisedError(type=error["type"], text=error["text"],
                                                     operation=error["operation"], line=3, cell=None))
print(json.dumps({"error": error, "ids": list(found.ids) if found else [], "torch": "torch" in sys.modules}))
"""


def test_a_torch_error_is_explained_without_importing_torch_in_the_grader(tmp_path):
    """What the torch-written mutants raise is made in a process of its own (torch_raised.py) and
    kept on disk (the reference cache): the grader names the mistake behind a torch RuntimeError
    without importing torch, on a machine that has never seen it (where importing torch in the grader
    would cost CPU under the GIL and memory to the end of the run) and after."""
    import json
    import os
    import subprocess

    env = dict(os.environ, ATTNKIT_CACHE_DIR=str(tmp_path))
    kit = Path(__file__).resolve().parent.parent

    def run(*args):
        out = subprocess.run([sys.executable, "-c", TORCH_ERROR_TWICE, *args], capture_output=True, text=True,
                             cwd=kit, env=env, timeout=240)
        assert out.returncode == 0, out.stderr[-2000:]
        return json.loads(out.stdout)

    error = run("error")                          # a student's torch code, run apart
    assert error["type"] == "RuntimeError", error
    first = run("diagnose", json.dumps(error))    # the reference cache empty
    assert first["ids"] == ["keys_not_transposed"] and first["torch"] is False, first
    assert list(tmp_path.rglob("raised-*.json")), "nothing was kept"
    second = run("diagnose", json.dumps(error))
    assert second["ids"] == ["keys_not_transposed"] and second["torch"] is False, second


def test_the_torch_written_mutants_raise_the_same_in_their_own_process():
    """The torch helper's children (torch_raised.py) say what the grader's own process says
    (explain._raised_at), for every misconception with torch-written mutants, on a check where they
    raise; one helper answers them all (torch imported once), and it exits when the grader lets it go."""
    from autograder.checks import CHECKS
    from autograder.checks.base import rng_for
    from autograder.config import load_course
    from autograder.diagnosis import explain as dg
    from autograder.diagnosis import torch_raised as helper
    from autograder.diagnosis.torch_raised import torch_raised

    helper.close_helper()
    seed, compared, helpers = load_course().seed, set(), set()
    for check in (c for checks in CHECKS.values() for c in checks):
        inputs = check.inputs(rng_for(seed, check.id))
        for mis in dg.candidates(check):
            if not mis.torch_alternatives or (mis.stem, mis.id) in compared:
                continue
            here = [None if r is None else list(r)
                    for r in (dg._raised_at(check, alt(), inputs) for alt in mis.torch_alternatives)]
            if all(r is None for r in here):
                continue           # nothing raised on this check: try the next one
            assert torch_raised(check, mis, inputs) == here, (check.id, mis.id)
            compared.add((mis.stem, mis.id))
            helpers.add(helper.HELPER._proc)
    assert {("attention", "keys_not_transposed"), ("attention", "softmax_no_keepdims"),
            ("multihead", "keys_not_transposed")} <= compared, compared
    (process,) = helpers
    # The end of its control socket lets it go: it exits on its own (however long a loaded machine
    # makes that take; close_helper kills one that is slow, which is not what is tested here).
    helper.HELPER._ctrl.close()
    assert process.wait(timeout=300) == 0
    helper.close_helper()
    assert helper.HELPER._proc is None


def test_inputs_the_protocol_cannot_carry_are_made_in_the_grader():
    """torch_raised says None (the caller makes them itself) rather than guess."""
    from autograder.checks import CHECKS
    from autograder.diagnosis import explain as dg
    from autograder.diagnosis.torch_raised import torch_raised

    check = next(c for c in CHECKS["attention"] if c.id == "attention.scaled_dot_product_attention.batched")
    mis = next(m for m in dg.candidates(check) if m.id == "keys_not_transposed")
    assert torch_raised(check, mis, {"q": object()}) is None
