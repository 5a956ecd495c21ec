"""`attnkit handout OUT`: what students get checks their work without the kit, and holds
no answer key: no reference code, nothing of a hidden check, no hand-computation answers."""

from __future__ import annotations

import dataclasses
import re

import ast
import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np
import pytest

from autograder.checks import CHECKS, check_ids
from autograder.config import KIT_ROOT, load_course
from autograder.grading.submission import expected_answer
from autograder.handout.write import MODULES, HandoutError, write_handout

COURSE = load_course(known_checks=check_ids())


@pytest.fixture(scope="module")
def handout(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("handout") / "self_attention"
    write_handout(out, COURSE)
    return out


def _copy_in(folder: Path, files: dict[str, Path]) -> Path:
    for name, source in files.items():
        shutil.copyfile(source, folder / name)
    return folder


def _student_copy(handout: Path, tmp_path: Path) -> Path:
    folder = tmp_path / "mine"
    shutil.copytree(handout, folder)
    return folder


def _run(python: Path | str, folder: Path, *args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    return subprocess.run([str(python), "check.py", *args], cwd=folder, capture_output=True, text=True,
                          timeout=600, env=env)


def test_the_solutions_pass_every_visible_check_without_the_kit(handout, kit_free_python, tmp_path):
    folder = _student_copy(handout, tmp_path)
    _copy_in(folder, {p.name: p for p in (KIT_ROOT / "solutions").glob("*.py")})
    done = _run(kit_free_python, folder)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "all visible checks passed" in done.stdout
    for stem in COURSE.exercises:
        replayed = len(json.loads((handout / "check_data" / f"{stem}.json").read_text())["checks"])
        assert (f"{stem} ({stem}.py): {replayed}/{replayed} visible checks passed" in done.stdout if replayed
                else f"{stem}: none of its checks can run here" in done.stdout)
    assert "wrong " not in done.stdout and "error " not in done.stdout


def test_a_buggy_file_fails_naming_the_check_and_the_mistake(handout, tmp_path):
    from autograder.checks import all_misconceptions

    folder = _copy_in(_student_copy(handout, tmp_path),
                      {"attention.py": KIT_ROOT / "tests" / "corpus" / "attention" / "buggy" / "keys_not_transposed.py"})
    done = _run(sys.executable, folder, "attention")
    assert done.returncode == 1
    assert "wrong attention.scaled_dot_product_attention.single" in done.stdout
    assert "16 of 16 entries of output differ" in done.stdout
    hint = next(m.hint for m in all_misconceptions() if m.id == "keys_not_transposed" and m.stem == "attention")
    # the grader's hint: what was seen in the answer, then the mistake
    assert any(line.strip().startswith("hint: ") and line.rstrip().endswith(hint) for line in done.stdout.splitlines())
    # The errors on rectangular inputs are that mistake too (its mutant raises the same error there):
    # told under it, one cause, as the grader groups them; the float32 check's error, which K.T
    # raises alike, is not told about K.T: the file holds none (judge/quoted.py).
    assert "wrong 1 mistake -> 6 checks" in done.stdout
    assert "      error attention.scaled_dot_product_attention.rectangular" in done.stdout
    assert "the same error comes from each of these mistakes" not in done.stdout and "K.T" not in done.stdout
    assert "some visible checks failed" in done.stdout


def test_the_stubs_are_not_implemented_yet(handout, tmp_path):
    done = _run(sys.executable, _student_copy(handout, tmp_path))
    assert done.returncode == 1
    assert "not implemented yet: softmax raises NotImplementedError" in done.stdout
    assert "not implemented yet: SCORES is still None" in done.stdout
    # the checks that test a property with code run too: none is left for after hand-in
    done = _run(sys.executable, _student_copy(handout, tmp_path / "again"), "scaling")
    assert done.returncode == 1
    assert "0/7 visible checks passed, 0/9 points" in done.stdout, done.stdout
    assert "not implemented yet: scaling_experiment raises NotImplementedError" in done.stdout
    assert "not implemented yet: plot_scaling raises NotImplementedError" in done.stdout
    assert "after you hand in" not in done.stdout


# A forward that echoes its input: the right shapes, and nothing of the layers' parameters in the output.
ECHOING_MODULE = """

_Layer = MultiHeadAttention


class MultiHeadAttention(_Layer):
    def forward(self, x, mask=None):
        _, weights = super().forward(x, mask)
        return x.clone(), weights
"""
PROPERTY_CHECKS = {"causal_mask.causal_attention.no_future", "multihead.MultiHeadAttention.structure",
                   *(c.id for c in CHECKS["scaling"] if not COURSE.check(c.id).hidden)}
BUGGY = {"scaling": ["seed_ignored", "n_trials_ignored", "entropy_log2", "unnamed__ho12_max_weight_copy",
                     "variance_not_std", "unnamed__ho_plot_values_changed", "unnamed__ho3_string_keys"],
         "causal_mask": ["mask_inverted", "transpose_all_axes"],
         "multihead": ["no_output_projection"]}


def test_check_py_gives_the_graders_verdict_on_every_visible_check(handout, tmp_path):
    """The solutions, the stubs and buggy files: the visible checks that pass in check.py are those that
    pass in the grader, the checks that test a property with code included."""
    import importlib.util
    from concurrent.futures import ThreadPoolExecutor

    from autograder.grading.course_session import GradingSession

    loader = importlib.util.spec_from_file_location("handout_check", handout / "check.py")
    checker = importlib.util.module_from_spec(loader)
    loader.loader.exec_module(checker)
    corpus = KIT_ROOT / "tests" / "corpus"
    cases = [(stem, (KIT_ROOT / kind / f"{stem}.py").read_text()) for stem in BUGGY
             for kind in ("solutions", "exercises")]
    cases += [(stem, (corpus / stem / "buggy" / f"{name}.py").read_text()) for stem, names in BUGGY.items()
              for name in names]
    cases.append(("multihead", (KIT_ROOT / "solutions" / "multihead.py").read_text() + ECHOING_MODULE))
    folders = []
    for n, (stem, source) in enumerate(cases):
        folders.append(tmp_path / str(n))
        shutil.copytree(KIT_ROOT / "solutions", folders[-1], ignore=shutil.ignore_patterns("*.ipynb", "__pycache__"))
        (folders[-1] / f"{stem}.py").write_text(source)
    with ThreadPoolExecutor(max_workers=2) as pool:       # check.py's children, two at a time
        checked = list(pool.map(lambda case, folder: checker.check_exercise(case[0], folder, path=folder /
                                                                            f"{case[0]}.py")[0], cases, folders))
    failed_somewhere = set()
    with GradingSession(COURSE) as session:
        for (stem, source), folder, outcomes in zip(cases, folders, checked):
            graded = session.grade_exercise(folder, stem)
            in_grader = {c.check_id for c in graded.checks if c.passed and not c.hidden}
            in_check_py = {o.check["id"] for o in outcomes if o.status == "passed"}
            assert {o.check["id"] for o in outcomes} == {c.check_id for c in graded.checks if not c.hidden}
            assert in_check_py == in_grader, (stem, source[-300:], sorted(in_check_py ^ in_grader))
            failed_somewhere |= {c.check_id for c in graded.checks if not c.passed}
    # the cases tell: each property check fails on one of them (and passes on the solutions)
    assert PROPERTY_CHECKS <= failed_somewhere, sorted(PROPERTY_CHECKS - failed_somewhere)


START_ORDER = """
import json, runpy, subprocess, sys
started = []
class Recorded(subprocess.Popen):
    def __init__(self, cmd, *args, **kwargs):
        student_file = next(arg for arg in cmd[2:] if arg.endswith((".py", ".ipynb")))   # cmd[1]: unjailed.py
        started.append([student_file.rsplit("/", 1)[-1], "numpy" in sys.modules, "--nice" in cmd])
        super().__init__(cmd, *args, **kwargs)
subprocess.Popen = Recorded
sys.argv = ["check.py"]
try:
    runpy.run_path("check.py", run_name="__main__")
except SystemExit:
    pass
print(json.dumps(started))
"""


def test_all_five_start_with_the_torch_file_before_numpy_is_imported(handout, tmp_path):
    """`python check.py`: the file that imports torch (the slowest to start) is the first child,
    started before check.py imports numpy itself; the others run beside it at a lower priority.
    Order and priority only: the verdicts are the tests above."""
    folder = _copy_in(_student_copy(handout, tmp_path), {f"{s}.py": KIT_ROOT / "solutions" / f"{s}.py"
                                                         for s in COURSE.exercises})
    done = subprocess.run([sys.executable, "-c", START_ORDER], cwd=folder, capture_output=True, text=True,
                          timeout=600)
    started = json.loads(done.stdout.strip().splitlines()[-1])
    assert sorted(name for name, _, _ in started) == sorted(f"{s}.py" for s in COURSE.exercises)
    torch_first = [row for row in started if row[0] == "multihead.py"][0]
    # submitted first; its thread and the second one's race to spawn, so it is one of the first two
    assert started.index(torch_first) < 2 and torch_first == ["multihead.py", False, False], started
    assert all(lowered for name, _, lowered in started if name != "multihead.py"), started   # nice


def test_hand_answers_are_checked_for_consistency_not_values(handout, tmp_path):
    folder = _student_copy(handout, tmp_path)
    stub = (KIT_ROOT / "exercises" / "hand_computation.py").read_text()
    # A wrong first step, every later step following from it: consistent, so part A passes here.
    scores = np.array([[1.0, 1.0], [1.0, 2.0]])
    scaled = scores / np.sqrt(2)
    weights = np.exp(scaled) / np.exp(scaled).sum(axis=1, keepdims=True)
    output = weights @ np.array([[2.0, 1.0], [1.0, 2.0]])
    answers = {"SCORES": scores, "SCALED_SCORES": scaled, "WEIGHTS": weights, "OUTPUT": output}
    (folder / "hand_computation.py").write_text(stub + _assignments(answers))
    done = _run(sys.executable, folder, "hand_computation")
    assert "hand_computation (hand_computation.py): 4/7 visible checks passed" in done.stdout, done.stdout
    assert "not implemented yet: CSM_SCORES is still None" in done.stdout
    # Weights that do not follow from the scores, an output that does not follow from the weights: named.
    answers |= {"WEIGHTS": np.array([[0.6, 0.4], weights[1]]), "OUTPUT": output + 0.1}
    (folder / "hand_computation.py").write_text(stub + _assignments(answers))
    done = _run(sys.executable, folder, "hand_computation")
    assert done.returncode == 1
    assert "WEIGHTS does not follow from your SCALED_SCORES: row 0 is not the softmax" in done.stdout
    assert "OUTPUT does not follow from your WEIGHTS and V" in done.stdout


def _assignments(values: dict[str, np.ndarray]) -> str:
    return "".join(f"\n{name} = {value.round(5).tolist()}" for name, value in values.items()) + "\n"


def test_a_hanging_function_is_stopped(tmp_path):
    quick = dataclasses.replace(COURSE, limits=dataclasses.replace(COURSE.limits, call_timeout=1.0))
    out = tmp_path / "handout"
    write_handout(out, quick)
    hangs = "\n\ndef scaled_dot_product_attention(Q, K, V, mask=None):\n    while True:\n        pass\n"
    (out / "attention.py").write_text((KIT_ROOT / "solutions" / "attention.py").read_text() + hangs)
    done = _run(sys.executable, out, "attention")
    assert done.returncode == 1
    assert "scaled_dot_product_attention did not return within 1 s (an endless loop?)" in done.stdout
    # the checks after it that call it are not run (each waited out its own limit: 6 s), said once
    assert done.stdout.count("not run: scaled_dot_product_attention did not return within 1 s in an earlier "
                             "check") == 1, done.stdout
    assert "attention (attention.py): 4/11 visible checks passed" in done.stdout


def test_a_function_that_hung_is_waited_for_once_and_its_callers_on_their_own(tmp_path):
    """A loop in softmax: softmax's later checks are not run; scaled_dot_product_attention, which
    calls it, is waited for once, and that check names softmax as the function that hung."""
    quick = dataclasses.replace(COURSE, limits=dataclasses.replace(COURSE.limits, call_timeout=1.0))
    out = tmp_path / "handout"
    write_handout(out, quick)
    source = (KIT_ROOT / "solutions" / "attention.py").read_text()
    at = source.index("def softmax")
    body = source.index('"""', source.index('"""', at) + 3) + 3     # after softmax's docstring
    (out / "attention.py").write_text(source[:body] + "\n    while True:\n        pass" + source[body:])
    done = _run(sys.executable, out, "attention")
    # only the function that hung is blamed, also where a caller's check met it
    assert "softmax did not return within 1 s (an endless loop?)" in done.stdout, done.stdout
    assert ("softmax did not return within 1 s (called by scaled_dot_product_attention) (an endless loop?)"
            in done.stdout), done.stdout
    assert "scaled_dot_product_attention did not return" not in done.stdout, done.stdout
    assert done.stdout.count("not run: softmax did not return within 1 s in an earlier check") == 1, done.stdout
    assert "attention (attention.py): 0/11 visible checks passed" in done.stdout


SLOW_BUT_WORKING = """
import time

for _ in range(30):             # a slow, busy computer: 7 s of wall time, well under 1 s of CPU
    spent = time.process_time()
    while time.process_time() - spent < 0.01:
        pass
    time.sleep(0.23)
"""


def test_the_limits_count_cpu_time_as_the_graders_do(tmp_path):
    """An import that takes longer than its limit in wall time but not in CPU time (a busy or slow
    computer) is not stopped; a call that sleeps makes no progress and is stopped after its limit,
    as the grader's sandbox stops it (judge/clock.py)."""
    limits = dataclasses.replace(COURSE.limits, import_timeout=1.0, call_timeout=1.0, wall_factor=20.0)
    out = tmp_path / "handout"
    write_handout(out, dataclasses.replace(COURSE, limits=limits))
    sleeps = "\n\ndef scaled_dot_product_attention(Q, K, V, mask=None):\n    time.sleep(600)\n"
    (out / "attention.py").write_text(SLOW_BUT_WORKING + (KIT_ROOT / "solutions" / "attention.py").read_text()
                                      + sleeps)
    done = _run(sys.executable, out, "attention")
    assert "importing attention.py did not end" not in done.stdout, done.stdout
    assert "scaled_dot_product_attention did not return within 1 s (an endless loop?)" in done.stdout, done.stdout
    assert "attention (attention.py): 4/11 visible checks passed" in done.stdout, done.stdout


def test_a_syntax_error_is_said_with_file_and_line(handout, tmp_path):
    folder = _student_copy(handout, tmp_path)
    (folder / "attention.py").write_text("import numpy as np\n\ndef softmax(x:\n    pass\n")
    done = _run(sys.executable, folder, "attention")
    assert done.returncode == 1
    assert "attention.py has a syntax error at line 3" in done.stdout


def test_the_handout_holds_no_key(handout, kit_free_python):
    texts = _all_texts(handout)
    # no reference code: no line of the body of a function of an exercise's reference, or of a mutant
    for module in [KIT_ROOT / "reference" / f"{stem}.py" for stem in COURSE.exercises] + sorted(
            (KIT_ROOT / "autograder" / "checks").glob("*/mutants.py")):
        for line in _body_lines(module):
            leaked = [name for name, text in texts.items() if line in text]
            assert not leaked, f"{module.name}: {line!r} is in {leaked}"
    # nothing of a hidden check: neither its id nor its inputs
    arrays = _all_arrays(handout)
    for stem, checks in CHECKS.items():
        for check in (c for c in checks if COURSE.check(c.id).hidden):
            assert not [name for name, text in texts.items() if check.id in text], check.id
            inputs, expected = expected_answer(check, COURSE.seed)
            if isinstance(expected, dict):        # the statistics a hidden scaling check compares with
                numbers = {repr(float(v)) for row in expected.values() for v in row.values()}
                assert not [name for name, text in texts.items() if any(x in text for x in numbers)], check.id
            for value in inputs.values():
                # random draws; a 0/1 mask of a hidden check may well equal a visible one by chance
                if isinstance(value, np.ndarray) and value.size > 4 and (value != np.round(value)).any():
                    assert not any(a.shape == value.shape and np.array_equal(a, value) for a in arrays), check.id
    # no hand-computation answer, as an array or as text
    import reference.hand_computation as hand

    given = {0.0, 1.0, 0.5, 2.0}
    for name in ("SCORES", "SCALED_SCORES", "WEIGHTS", "OUTPUT", "CSM_SCORES", "CSM_WEIGHTS", "CSM_OUTPUT"):
        answer = np.asarray(getattr(hand, name), dtype=float)
        assert not any(a.shape == answer.shape and np.allclose(a, answer, atol=0.006) for a in arrays), name
        for value in {float(v) for v in answer.ravel()} - given:
            for text_value in (f"{value:.4f}", f"{value:.3f}" if value >= 1 else None):
                if text_value:
                    assert not [n for n, t in texts.items() if text_value in t], (name, text_value)
    # and the kit cannot be imported there
    for module in ("reference", "autograder", "solutions"):
        done = subprocess.run([str(kit_free_python), "-c", f"import {module}"], cwd=handout, capture_output=True,
                              text=True, env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"})
        assert done.returncode != 0 and "ModuleNotFoundError" in done.stderr, module


def _all_texts(folder: Path) -> dict[str, str]:
    """Every file's text, archives' members included."""
    texts = {}
    for path in folder.rglob("*"):
        if path.suffix == ".zip" or path.suffix == ".npz":
            with zipfile.ZipFile(path) as archive:
                for member in archive.namelist():
                    texts[f"{path.name}:{member}"] = archive.read(member).decode("latin-1")
        elif path.is_file():
            texts[str(path.relative_to(folder))] = path.read_bytes().decode("utf-8", "replace")
    return texts


def _all_arrays(folder: Path) -> list[np.ndarray]:
    arrays = []
    for path in folder.rglob("*.npz"):
        with np.load(path, allow_pickle=False) as data:
            arrays += [data[key].astype(np.float64) if data[key].dtype != bool else data[key] for key in data.files]
    return arrays


def _body_lines(module: Path) -> set[str]:
    """The distinctive code lines of a module's functions (no docstrings, no short lines)."""
    tree = ast.parse(module.read_text())
    lines = module.read_text().splitlines()
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body[1:] if ast.get_docstring(node) else node.body
            for stmt in body:
                for number in range(stmt.lineno, (stmt.end_lineno or stmt.lineno) + 1):
                    text = lines[number - 1].strip()
                    # an import says which library, not how: the judge's convert.py imports what a figure is too
                    if len(text) >= 30 and not text.startswith(("#", '"', "'", "return (", "raise ", "import ",
                                                                "from ")):
                        out.add(text)
    return out


def test_the_readme_alone_sets_a_student_up_and_its_help_command_lists_exercises_and_modes(handout, kit_free_python):
    readme = (handout / "README.md").read_text(encoding="utf-8")
    commands = [line.split(" #")[0].strip() for block in re.findall(r"```bash\n(.*?)```", readme, re.S)
                for line in block.splitlines() if line.strip()]
    assert any(c.startswith("python3 -m venv ") for c in commands), commands
    assert any(c.startswith("source ") and "activate" in c for c in commands), commands
    assert any(c.startswith("pip install ") and {"numpy", "matplotlib", "torch"} <= set(c.split())
               and "--extra-index-url https://download.pytorch.org/whl/cpu" in c for c in commands), commands
    assert any(c.startswith("pip install ") and "jupyter" in c.split() for c in commands), commands
    helps = [c for c in commands if c.endswith("--help")]
    assert helps == ["python check.py --help"], commands
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    done = subprocess.run([str(kit_free_python), *helps[0].split()[1:]], cwd=handout, capture_output=True,
                          text=True, timeout=120, env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    listed = re.search(r"^exercises\b.*?: (.*)$", done.stdout, re.M)
    assert listed and listed.group(1).split(", ") == list(COURSE.exercises), done.stdout
    for mode in ("--watch", "--json", "--help"):
        assert f"python check.py {mode}" in done.stdout, done.stdout
    watched = re.findall(r"python check\.py --watch (\w+)", done.stdout)      # --watch takes exercise names
    assert watched and set(watched) <= set(COURSE.exercises), done.stdout


def test_a_folder_with_files_is_not_overwritten(tmp_path):
    (tmp_path / "attention.py").write_text("my work")
    with pytest.raises(HandoutError, match="not empty"):
        write_handout(tmp_path, COURSE)
    assert (tmp_path / "attention.py").read_text() == "my work"


def test_the_cli_writes_a_handout(tmp_path):
    done = subprocess.run([sys.executable, "-m", "autograder.cli", "handout", str(tmp_path / "out")],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "out" / "check.py").is_file() and (tmp_path / "out" / "check_data" / "index.json").is_file()
    assert sorted(p.relative_to(tmp_path / "out").as_posix() for p in (tmp_path / "out").rglob("*.py")) == sorted(
        [f"{stem}.py" for stem in COURSE.exercises] + ["check.py", "attnkit_tests.py", *MODULES])


@pytest.mark.parametrize("stem", ["attention", "scaling"])     # scaling: checks that test a property with code
def test_nbgrader_test_cells_run_the_handout_checker_without_the_kit(kit_free_python, tmp_path, stem):
    import nbformat

    from autograder.nbgrader.course import write_course

    write_course(tmp_path / "course", KIT_ROOT, COURSE)
    assignment = tmp_path / "course" / "source" / COURSE.assignment
    assert (assignment / "check.py").is_file() and (assignment / "check_data" / "attention.npz").is_file()
    notebook = nbformat.read(assignment / f"{stem}.ipynb", as_version=4)      # the source: solutions in it
    cells = [c for c in notebook.cells if c.metadata.get("nbgrader", {}).get("grade")
             and not c.metadata["nbgrader"].get("solution")]
    # the released cell: one readable call of attnkit_tests (which runs check.py), never the kit
    assert cells and all("attnkit_tests.run(" in c.source and "autograder" not in c.source for c in cells)
    tasks = json.loads((assignment / "attnkit_tests.json").read_text(encoding="utf-8"))
    for cell in cells:
        task = re.search(r'attnkit_tests\.run\("([^"]+)"\)', cell.source).group(1)
        script = assignment / "cell_as_run.py"      # beside the notebook, as its kernel runs it
        script.write_text(cell.source.replace(f'attnkit_tests.run("{task}")',
                                              f'print("score", attnkit_tests.run("{task}"))'))
        done = subprocess.run([str(kit_free_python), str(script)], cwd=assignment, capture_output=True, text=True,
                              timeout=600, env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"})
        visible = tasks[task]["checks"]
        assert visible, task
        points = sum(COURSE.check(check_id).points for check_id in visible)
        assert done.stdout.strip().endswith(f"score {float(points)}"), done.stdout + done.stderr
        assert "visible checks passed" in done.stdout


# ---------------------------------------------------------------- a handout per student, at class size

@pytest.fixture(scope="module")
def class_handouts(tmp_path_factory):
    """`attnkit handout OUT --roster` for three students of a course with variants on."""
    import yaml

    from autograder.cli import main
    from autograder.config import DEFAULT_COURSE

    root = tmp_path_factory.mktemp("class_handouts")
    data = yaml.safe_load(DEFAULT_COURSE.read_text(encoding="utf-8"))
    data["variants"] = {"enabled": True}
    course = root / "course.yml"
    course.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    roster = root / "roster.csv"
    roster.write_text("id,first_name,last_name,email\nada,Ada,L,a@x.org\nbo,Bo,O,b@x.org\ncy,Cy,P,c@x.org\n",
                      encoding="utf-8")
    out = root / "handouts"
    assert main(["--course", str(course), "handout", str(out), "--roster", str(roster)]) == 0
    return course, out


def test_class_handouts_are_one_zip_each_sharing_the_support_files_zipped_once(class_handouts):
    _, out = class_handouts
    assert sorted(p.name for p in out.iterdir()) == ["ada.zip", "bo.zip", "cy.zip"]
    zips = {s: zipfile.ZipFile(out / f"{s}.zip") for s in ("ada", "bo", "cy")}
    raw = {s: (out / f"{s}.zip").read_bytes() for s in zips}
    names = {s: zf.namelist() for s, zf in zips.items()}
    assert names["ada"] == names["bo"] == names["cy"]
    assert all(n.startswith("self_attention/") for n in names["ada"])
    own = {n for n in names["ada"] if n.split("/", 1)[1].startswith(("hand_computation.", "check_data/"))}
    shared = [n for n in names["ada"] if n not in own]
    assert {n.split("/", 1)[1] for n in shared} >= {"check.py", "README.md", "attention.py", *MODULES}
    for name in shared:      # the very same compressed bytes at the same place in every zip: zipped once
        infos = [zf.getinfo(name) for zf in zips.values()]
        spans = {raw[s][i.header_offset:i.header_offset + 30 + len(name) + i.compress_size]
                 for s, i in zip(zips, infos)}
        assert len(spans) == 1, name
    for name in own - {"self_attention/hand_computation.ipynb"}:
        if name.endswith(("hand_computation.py", "index.json", "attention.npz")):
            assert len({zf.read(name) for zf in zips.values()}) == 3, name      # each student's own


def test_a_students_zip_unpacks_into_a_handout_that_checks_their_work_without_the_kit(class_handouts,
                                                                                          kit_free_python, tmp_path):
    from tests.lms_downloads import unzipped_handout

    _, out = class_handouts
    shutil.copy(out / "bo.zip", tmp_path / "bo.zip")
    folder = unzipped_handout(tmp_path, "bo")
    assert json.loads((folder / "check_data" / "index.json").read_text())["student"] == "bo"
    _copy_in(folder, {p.name: p for p in (KIT_ROOT / "solutions").glob("*.py")})
    done = _run(kit_free_python, folder)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "all visible checks passed" in done.stdout


def test_the_class_handouts_bar_counts_each_student_on_a_terminal():
    import io

    from rich.console import Console

    from autograder.frontends.progress import counting_bar

    shown = io.StringIO()
    with counting_bar(Console(file=shown, force_terminal=True, width=120), "handouts", 3) as advance:
        for student in ("ada", "bo", "cy"):
            advance(student)
    drawn = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", shown.getvalue())
    assert "handouts" in drawn and "0/3" in drawn and re.search(r"3/3 .* cy", drawn), drawn
    quiet = io.StringIO()
    with counting_bar(Console(file=quiet, force_terminal=False), "handouts", 3) as advance:
        advance("ada")
    assert quiet.getvalue() == ""          # a pipe or a log gets no bar
