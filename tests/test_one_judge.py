"""One judge, two drivers: which file and form count, and the verdict on every visible check, are
decided by autograder/judge/ alone; the grader (`attnkit grade`) and the handout's check.py both
ask it. (a) its rules, as pure functions of names and scores; (b) both drivers, on the same
folders, for courses that grade both forms and keep the better, always the .py, always the
notebook, with near-miss names, and with per-student variants: check.py run as a student runs it
(a Python that sees numpy, torch and matplotlib but not the kit), the grader as the instructor
runs it (`attnkit grade`)."""

from __future__ import annotations

import dataclasses
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from autograder.checks import check_ids
from autograder.config import KIT_ROOT, load_course
from autograder.handout.write import write_handout
from autograder.judge import forms

COURSE = load_course(known_checks=check_ids())
SOLUTION = KIT_ROOT / "solutions" / "attention.py"
STUB = KIT_ROOT / "exercises" / "attention.py"
BUGGY_PY = KIT_ROOT / "tests" / "corpus" / "attention" / "buggy" / "no_scaling.py"
CORRECT_NB = KIT_ROOT / "tests" / "corpus" / "attention" / "correct" / "ho2_nb_magics.ipynb"
BUGGY_NB = KIT_ROOT / "tests" / "corpus" / "attention" / "buggy" / "transpose_all_axes__ho_nb.ipynb"


# ---------------------------------------------------------------- (a) the rules, once

def test_a_near_miss_is_graded_as_the_exercise_and_said():
    found = forms.named("attention", ["Attention-v2.py", "check.py", "notes.txt"])
    assert found.files == (("Attention-v2.py", "no attention.py was found, so Attention-v2.py was graded as "
                                               "attention.py; name it attention.py next time"),)
    # the exact name beside a copy: each could be the work (the exact one may be the untouched stub)
    found = forms.named("attention", ["attention (1).py", "attention.py"])
    assert found.ambiguous == ("attention.py", "attention (1).py") and not found.files
    assert found.problem == ("several files could be attention.py: attention (1).py, attention.py; keep one and "
                             "name it attention.py")
    # past the number graded, the exact name alone
    copies = [f"attention ({n}).py" for n in range(5)] + ["attention.py"]
    assert forms.named("attention", copies).files == (("attention.py", ""),)


def test_several_near_misses_are_each_graded_and_the_better_counts():
    names = ["Attention-v2.py", "attention (1).py", "attention.ipynb"]
    found = forms.named("attention", names)
    assert found.ambiguous == ("Attention-v2.py", "attention (1).py") and not found.files
    assert forms.candidates("attention", names) == ("Attention-v2.py", "attention (1).py", "attention.ipynb")
    assert forms.candidates("attention", [f"attention ({n}).py" for n in range(5)]) == ()     # past the limit
    graded = [forms.Graded("Attention-v2.py", 3, 13), forms.Graded("attention (1).py", 13, 13)]
    assert forms.the_better("attention", graded)[0] == 1
    # a tie: an untouched stub never beats work, then the first in name order
    tie = [forms.Graded("a.py", 0, 13, untouched=True), forms.Graded("b.py", 0, 13), forms.Graded("c.py", 0, 13)]
    assert forms.the_better("attention", tie)[0] == 1
    # then the exact name
    tie = [forms.Graded("attention (1).py", 13, 13), forms.Graded("attention.py", 13, 13)]
    assert forms.the_better("attention", tie)[0] == 1


def test_a_folder_is_not_a_file_and_a_missing_one_is_said_where():
    assert forms.named("attention", ["attention.py"], folders={"attention.py"}).problem.startswith(
        "no attention.py or attention.ipynb in the submission")
    assert "in my folder (found attention.txt" in forms.named("attention", ["attention.txt"], inside="my folder").problem


@pytest.mark.parametrize("policy, graded_too, counts", [("best", True, 1), ("py", False, 0), ("ipynb", True, 1)])
def test_both_forms_by_the_courses_rule(policy, graded_too, counts):
    py, nb = forms.Graded("attention.py", 3, 13, "both hold work"), forms.Graded("attention.ipynb", 13, 13)
    alone = forms.unless_both(policy, py, nb.filename)
    assert (alone is None) == graded_too
    if graded_too:
        assert forms.of_both(policy, py, nb)[0] == counts
    # the better form with full marks: the other is not graded at all
    assert forms.unless_both("best", dataclasses.replace(py, score=13), nb.filename).endswith(
        "attention.py has full marks, so attention.ipynb was not graded")
    assert forms.of_both("best", dataclasses.replace(nb, score=3), dataclasses.replace(py, score=3))[0] == 0


# ---------------------------------------------------------------- (b) the grader and check.py, one judge

# folder -> (its files over a handout whose attention files are removed, the file that counts per policy)
CASES = {
    "buggy py, correct notebook": ({"attention.py": BUGGY_PY, "attention.ipynb": CORRECT_NB},
                                   {"best": "attention.ipynb", "py": "attention.py", "ipynb": "attention.ipynb"}),
    "correct py, buggy notebook": ({"attention.py": SOLUTION, "attention.ipynb": BUGGY_NB},
                                   {"best": "attention.py", "py": "attention.py", "ipynb": "attention.ipynb"}),
    "a near miss alone": ({"attention (1).py": SOLUTION}, {policy: "attention (1).py" for policy in ("best", "py", "ipynb")}),
    "two near misses": ({"Attention-v2.py": BUGGY_PY, "attention (1).py": SOLUTION},
                        {policy: "attention (1).py" for policy in ("best", "py", "ipynb")}),
    # the handout's stub left under the exact name, the work in the browser's copy beside it
    "the stub beside a copy": ({"attention.py": STUB, "attention (1).py": SOLUTION},
                               {policy: "attention (1).py" for policy in ("best", "py", "ipynb")}),
    "work beside an older copy": ({"attention.py": SOLUTION, "attention (1).py": BUGGY_PY},
                                  {policy: "attention.py" for policy in ("best", "py", "ipynb")}),
}


def _course_file(tmp: Path, policy: str, variants: bool = False) -> Path:
    text = (KIT_ROOT / "course.yml").read_text().replace("\nboth_forms: best", f"\nboth_forms: {policy}")
    assert f"\nboth_forms: {policy}" in text
    path = tmp / f"course-{policy}{'-variants' * variants}.yml"
    path.write_text(text + ("\nvariants:\n  enabled: true\n" if variants else ""))
    return path


def _student_folder(handout: Path, folder: Path, files: dict[str, Path]) -> Path:
    shutil.copytree(handout, folder)
    for form in ("attention.py", "attention.ipynb"):
        (folder / form).unlink()
    for name, source in files.items():
        shutil.copyfile(source, folder / name)
    return folder


def _check_py(python: Path, folder: Path, stem: str) -> tuple[dict, str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    done = subprocess.run([str(python), "check.py", stem, "--json", "results.json"], cwd=folder, env=env,
                          capture_output=True, text=True, timeout=900)
    assert done.returncode in (0, 1) and "Traceback" not in done.stdout + done.stderr, done.stdout + done.stderr
    exercise = json.loads((folder / "results.json").read_text())["exercises"][stem]
    return {"file": exercise["file"], "checks": {c["id"]: (c["status"], c["score"], c["hint"])
                                                 for c in exercise["checks"]}}, done.stdout


def _scores_aside(note: str) -> str:
    return re.sub(r"\d+(\.\d+)?/\d+(\.\d+)?", "#/#", note)


def _attnkit_grade(class_dir: Path, course: Path, out: Path) -> dict[str, dict]:
    done = subprocess.run([sys.executable, "-m", "autograder.cli", "grade", str(class_dir), "--course", str(course),
                           "--out", str(out), "--layout", "folders", "--no-preflight"],
                          capture_output=True, text=True, timeout=1800)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    graded = {}
    for record in (out / "results").glob("*.json"):
        exercises = json.loads(record.read_text())["extra_data"]["result"]["exercises"]
        graded[record.stem] = {e["stem"]: {"file": e["graded_file"], "note": e["note"], "checks": {
            c["check_id"]: (c["status"], c["score"], c["hint"]) for c in e["checks"] if not c.get("hidden")}}
            for e in exercises}
    return graded


@pytest.mark.parametrize("policy", ["best", "py", "ipynb"])
def test_the_grader_and_check_py_count_the_same_file_and_give_the_same_verdicts(policy, kit_free_python,
                                                                                tmp_path):
    course = dataclasses.replace(COURSE, both_forms=policy)
    handout = tmp_path / "handout"
    write_handout(handout, course)
    class_dir = tmp_path / "class"
    folders = {name: _student_folder(handout, class_dir / name.replace(" ", "_").replace(",", ""), files)
               for name, (files, _) in CASES.items()}
    graded = _attnkit_grade(class_dir, _course_file(tmp_path, policy), tmp_path / "out")
    for name, folder in folders.items():
        mine, printed = _check_py(kit_free_python, folder, "attention")
        theirs = graded[folder.name]["attention"]
        counts = CASES[name][1][policy]
        assert mine["file"] == theirs["file"] == counts, (name, mine["file"], theirs["file"], printed)
        assert mine["checks"] == theirs["checks"], (name, {i: (v, theirs["checks"].get(i))
                                                           for i, v in mine["checks"].items()
                                                           if v != theirs["checks"].get(i)})
        # and check.py says why that file counts in the grader's words (its scores: of the visible checks)
        said = next(line for line in printed.splitlines() if line.startswith("  checked from "))
        assert _scores_aside(said.split(": ", 1)[1]) in _scores_aside(theirs["note"]), (said, theirs["note"])


def test_a_course_that_grades_the_py_file_is_followed_by_check_py(kit_free_python, tmp_path):
    """both_forms: py, a buggy attention.py beside a correct attention.ipynb: the .py counts."""
    handout = tmp_path / "handout"
    write_handout(handout, dataclasses.replace(COURSE, both_forms="py"))
    folder = _student_folder(handout, tmp_path / "student", CASES["buggy py, correct notebook"][0])
    mine, printed = _check_py(kit_free_python, folder, "attention")
    assert "attention (attention.py): 4/11 visible checks passed" in printed, printed
    assert "checked from attention.py: both attention.py and attention.ipynb hold work; the course grades the " \
           ".py file" in printed, printed


def test_a_near_miss_name_is_found_and_graded_by_check_py(kit_free_python, tmp_path):
    """Only `attention (1).py` (the solution): graded as attention.py, as the grader grades it."""
    handout = tmp_path / "handout"
    write_handout(handout, COURSE)
    folder = _student_folder(handout, tmp_path / "student", {"attention (1).py": SOLUTION})
    mine, printed = _check_py(kit_free_python, folder, "attention")
    assert "attention (attention (1).py): 11/11 visible checks passed" in printed, printed
    assert "no attention.py was found, so attention (1).py was graded as attention.py" in printed, printed


def test_with_variants_each_student_is_checked_and_graded_on_their_own_numbers(kit_free_python, tmp_path):
    """A handout per student (their numbers, their seeds): check.py there gives the grader's verdict on
    that student's visible checks, the hand computation's consistency aside (its values are graded
    after hand-in)."""
    from autograder.variants import variant_for

    course = dataclasses.replace(COURSE, variants=dataclasses.replace(COURSE.variants, enabled=True))
    class_dir = tmp_path / "class"
    folders = {}
    for student, files in (("ada", {"attention (1).py": SOLUTION}), ("ben", {"attention.py": BUGGY_PY,
                                                                             "attention.ipynb": CORRECT_NB})):
        handout = tmp_path / f"handout-{student}"
        write_handout(handout, course, variant=variant_for(course, student))
        folders[student] = _student_folder(handout, class_dir / student, files)
    graded = _attnkit_grade(class_dir, _course_file(tmp_path, "best", variants=True), tmp_path / "out")
    for student, folder in folders.items():
        mine, _ = _check_py(kit_free_python, folder, "attention")
        theirs = graded[student]["attention"]
        assert (mine["file"], mine["checks"]) == (theirs["file"], theirs["checks"]), student


# ---------------------------------------------------------------- hand answers, one reader

def _hand_file(style: str, answers: dict) -> str:
    """A hand_computation.py with these answers (4 decimals), as a student may write it: without the
    given inputs (written from scratch), in numpy's scalars and 0-d arrays, or in exact numbers."""
    rows = {name: [[round(float(x), 4) for x in row] for row in value] for name, value in answers.items()}
    if style == "lists, no given inputs":
        return "".join(f"{name} = {value!r}\n" for name, value in rows.items())
    if style == "numpy scalars and 0-d arrays":      # each entry one of numpy's kinds, rows as tuples
        entry = {"SCORES": "np.float64", "SCALED_SCORES": "np.longdouble", "WEIGHTS": "np.float16",
                 "OUTPUT": "np.array", "CSM_SCORES": "np.float16", "CSM_WEIGHTS": "np.longdouble"}
        lines = ["import numpy as np", "D_K = np.array(2)", "CSM_D_K = np.float16(4)"]
        for name, value in rows.items():
            if name not in entry:                      # a whole matrix of long doubles
                lines.append(f"{name} = np.array({value!r}, dtype=np.longdouble)")
                continue
            lines.append(f"{name} = [" + ", ".join("(" + ", ".join(f"{entry[name]}({x!r})" for x in row) + ",)"
                                                   for row in value) + "]")
        return "\n".join(lines) + "\n"
    assert style == "Fraction and Decimal"
    lines = ["from decimal import Decimal", "from fractions import Fraction"]
    for n, (name, value) in enumerate(rows.items()):
        kind = ("Fraction", "Decimal")[n % 2]
        lines.append(f"{name} = [" + ", ".join("[" + ", ".join(f"{kind}({str(x)!r})" for x in row) + "]"
                                               for row in value) + "]")
    return "\n".join(lines) + "\n"


HAND_STYLES = ("lists, no given inputs", "numpy scalars and 0-d arrays", "Fraction and Decimal")


@pytest.mark.parametrize("variants", [False, True], ids=["the course's numbers", "each student's numbers"])
def test_hand_answers_in_any_form_get_the_same_verdicts_from_check_py_and_the_grader(variants, kit_free_python,
                                                                                      tmp_path):
    """A hand computation without the given inputs, or typed in numpy's scalars, 0-d arrays, Fraction or
    Decimal: the grader gives full marks, and check.py, without the kit, passes the same visible checks."""
    from reference.hand_computation import answer_keys, hand_answers

    from autograder.variants import variant_for

    course = dataclasses.replace(COURSE, variants=dataclasses.replace(COURSE.variants, enabled=variants))
    class_dir, folders = tmp_path / "class", {}
    for n, style in enumerate(HAND_STYLES):
        student = f"student{n}"
        variant = variant_for(course, student) if variants else None
        answers = hand_answers(variant.hand_inputs()) if variant else answer_keys()
        handout = tmp_path / f"handout-{student}"
        write_handout(handout, course, variant=variant)
        (handout / "hand_computation.py").write_text(_hand_file(style, answers))
        (handout / "hand_computation.ipynb").unlink()
        (class_dir / student).mkdir(parents=True)
        shutil.copyfile(handout / "hand_computation.py", class_dir / student / "hand_computation.py")
        folders[student] = (style, handout)
    graded = _attnkit_grade(class_dir, _course_file(tmp_path, "best", variants=variants), tmp_path / "out")
    for student, (style, handout) in folders.items():
        theirs = graded[student]["hand_computation"]["checks"]
        assert len(theirs) == 7 and all(status == "passed" for status, _, _ in theirs.values()), (style, theirs)
        mine, printed = _check_py(kit_free_python, handout, "hand_computation")
        assert {i: c[:2] for i, c in mine["checks"].items()} == {i: c[:2] for i, c in theirs.items()}, (style, printed)


# ---------------------------------------------------------------- arguments left as they were

def _edited(path: Path, old: str, new: str) -> str:
    source = path.read_text(encoding="utf-8")
    assert old in source, old
    return source.replace(old, new)


def test_a_function_that_changes_its_arguments_loses_the_same_points_in_both_drivers(kit_free_python, tmp_path):
    """A student's attention.py divides Q in place (`Q /= np.sqrt(Q.shape[-1])`) and shifts softmax's x
    in place; their multihead.py sets x.shape (no write: read-only arrays accept it, only the caller
    sees it). The grader and check.py give the same verdicts, name the mistake, and the message says
    the line that writes."""
    attention = _edited(KIT_ROOT / "solutions" / "attention.py",
                        "    d_k = Q.shape[-1]\n    # A Python float keeps a float32 input in float32.\n"
                        "    scores = Q @ np.swapaxes(K, -1, -2) / math.sqrt(d_k)",
                        "    Q /= np.sqrt(Q.shape[-1])\n    scores = Q @ np.swapaxes(K, -1, -2)")
    attention = attention.replace("    shifted = x - np.max(x, axis=axis, keepdims=True)", "    x -= np.max(x, axis=axis, keepdims=True)\n    shifted = x")
    multihead = _edited(KIT_ROOT / "solutions" / "multihead.py",
                        "    x = x.reshape(batch, seq, num_heads, d_head)", "    x.shape = (batch, seq, num_heads, d_head)")
    handout = tmp_path / "handout"
    write_handout(handout, COURSE)
    folder = tmp_path / "class" / "ada"
    shutil.copytree(handout, folder)
    for stem, source in (("attention", attention), ("multihead", multihead)):
        (folder / f"{stem}.ipynb").unlink()
        (folder / f"{stem}.py").write_text(source, encoding="utf-8")
    lines = attention.splitlines()
    q_line = 1 + next(n for n, line in enumerate(lines) if "Q /= np.sqrt" in line)
    x_line = 1 + next(n for n, line in enumerate(lines) if "x -= np.max" in line)
    graded = _attnkit_grade(tmp_path / "class", _course_file(tmp_path, "best"), tmp_path / "out")["ada"]
    for stem in ("attention", "multihead"):
        mine, printed = _check_py(kit_free_python, folder, stem)
        assert mine["checks"] == graded[stem]["checks"], {i: (v, graded[stem]["checks"].get(i))
                                                           for i, v in mine["checks"].items()
                                                           if v != graded[stem]["checks"].get(i)}
        failed = {i: v for i, v in mine["checks"].items() if v[1] == 0}
        assert set(failed) == {f"{stem}.{name}.arguments" for name in (
            ("softmax", "scaled_dot_product_attention") if stem == "attention" else ("split_heads",))}, failed
        assert all("changes an array it was given, in place" in hint for _, _, hint in failed.values()), failed
        if stem == "attention":
            assert f"ValueError: output array is read-only (attention.py, line {q_line}, in " \
                   f"scaled_dot_product_attention)" in printed, printed
            assert f"line {x_line}, in softmax" in printed, printed
        else:
            assert "split_heads changed its argument x in place: after the call, x has shape (2, 3, 2, 3), " \
                   "where it had (2, 3, 6)" in printed, printed


# the solution's forward finds the blocked scores from `allowed`, a boolean tensor made from the mask
_MASK_USED = "scores = scores.masked_fill(~allowed, -1e9)"
MODULE_IN_PLACE = {
    # `.bool()` of a boolean mask is the caller's tensor itself: flipping it in place flips theirs
    "flips the mask": _MASK_USED.replace("~allowed", "allowed.logical_not_()"),
    # a scale of 1 applied to x in place: the answer is right, the caller's x is written into
    "scales x": "x *= 1.0\n            " + _MASK_USED,
    # a write torch cannot refuse (through numpy's view of the mask): only what forward leaves shows it
    "flips the mask through numpy": "blocked = allowed.numpy()\n            blocked[...] = ~blocked\n"
                                    "            scores = scores.masked_fill(torch.from_numpy(blocked), -1e9)",
}
# No change made, but x viewed as one row per position: a view a tensor that is not contiguous cannot give
_QKV = "q, k, v = split(self.W_q(x)), split(self.W_k(x)), split(self.W_v(x))"
VIEWS_X = ("rows = x.view(B * T, -1)\n        "
           "q, k, v = (split(layer(rows).view(B, T, -1)) for layer in (self.W_q, self.W_k, self.W_v))")


def test_a_module_whose_forward_changes_its_inputs_loses_the_same_point_in_both_drivers(kit_free_python, tmp_path):
    """Three students' MultiHeadAttention.forward change the caller's tensors: one flips a boolean mask
    in place (`allowed.logical_not_()` on `mask.bool()`, the mask itself), one multiplies x in place
    (`x *= 1.0`), one flips the mask through numpy's view of it. Every other check passes (each call
    gets tensors of its own); multihead.MultiHeadAttention.arguments fails alike in the grader and in
    check.py, named argument_changed_in_place, with the line that writes where torch can refuse it,
    and with what forward left (and its second answer) where it cannot. A fourth changes nothing but
    views x as one row per position, which an x that is not contiguous refuses: torch's words and
    the line, no mistake of the catalogue named."""
    handout = tmp_path / "handout"
    write_handout(handout, COURSE)
    folders, lines = {}, {}
    for n, (name, code) in enumerate({**MODULE_IN_PLACE, "views x": VIEWS_X}.items()):
        old = _QKV if name == "views x" else _MASK_USED
        source = _edited(KIT_ROOT / "solutions" / "multihead.py", old, code)
        folder = folders[name] = tmp_path / "class" / f"student{n}"
        shutil.copytree(handout, folder)
        (folder / "multihead.ipynb").unlink()
        (folder / "multihead.py").write_text(source, encoding="utf-8")
        lines[name] = 1 + next(i for i, line in enumerate(source.splitlines())
                               if line.strip().startswith(code.splitlines()[0].strip()))
    graded = _attnkit_grade(tmp_path / "class", _course_file(tmp_path, "best"), tmp_path / "out")
    for name, folder in folders.items():
        mine, printed = _check_py(kit_free_python, folder, "multihead")
        theirs = graded[folder.name]["multihead"]["checks"]
        assert mine["checks"] == theirs, (name, {i: (v, theirs.get(i)) for i, v in mine["checks"].items()
                                                 if v != theirs.get(i)})
        failed = {i: v for i, v in mine["checks"].items() if v[1] == 0}
        assert set(failed) == {"multihead.MultiHeadAttention.arguments"}, (name, failed)
        hint = failed["multihead.MultiHeadAttention.arguments"][2]
        if name == "views x":
            assert "RuntimeError: view size is not compatible with input tensor's size and stride" in printed and \
                f"Use .reshape(...) instead. (multihead.py, line {lines[name]}, in forward)" in printed, printed
            assert "changes an array it was given" not in hint, hint
            continue
        assert "changes an array it was given, in place" in hint, name
        if name == "flips the mask through numpy":
            assert "MultiHeadAttention.forward changed its argument mask in place: after the call, mask[" in printed, \
                printed
            assert "MultiHeadAttention.forward gives another answer when called a second time on the same x and " \
                   "mask" in printed, printed
        else:
            op = "logical_not_" if name == "flips the mask" else "mul_"
            assert f"ValueError: input tensor is read-only: {op} would change the caller's tensor in place " \
                   f"(multihead.py, line {lines[name]}, in forward)" in printed, (name, printed)


# ---------------------------------------------------------------- another exercise's file by a near-miss name

USES_YOUR_SOFTMAX = '''

def causal_attention(Q, K, V):
    from attention import softmax
    scores = Q @ np.swapaxes(K, -1, -2) / math.sqrt(Q.shape[-1])
    weights = softmax(np.where(create_causal_mask(Q.shape[-2]), scores, -np.inf))
    return weights @ V, weights
'''
IMPORTS = "causal_mask.py imports softmax from attention.py, and there is no such file; your work is in "
# each folder: its attention files (the handout's attention.py removed), and what both drivers say of the import
NEAR_MISS_SIBLINGS = {
    "capitalised": ({"Attention.py": SOLUTION}, IMPORTS + "Attention.py: rename it attention.py"),
    "a browser's copy": ({"attention (1).py": SOLUTION}, IMPORTS + "attention (1).py: rename it attention.py"),
    "both, each with work": ({"Attention.py": SOLUTION, "attention (1).py": SOLUTION},
                             IMPORTS + "Attention.py and attention (1).py: keep one and name it attention.py"),
    "a copy with work, a copy of the stub": ({"attention (1).py": SOLUTION, "attention (2).py": KIT_ROOT / "exercises"
                                              / "attention.py"}, IMPORTS + "attention (1).py: rename it attention.py"),
}


def test_a_near_miss_name_of_an_imported_exercise_is_said_alike_by_check_py_and_the_grader(kit_free_python,
                                                                                          tmp_path):
    """causal_mask.py does `from attention import softmax`; attention.py is not there, the work on attention
    is in `Attention.py` or a browser's `attention (1).py` (or both, or beside a copy of the stub). Python
    (and Jupyter) cannot import it. check.py and the grader count the same file for attention and say why
    in the same words, and say the same sentence of the import: which file holds the work, and the fix."""
    handout = tmp_path / "handout"
    write_handout(handout, COURSE)
    causal = (KIT_ROOT / "solutions" / "causal_mask.py").read_text(encoding="utf-8") + USES_YOUR_SOFTMAX
    folders = {}
    for n, (name, (files, _)) in enumerate(NEAR_MISS_SIBLINGS.items()):
        folder = folders[name] = tmp_path / "class" / f"student{n}"
        _student_folder(handout, folder, files)
        (folder / "causal_mask.ipynb").unlink()
        (folder / "causal_mask.py").write_text(causal, encoding="utf-8")
    graded = _attnkit_grade(tmp_path / "class", _course_file(tmp_path, "best"), tmp_path / "out")
    for name, folder in folders.items():
        said = NEAR_MISS_SIBLINGS[name][1]
        theirs = graded[folder.name]
        mine, printed = _check_py(kit_free_python, folder, "attention")
        assert mine["file"] == theirs["attention"]["file"], (name, mine["file"], theirs["attention"]["file"])
        why = next(line for line in printed.splitlines() if line.startswith("  checked from "))
        assert _scores_aside(why.split(": ", 1)[1]) in _scores_aside(theirs["attention"]["note"]), (name, why)
        mine, printed = _check_py(kit_free_python, folder, "causal_mask")
        assert f"waits: {said}\n" in printed, (name, printed)
        assert f"{said} (the grader used a correct attention)" in theirs["causal_mask"]["note"], \
            (name, theirs["causal_mask"]["note"])
