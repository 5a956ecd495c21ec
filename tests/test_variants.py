"""Per-student variants: drawn from course + student id, vetted, graded per student on
every path, copied hand answers flagged, per-student handouts, practice on fresh numbers."""

from __future__ import annotations

import dataclasses
import json
import math
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import yaml

from autograder.config import DEFAULT_COURSE, KIT_ROOT
from autograder.results import PUBLISHED_NUMBERS

SOLUTIONS = KIT_ROOT / "solutions"
STEMS = ("hand_computation", "attention")
HAND = "hand_computation"


@pytest.fixture(scope="module")
def small_course_file(tmp_path_factory) -> Path:
    """The kit's course with two exercises and variants on: fast to grade on every path."""
    data = yaml.safe_load(DEFAULT_COURSE.read_text(encoding="utf-8"))
    data["exercises"] = {stem: data["exercises"][stem] for stem in STEMS}
    data["variants"] = {"enabled": True}
    path = tmp_path_factory.mktemp("course") / "course.yml"
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def varied(course_at, small_course_file):
    return course_at(small_course_file)


def _independent_key(variant) -> dict[str, np.ndarray]:
    """The hand computation's answers computed here, without the reference (a check on the keys)."""
    def steps(q, k, v):
        scores = q @ k.T
        scaled = scores / math.sqrt(q.shape[1])
        e = np.exp(scaled - scaled.max(axis=1, keepdims=True))
        weights = e / e.sum(axis=1, keepdims=True)
        return scores, scaled, weights, weights @ v
    q, k, v, x = (np.array(m, dtype=float) for m in (variant.q, variant.k, variant.v, variant.x))
    a, b = steps(q, k, v), steps(x, x, x)
    return {"SCORES": a[0], "SCALED_SCORES": a[1], "WEIGHTS": a[2], "OUTPUT": a[3],
            "CSM_SCORES": b[0], "CSM_WEIGHTS": b[2], "CSM_OUTPUT": b[3]}


def _stub_with_answers(course, student: str, answers_of: str | None = None, suffix: str = ".py") -> str:
    """`student`'s own exercise file (their numbers), with the hand answers of `answers_of`'s
    numbers (default: their own) typed in, rounded to 4 decimals as a student would."""
    from autograder.build.exercises import to_notebook
    from autograder.variants import variant_for
    from autograder.variants.handout import with_numbers

    text = with_numbers(KIT_ROOT / "exercises" / f"{HAND}.py", variant_for(course, student)).decode()
    key = _independent_key(variant_for(course, answers_of or student))
    for name, value in key.items():
        text, n = re.subn(rf"^{name} = None.*$", f"{name} = {value.round(4).tolist()}", text, flags=re.M)
        assert n == 1, name
    return to_notebook(text, HAND) if suffix == ".ipynb" else text


def _submission(folder: Path, course, student: str, answers_of: str | None = None, suffix: str = ".py") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    shutil.copy(SOLUTIONS / "attention.py", folder / "attention.py")
    (folder / f"{HAND}{suffix}").write_text(_stub_with_answers(course, student, answers_of, suffix), encoding="utf-8")
    return folder


def _hand_checks(result):
    return [c for c in result.checks if c.exercise == HAND]


# ---------------------------------------------------------------- 1. the draw


def test_the_same_course_and_student_give_the_same_variant_in_another_process(varied, small_course_file):
    from autograder.variants import variant_for

    code = ("from autograder.checks import check_ids; from autograder.config import load_course; "
            "from autograder.variants import variant_for; "
            f"print(repr(variant_for(load_course({str(small_course_file)!r}, known_checks=check_ids()), 'ada')))")
    env_path = str(KIT_ROOT)
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                         env={"PYTHONPATH": env_path, "PATH": "/usr/bin:/bin", "PYTHONHASHSEED": "7"})
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == repr(variant_for(varied, "ada"))


def test_different_students_get_different_numbers_and_seeds(varied):
    from autograder.variants import variant_for

    drawn = [variant_for(varied, f"student{i}") for i in range(300)]
    assert len({(v.q, v.k, v.v, v.x) for v in drawn}) == 300
    assert len({v.seed for v in drawn}) == 300
    assert all(v.seed != varied.seed for v in drawn)
    # Readable: Part A small integers, Part B one decimal in [0, 1].
    assert all(float(x).is_integer() and 0 <= x <= 3 for v in drawn for m in (v.q, v.k, v.v) for r in m for x in r)
    assert all(round(x * 10) == x * 10 and 0 <= x <= 1 for v in drawn for r in v.x for x in r)


def test_every_variant_is_vetted_and_the_vetting_turns_down_degenerate_numbers(varied):
    from autograder.variants import variant_for
    from autograder.variants.draw import problems

    for i in range(200):
        v = variant_for(varied, f"s{i}")
        assert not problems(v.q, v.k, v.v, v.x)
        key = _independent_key(v)
        for name in ("WEIGHTS", "CSM_WEIGHTS"):
            w = key[name]
            assert w.max() <= 0.9 and (w.max(axis=1) - w.min(axis=1)).min() >= 0.05      # not one-hot, not uniform
        scaled_a = key["SCORES"] / math.sqrt(2)
        assert np.abs(key["SCALED_SCORES"] - scaled_a).max() < 1e-12
    good_x = [[0.6, 1.0, 0.2, 1.0], [0.4, 0.7, 0.5, 0.1], [1.0, 0.8, 1.0, 0.9]]
    # A row of equal scores: a uniform row of weights (the course's own Part A has one, on purpose).
    found = problems([[1, 0], [0, 1]], [[1, 1], [1, 0]], [[2, 1], [1, 2]], good_x)
    assert any("uniform" in str(p) and p.part == "A" for p in found)
    # Scores 0 and 8 -> weights 0.996 / 0.004: one-hot.
    found = problems([[2, 2], [1, 0]], [[2, 2], [0, 0]], [[1, 2], [3, 0]], good_x)
    assert any("one-hot" in str(p) for p in found)
    found = problems([[1, 0], [1, 0]], [[1, 1], [1, 0]], [[2, 1], [1, 2]], good_x)
    assert any("two rows of Q" in str(p) for p in found)
    found = problems([[2, 1], [0, 2]], [[0, 0], [0, 1]], [[1, 2], [3, 0]], [[0.5] * 4, [0.5] * 4, [0.1] * 4])
    assert any(p.part == "B" for p in found) and not any(p.part == "A" for p in found)


def test_a_secret_changes_the_numbers_and_is_required_once_named(varied, monkeypatch):
    from autograder.variants import variant_for
    from autograder.variants.draw import VariantError

    keyed = dataclasses.replace(varied, variants=dataclasses.replace(varied.variants, secret_env="ATTNKIT_T_SECRET"))
    monkeypatch.delenv("ATTNKIT_T_SECRET", raising=False)
    with pytest.raises(VariantError, match="ATTNKIT_T_SECRET"):
        variant_for(keyed, "ada")
    monkeypatch.setenv("ATTNKIT_T_SECRET", "one")
    first = variant_for(keyed, "ada")
    monkeypatch.setenv("ATTNKIT_T_SECRET", "two")
    assert variant_for(keyed, "ada") != first
    assert variant_for(keyed, "ada") != variant_for(varied, "ada")


def test_the_listing_gives_each_student_numbers_and_the_reference_key(varied):
    from autograder.variants.commands import listing
    from autograder.variants import variant_for

    rows = listing(varied, ["ada", "bo"])
    assert [r["student"] for r in rows] == ["ada", "bo"]
    for row in rows:
        key = _independent_key(variant_for(varied, row["student"]))
        for name, value in key.items():
            assert np.allclose(row["key"][name], value, atol=1e-4)


def test_roster_errors_name_the_line(tmp_path):
    from autograder.intake.roster import RosterError
    from autograder.variants.commands import RosterIdError, roster_ids

    short = tmp_path / "short.csv"
    short.write_text("id,first_name,last_name,email\nada,A,L,a@x.org\nbo,B\n", encoding="utf-8")
    with pytest.raises(RosterError, match="line 3"):
        roster_ids(short)
    unsafe = tmp_path / "unsafe.csv"
    unsafe.write_text("id,first_name,last_name,email\nada,A,L,a@x.org\n../x,B,O,b@x.org\n", encoding="utf-8")
    with pytest.raises(RosterIdError, match="line 3"):
        roster_ids(unsafe)


# ---------------------------------------------------------------- 3. grading per student


def test_variants_off_grade_as_before(course, sandbox):
    from autograder.grading.submission import grade_submission

    result = grade_submission(SOLUTIONS, course, sandbox, student="ada", stems=STEMS)
    assert result.score == result.max_score and result.seed == course.seed
    assert all(c.answer is None and not c.matches_key_of for c in result.checks)


def test_the_grader_recomputes_the_key_and_ignores_the_numbers_the_file_claims(varied, sandbox, tmp_path):
    from autograder.grading.submission import grade_submission
    from autograder.variants import variant_for

    own = grade_submission(_submission(tmp_path / "ada", varied, "ada"), varied, sandbox, student="ada")
    assert own.score == own.max_score and own.seed == variant_for(varied, "ada").seed
    # bo's file (bo's numbers and bo's right answers) handed in as ada's: the grader uses ada's numbers.
    claimed = grade_submission(_submission(tmp_path / "claims", varied, "bo"), varied, sandbox, student="ada")
    assert all(c.score == 0 for c in _hand_checks(claimed))
    assert claimed.exercise("attention").score == claimed.exercise("attention").max_score


def test_the_course_s_published_answers_are_flagged_on_any_path(varied, sandbox):
    from autograder.grading.submission import grade_submission

    result = grade_submission(SOLUTIONS, varied, sandbox, student="ada", stems=(HAND,))
    hand = _hand_checks(result)
    assert all(c.score == 0 and c.matches_key_of == PUBLISHED_NUMBERS for c in hand)
    assert all("published numbers" in c.message for c in hand)


def test_grade_flags_copied_answers_naming_both_for_the_instructor_only(varied, tmp_path):
    from autograder.grading.local_grading import grade_class

    class_dir = tmp_path / "class"
    _submission(class_dir / "ada", varied, "ada")
    _submission(class_dir / "bo", varied, "bo", answers_of="ada")
    _submission(class_dir / "cy", varied, "cy")
    out = tmp_path / "out"
    grade_class(class_dir, out, varied, jobs=1)
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    flagged = summary["integrity"]
    assert flagged and {f["student"] for f in flagged} == {"bo"} and {f["matches_key_of"] for f in flagged} == {"ada"}
    assert len(flagged) == 7
    grades = (out / "grades.csv").read_text(encoding="utf-8")
    totals = {line.split(",")[0]: line.split(",") for line in grades.splitlines()[1:]}
    full = varied.max_points(HAND) + varied.max_points("attention")
    assert float(totals["ada"][-3]) == float(totals["cy"][-3]) == full        # student, ..., total, max_total, status
    assert float(totals["bo"][-3]) == full - varied.max_points(HAND)
    feedback = (out / "feedback" / "bo.md").read_text(encoding="utf-8")
    assert "another variant" in feedback and "ada" not in feedback
    page = (out / "feedback" / "bo.html").read_text(encoding="utf-8")
    page = re.sub(r"<!-- attnkit [0-9a-f]+ -->", "", page)     # the page's digest may hold the letters by chance
    assert "ada" not in page.replace("ada.html", "")
    report = (out / "report.html").read_text(encoding="utf-8")
    assert 'id="integrity"' in report and ">bo</a>" in report and "<td>ada</td>" in report


def test_check_grades_a_per_student_handout_as_its_student(varied, small_course_file, tmp_path, capsys):
    from autograder.cli import main
    from autograder.handout.write import write_handout
    from autograder.variants import variant_for

    folder = tmp_path / "ada"
    write_handout(folder, varied, variant=variant_for(varied, "ada"))
    _submission(folder, varied, "ada")
    assert main(["--course", str(small_course_file), "check", "--submission", str(folder)]) == 0
    assert main(["--course", str(small_course_file), "check", "--submission", str(folder), "--student", "bo"]) == 1
    capsys.readouterr()


def test_the_pytest_plugin_grades_the_recorded_student(varied, small_course_file, tmp_path, pytester):
    from autograder.handout.write import write_handout
    from autograder.variants import variant_for

    folder = tmp_path / "ada"
    write_handout(folder, varied, variant=variant_for(varied, "ada"))
    _submission(folder, varied, "ada")
    args = (str(KIT_ROOT / "autograder"), "-p", "no:cacheprovider", "--submission", str(folder),
            "--course", str(small_course_file), "-q", "-k", HAND)
    result = pytester.runpytest_subprocess(*args)
    result.assert_outcomes(passed=7)
    result = pytester.runpytest_subprocess(*args, "--student", "bo")
    result.assert_outcomes(failed=7)


def test_the_nbgrader_cell_and_preprocessor_grade_nbgrader_s_student(varied, sandbox, tmp_path):
    from autograder.nbgrader.cells import grade_notebook
    from autograder.nbgrader.autograde_run import nbgrader_student

    path = tmp_path / "submitted" / "ada" / "self_attention" / f"{HAND}.ipynb"
    path.parent.mkdir(parents=True)
    path.write_text(_stub_with_answers(varied, "ada", suffix=".ipynb"), encoding="utf-8")
    assert nbgrader_student(path) == "ada"
    ids = [f"{HAND}.part_a", f"{HAND}.part_b"]
    own = grade_notebook(path, ids, varied, sandbox, student=nbgrader_student(path))
    assert own["score"] == own["max_score"] == varied.max_points(HAND)
    other = grade_notebook(path, ids, varied, sandbox, student="bo")
    assert other["score"] == 0


def test_the_gradescope_runner_grades_the_metadata_s_student(varied, small_course_file, tmp_path):
    from autograder.gradescope.run import run

    root = tmp_path / "autograder"
    for sub in ("source", "submission", "results"):
        (root / sub).mkdir(parents=True)
    shutil.copy(small_course_file, root / "source" / "course.yml")
    _submission(root / "submission", varied, "ada@x.org")
    (root / "submission_metadata.json").write_text(json.dumps({"users": [{"email": "ada@x.org", "sid": "1"}]}))
    data = run(root)
    hand = [t for t in data["tests"] if t["extra_data"]["check_id"].startswith(HAND)]
    assert len(hand) == 7 and all(t["status"] == "passed" for t in hand)
    (root / "submission_metadata.json").write_text(json.dumps({"users": [{"email": "bo@x.org"}]}))
    data = run(root)
    assert all(t["score"] == 0 for t in data["tests"] if t["extra_data"]["check_id"].startswith(HAND))


# ---------------------------------------------------------------- 2. per-student handouts


def test_per_student_handouts_carry_their_numbers_and_are_byte_identical(small_course_file, tmp_path, varied):
    from autograder.cli import main
    from autograder.variants import variant_for
    from tests.lms_downloads import unzipped_handout

    roster = tmp_path / "roster.csv"
    roster.write_text("id,first_name,last_name,email\nada,A,L,a@x.org\nbo,B,O,b@x.org\n", encoding="utf-8")
    for out in ("one", "two"):
        assert main(["--course", str(small_course_file), "handout", str(tmp_path / out), "--roster", str(roster)]) == 0
    files = sorted(p.relative_to(tmp_path / "one") for p in (tmp_path / "one").rglob("*") if p.is_file())
    assert files == sorted(p.relative_to(tmp_path / "two") for p in (tmp_path / "two").rglob("*") if p.is_file())
    assert files == [Path("ada.zip"), Path("bo.zip")]
    assert all((tmp_path / "one" / f).read_bytes() == (tmp_path / "two" / f).read_bytes() for f in files)
    for student in ("ada", "bo"):
        v = variant_for(varied, student)
        folder = unzipped_handout(tmp_path / "one", student)
        stub = (folder / f"{HAND}.py").read_text(encoding="utf-8")
        assert f"Q = {[list(map(float, r)) for r in v.q]}" in stub and "[1.0, 0.5, 0.2, 0.8]" not in stub
        notebook = (folder / f"{HAND}.ipynb").read_text(encoding="utf-8")
        assert f"| cat | {', '.join(str(x) for x in v.x[0])} |" in notebook
        index = json.loads((folder / "check_data" / "index.json").read_text())
        assert index["student"] == student and index["seed"] == v.seed
    assert (tmp_path / "one" / "ada" / "self_attention" / "check_data" / "attention.npz").read_bytes() != \
        (tmp_path / "one" / "bo" / "self_attention" / "check_data" / "attention.npz").read_bytes()


# ---------------------------------------------------------------- 5. practice


def test_practice_checks_step_by_step_and_explains_the_first_wrong_step():
    from autograder.variants.practice import judge, practice_variant
    from autograder.checks.hand_computation.mutants import wrong_values

    v = practice_variant(12345)
    key = _independent_key(v)
    verdicts = judge(v, {n: a.tolist() for n, a in key.items()})
    assert len(verdicts) == 7 and all(x.right for x in verdicts)
    unscaled = wrong_values(v.hand_inputs(), scale="none")
    answers = {"SCORES": key["SCORES"].tolist(), "SCALED_SCORES": unscaled["SCALED_SCORES"]}
    verdicts = judge(v, answers)
    assert [x.right for x in verdicts] == [True, False] and "no scaling" in verdicts[-1].explanation
    slip = key["SCORES"].copy()
    slip[0, 1] += 1
    verdicts = judge(v, {"SCORES": slip.tolist()})
    assert not verdicts[0].right and "[0, 1]" in verdicts[0].explanation
    q, k = np.array(v.q), np.array(v.k)
    if not np.allclose(q @ k, q @ k.T):
        verdicts = judge(v, {"SCORES": (q @ k).tolist()})
        assert "not Q @ K^T" in verdicts[0].explanation
    assert practice_variant(12345) == v and practice_variant(12346) != v


def test_check_py_in_a_per_student_handout_runs_that_student_s_inputs(varied, tmp_path):
    """The kit-free checker: the solutions pass the visible checks on the student's seed's inputs, and
    the student's own (consistent) hand answers pass its self-check."""
    from autograder.handout.write import write_handout
    from autograder.variants import variant_for

    folder = tmp_path / "ada"
    write_handout(folder, varied, variant=variant_for(varied, "ada"))
    _submission(folder, varied, "ada")
    done = subprocess.run([sys.executable, "check.py", "attention", HAND], cwd=folder, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    inputs = json.loads((folder / "check_data" / "attention.json").read_text())
    assert inputs["variant"] == "ada" and inputs["seed"] == variant_for(varied, "ada").seed


def test_a_mistake_on_one_s_own_numbers_is_named_as_on_the_course_s(varied):
    """Diagnosis runs the catalogue's mutants on the student's numbers (autograder/checks/hand_computation/mutants.py)."""
    from autograder.checks import CHECKS
    from autograder.checks.base import Context
    from autograder.diagnosis.explain import diagnose
    from autograder.grading.submission import expected_answer
    from autograder.variants import variant_for
    from autograder.checks.hand_computation.mutants import wrong_values

    variant = variant_for(varied, "ada")
    check = next(c for c in CHECKS[HAND] if c.id == f"{HAND}.part_a.weights")
    inputs, expected = expected_answer(check, varied.seed, variant)
    assert np.allclose(expected, _independent_key(variant)["WEIGHTS"])
    for mistake, kwargs in (("no_scaling", {"scale": "none"}), ("softmax_wrong_axis", {"axis": 0})):
        answer = np.asarray(wrong_values(inputs, **kwargs)["WEIGHTS"])
        found = diagnose(check, inputs, answer, Context(course=varied, inputs=inputs), expected)
        assert found is not None and mistake in found.ids, (mistake, found)
