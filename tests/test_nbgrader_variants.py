"""An nbgrader course with per-student variants: one released notebook, each student's
numbers drawn from their id when it runs (attnkit_variant.py, kit-free), the kit's own draw on
the grader's side; and the notebook's practice cell on fresh numbers."""

from __future__ import annotations

import dataclasses
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import nbformat
import numpy as np
import pytest
import yaml

from autograder.config import DEFAULT_COURSE, KIT_ROOT
from autograder.config.course import VariantsConfig
from autograder.nbgrader import notebook_variant as nv
from autograder.nbgrader.course import CourseError, write_course
from autograder.variants import variant_for
from autograder.variants.draw import course_identity

ASSIGNMENT = "self_attention"
HAND = "hand_computation"


def _with_variants(course, **settings):
    return dataclasses.replace(course, variants=VariantsConfig(enabled=True, **settings))


def _nested(matrix) -> list[list[float]]:
    return [[float(v) for v in row] for row in matrix]


def _course_file(tmp_path: Path, stems=(HAND,), **variants) -> Path:
    data = yaml.safe_load(DEFAULT_COURSE.read_text())
    data["exercises"] = {s: data["exercises"][s] for s in stems}
    data["variants"] = {"enabled": True, **variants}
    path = tmp_path / "course.yml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


# --------------------------------------------------------------------------- the kit-free draw


def test_the_kit_free_draw_gives_every_student_the_kits_numbers(course):
    """attnkit_variant.py draws without the kit: over 400 ids (some redrawn because a mistake came
    too close to the key, which the draw's own vetting path covers) it equals the kit's variant."""
    varied = _with_variants(course)
    identity, tolerance = course_identity(varied), varied.tolerances.hand
    mistake_redraws = []
    original = nv._mistakes_indistinct

    def counting(*args):
        found = original(*args)
        mistake_redraws.append(bool(found))
        return found

    nv._mistakes_indistinct = counting
    try:
        for i in range(400):
            v = variant_for(varied, f"student{i}")
            assert nv.draw(identity, f"student{i}", tolerance) == \
                {"Q": _nested(v.q), "K": _nested(v.k), "V": _nested(v.v), "X": _nested(v.x)}, i
    finally:
        nv._mistakes_indistinct = original
    assert any(mistake_redraws)             # the mistake-vetting path was taken, and agreed


def test_a_course_with_a_secret_is_refused_with_what_to_do(course, tmp_path):
    with pytest.raises(CourseError, match="secret_env.*attnkit handout OUT --roster"):
        write_course(tmp_path, KIT_ROOT, _with_variants(course, secret_env="ATTNKIT_VARIANT_SECRET"))
    assert not (tmp_path / "source").exists()


def test_without_variants_the_course_has_no_runtime_numbers(course, tmp_path):
    write_course(tmp_path / "plain", KIT_ROOT, course)
    source = tmp_path / "plain" / "source" / ASSIGNMENT
    assert not (source / "attnkit_variant.py").exists()
    text = (source / f"{HAND}.ipynb").read_text()
    assert "attnkit_variant" not in text and "Q = [[1.0, 0.0], [0.0, 1.0]]" in text
    # only the hand computation varies in the notebook: code variants change no notebook
    write_course(tmp_path / "code", KIT_ROOT, _with_variants(course, vary=("code",)))
    assert (tmp_path / "code" / "source" / ASSIGNMENT / f"{HAND}.ipynb").read_text() == text


def test_the_grader_leaves_the_kits_cells_out(course, tmp_path):
    write_course(tmp_path, KIT_ROOT, _with_variants(course))
    nb_path = tmp_path / "source" / ASSIGNMENT / f"{HAND}.ipynb"
    text = nb_path.read_text()
    for shown in ("\\begin{pmatrix}1 & 0", "| cat | 1.0, 0.5", "Q = [[1.0, 0.0]", "[1.0, 0.5, 0.2, 0.8],  # cat"):
        assert shown not in text, shown                # the course's numbers are nowhere in the notebook
    roles = [c.metadata.get("attnkit", {}).get("role") for c in nbformat.read(nb_path, as_version=4).cells]
    assert roles.count("numbers") == 2 and roles.count("practice") == 1
    from autograder.nbgrader.cells import load_notebook

    code = load_notebook(nb_path).source
    assert "attnkit_variant" not in code and "SCORES = [" in code


# --------------------------------------------------------------------------- practice (kit-free)


def test_practice_checks_step_by_step_and_explains_the_first_wrong_step(course):
    from autograder.variants.practice import practice_variant

    numbers = nv.practice_numbers(7)
    kit = practice_variant(7)             # `attnkit practice hand_computation --seed 7` gives the same numbers
    assert numbers == {"Q": _nested(kit.q), "K": _nested(kit.k), "V": _nested(kit.v), "X": _nested(kit.x)}
    # independent of the module: the steps computed here by hand-written numpy
    q, k, v, x = (np.array(numbers[n]) for n in "QKVX")

    def softmax(s, axis=-1):
        e = np.exp(s - s.max(axis=axis, keepdims=True))
        return e / e.sum(axis=axis, keepdims=True)

    scores = q @ k.T
    weights = softmax(scores / np.sqrt(2))
    csm_weights = softmax(x @ x.T / 2)
    right = {"SCORES": scores, "SCALED_SCORES": scores / np.sqrt(2), "WEIGHTS": weights, "OUTPUT": weights @ v,
             "CSM_SCORES": x @ x.T, "CSM_WEIGHTS": csm_weights, "CSM_OUTPUT": csm_weights @ x}
    answers = {n: np.round(m, 4).tolist() for n, m in right.items()}
    text = nv.practice(7, answers)
    assert text.count(": right") == 7 and "Every step is right." in text
    assert "Q = [[" in text and "seed 7" in text
    # no scaling: SCALED_SCORES typed equal to SCORES: the first wrong step, named and explained
    unscaled = dict(answers, SCALED_SCORES=answers["SCORES"])
    lines = nv.practice(7, unscaled).splitlines()
    assert lines[3:] == ["  SCORES: right", lines[4]] and lines[4].startswith("  SCALED_SCORES: SCALED_SCORES is "
                                                                             "what no scaling")
    # Q @ K instead of Q @ K^T (when it differs), and a slip in a later step
    if not np.allclose(q @ k, scores, atol=0.006):
        assert "not Q @ K^T" in nv.practice(7, dict(answers, SCORES=(q @ k).tolist()))
    slipped = dict(answers, OUTPUT=(right["OUTPUT"] + [[0.5, 0], [0, 0]]).tolist())
    verdict = nv.practice(7, slipped).splitlines()[-1]
    assert verdict.startswith("  OUTPUT: OUTPUT is the first wrong step") and "[0, 0]" in verdict
    # the graded variant is another draw altogether
    graded = variant_for(_with_variants(course), "7")
    assert _nested(graded.q) != numbers["Q"] or _nested(graded.x) != numbers["X"]


def test_practice_from_the_command_line_beside_the_notebook(course, tmp_path):
    write_course(tmp_path, KIT_ROOT, _with_variants(course))
    folder = tmp_path / "source" / ASSIGNMENT
    run = subprocess.run([sys.executable, "-I", "attnkit_variant.py", "--practice", "--seed", "7"], cwd=folder,
                         capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == nv.practice(7)
    mine = subprocess.run([sys.executable, "-I", "attnkit_variant.py", "--student", "ada"], cwd=folder,
                          capture_output=True, text=True, timeout=60)
    ada = variant_for(_with_variants(course), "ada")
    assert f"Q = {_nested(ada.q)}" in mine.stdout
    assert f"cat | {', '.join(str(float(v)) for v in ada.x[0])}" in mine.stdout


# --------------------------------------------------------------------------- the released notebook, run


def _run_notebook(nb_path: Path, env_user: str | None, student_id: str | None = None):
    """Run the notebook as a student would (Run All), and read Q, K, V, X back from its kernel."""
    import nbclient

    nb = nbformat.read(nb_path, as_version=4)
    if student_id is not None:
        for cell in nb.cells:
            cell.source = cell.source.replace("STUDENT_ID = None", f"STUDENT_ID = {student_id!r}")
    nb.cells.append(nbformat.v4.new_code_cell("import json; print(json.dumps(dict(Q=Q, K=K, V=V, X=X)))"))
    env = {k: v for k, v in os.environ.items() if k != "JUPYTERHUB_USER"}
    env["PYTHONPATH"] = ""        # the student's environment: numpy, no kit
    if env_user:
        env["JUPYTERHUB_USER"] = env_user
    client = nbclient.NotebookClient(nb, timeout=300, allow_errors=True,
                                     resources={"metadata": {"path": str(nb_path.parent)}})
    client.execute(env=env)
    printed = "".join(o.get("text", "") for o in nb.cells[-1].outputs if o.output_type == "stream")
    shown = {c.id: c.outputs for c in nb.cells if c.metadata.get("attnkit", {}).get("role") == "numbers"}
    return json.loads(printed), shown, nb


def _latex(name, matrix) -> str:
    rows = "\\\\ ".join(" & ".join(str(int(v)) for v in row) for row in matrix)
    return f"{name} = \\begin{{pmatrix}}{rows}\\end{{pmatrix}}"


@pytest.mark.slow
def test_the_released_notebook_shows_each_student_their_numbers_and_autograde_grades_them(course_at, tmp_path):
    course_file = _course_file(tmp_path)
    small = course_at(course_file)
    root = tmp_path / "course"
    write_course(root, KIT_ROOT, small, course_file=course_file)
    from tests.test_nbgrader import _grades, _nbgrader

    _nbgrader(root, "generate_assignment", ASSIGNMENT, "--force")
    release = root / "release" / ASSIGNMENT
    assert (release / "attnkit_variant.py").is_file() and (release / "attnkit_variant.json").is_file()
    released = release / f"{HAND}.ipynb"
    assert not re.search(r"\b0\.7071\b|1\.9300", released.read_text())      # no key in the release

    seen = {}
    for user in ("ada", "ben"):
        numbers, shown, _ = _run_notebook(released, env_user=user)
        own = variant_for(small, user)
        assert numbers == {"Q": _nested(own.q), "K": _nested(own.k), "V": _nested(own.v), "X": _nested(own.x)}
        part_a = "".join(o.data.get("text/markdown", "") for o in shown["hand-computation-your-numbers-a"])
        assert all(_latex(n, m) in part_a for n, m in (("Q", own.q), ("K", own.k), ("V", own.v))), part_a
        part_b = "".join(o.data.get("text/markdown", "") for o in shown["hand-computation-your-numbers-b"])
        assert f"| cat | {', '.join(str(float(v)) for v in own.x[0])} |" in part_b, part_b
        seen[user] = numbers
    assert seen["ada"] != seen["ben"]
    # an explicit STUDENT_ID wins over the hub's login (a run elsewhere); none at all says what to do
    assert _run_notebook(released, env_user="ben", student_id="ada")[0] == seen["ada"]

    # nbgrader autograde: ada hands in the right answers for her own numbers, ben copies ada's
    from reference.hand_computation import hand_answers

    ada_key = hand_answers(variant_for(small, "ada").hand_inputs())
    for student in ("ada", "ben"):
        target = root / "submitted" / student / ASSIGNMENT
        target.mkdir(parents=True)
        for name in ("attnkit_variant.py", "attnkit_variant.json", "attnkit_tests.py", "attnkit_tests.json"):
            (target / name).write_bytes((release / name).read_bytes())
        nb = nbformat.read(released, as_version=4)
        for cell in nb.cells:
            if cell.metadata.get("nbgrader", {}).get("solution") and "raise NotImplementedError()" in cell.source:
                names = [n for n in ada_key if re.search(rf"^{n} = None", cell.source, re.MULTILINE)]
                typed = "\n".join(f"{n} = {np.round(ada_key[n], 4).tolist()}" for n in names)
                cell.source = cell.source.replace("raise NotImplementedError()", typed)
        nbformat.write(nb, target / f"{HAND}.ipynb")
    _nbgrader(root, "autograde", ASSIGNMENT, "--force")
    _nbgrader(root, "export")
    grades = _grades(root / "grades.csv")
    full = small.max_points(HAND)
    assert grades["ada"][0] == full                      # right for her own variant: full marks
    assert grades["ben"][0] < full / 2                   # ada's numbers are not ben's answers
    # The grade needs no kernel (autograder/nbgrader/execute.py: none starts for the kit's notebooks),
    # so the numbers cells are not run; where the instructor asks for a kernel (`always`), it draws
    # ada's numbers from her folder's id, and the grades stay the same.
    _nbgrader(root, "autograde", ASSIGNMENT, "--force", "--ExecuteWhereNeeded.always=True")
    _nbgrader(root, "export")
    assert _grades(root / "grades.csv") == grades
    graded = nbformat.read(root / "autograded" / "ada" / ASSIGNMENT / f"{HAND}.ipynb", as_version=4)
    shown = "".join(o.get("data", {}).get("text/markdown", "") for c in graded.cells
                    if c.metadata.get("attnkit", {}).get("role") == "numbers" for o in c.outputs)
    own = variant_for(small, "ada")
    assert _latex("Q", own.q) in shown                  # the kernel drew ada's numbers (her folder's id)


def test_no_student_id_says_how_to_give_one(tmp_path, monkeypatch):
    monkeypatch.delenv("JUPYTERHUB_USER", raising=False)
    monkeypatch.chdir(tmp_path)
    with pytest.raises(nv.NoStudentId, match='STUDENT_ID = "your id"'):
        nv.student_id(None)
    monkeypatch.setenv("JUPYTERHUB_USER", "hub-login")
    assert nv.student_id(None) == "hub-login" and nv.student_id("given") == "given"
    graded = tmp_path / "autograded" / "cleo" / ASSIGNMENT
    graded.mkdir(parents=True)
    (tmp_path / "nbgrader_config.py").write_text("")
    monkeypatch.chdir(graded)
    assert nv.student_id(None) == "cleo"                # nbgrader's student, not the instructor's login


def test_the_released_test_cells_check_against_the_students_own_numbers(course, tmp_path):
    """The test cells' check.py imports the saved notebook with its numbers cells: each step is checked
    against the student's own V and X (ada's answers are consistent for ada, not under ben's login)."""
    from reference.hand_computation import hand_answers

    varied = _with_variants(course)
    write_course(tmp_path, KIT_ROOT, varied)
    folder = tmp_path / "source" / ASSIGNMENT
    nb = nbformat.read(folder / f"{HAND}.ipynb", as_version=4)
    key = hand_answers(variant_for(varied, "ada").hand_inputs())
    for cell in nb.cells:
        if cell.metadata.get("nbgrader", {}).get("solution"):
            for name in key:
                cell.source = re.sub(rf"^{name} = \[.*?^\]\n", f"{name} = {np.round(key[name], 4).tolist()}\n",
                                     cell.source, flags=re.MULTILINE | re.DOTALL)
    nbformat.write(nb, folder / f"{HAND}.ipynb")

    def cell_score(user: str, task: str) -> float:
        env = {k: v for k, v in os.environ.items() if k != "JUPYTERHUB_USER"} | {"JUPYTERHUB_USER": user,
                                                                                  "PYTHONPATH": ""}
        run = subprocess.run([sys.executable, "-c", f"import attnkit_tests; print(attnkit_tests.run({task!r}))"],
                             cwd=folder, env=env, capture_output=True, text=True, timeout=300)
        assert not run.stderr, run.stderr
        return float(run.stdout.split()[-1])

    points = {task: spec["points"] for task, spec in json.loads((folder / "attnkit_tests.json").read_text()).items()}
    assert cell_score("ada", "hand_computation.part_a") == points["hand_computation.part_a"] > 0
    assert cell_score("ada", "hand_computation.part_b") == points["hand_computation.part_b"] > 0
    ben = variant_for(varied, "ben")
    assert ben.v != variant_for(varied, "ada").v
    assert cell_score("ben", "hand_computation.part_a") < points["hand_computation.part_a"]   # not from ben's V
