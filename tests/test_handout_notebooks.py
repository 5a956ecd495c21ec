"""The handout's notebooks, run as a notebook student runs them: `attnkit handout`, then Jupyter
(nbclient, the python3 kernel) in a Python that sees numpy, torch and matplotlib but not the kit.
After each task, the nbgrader release's test cell: it checks the saved notebook with check.py in a
fresh Python, prints the report and ends with the score; it asks for a save when what was run
differs from the saved file."""

from __future__ import annotations

import ast
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from autograder.build.exercises import make_solution
from autograder.checks import check_ids
from autograder.config import KIT_ROOT, load_course

COURSE = load_course(known_checks=check_ids())
PROBE = "import importlib.util\nprint('kit importable:', importlib.util.find_spec('autograder') is not None)"


@pytest.fixture(scope="module")
def handout(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("handout") / "handout"
    done = subprocess.run([sys.executable, "-m", "autograder.cli", "handout", str(out)], capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    return out


def solution_definitions(stem: str) -> dict[str, str]:
    """The solution's top-level functions and classes, by name: what a student types into the stub."""
    text = make_solution((KIT_ROOT / "solutions" / f"{stem}.py").read_text(encoding="utf-8"),
                         f"{stem}.py", stem)
    tree = ast.parse(text)
    return {node.name: ast.get_source_segment(text, node) for node in tree.body
            if isinstance(node, (ast.FunctionDef, ast.ClassDef))}


def worked(notebook: nbformat.NotebookNode, definitions: dict[str, str]) -> nbformat.NotebookNode:
    """The notebook with each stub cell's function replaced by `definitions`' (the others left)."""
    worked = nbformat.from_dict(json.loads(json.dumps(notebook)))
    for cell in worked.cells:
        found = re.match(r"(?:def|class) (\w+)", cell.source.lstrip()) if cell.cell_type == "code" else None
        if found and "NotImplementedError" in cell.source and found.group(1) in definitions:
            cell.source = definitions[found.group(1)]
    return worked


def run_in_jupyter(notebook: nbformat.NotebookNode, folder: Path, python: Path) -> nbformat.NotebookNode:
    """The notebook run by Jupyter's Run All, its kernel in `python`, beside the handout's files."""
    from jupyter_client.manager import KernelManager
    from nbclient import NotebookClient

    ran = nbformat.from_dict(json.loads(json.dumps(notebook)))
    ran.cells.append(nbformat.v4.new_code_cell(PROBE))
    manager = KernelManager(kernel_name="python3")
    manager.kernel_spec.argv[0] = str(python)
    NotebookClient(ran, km=manager, allow_errors=True, timeout=600,
                   resources={"metadata": {"path": str(folder)}}).execute()
    assert "kit importable: False" in printed(ran.cells[-1]), printed(ran.cells[-1])
    return ran


def printed(cell) -> str:
    return "".join(o.get("text", "") for o in cell.get("outputs", []) if o.get("output_type") == "stream")


def cells_checked(ran: nbformat.NotebookNode) -> dict[str, tuple[str, float | None]]:
    """Each test cell's task -> (what it printed, the score it ended with)."""
    found = {}
    for cell in ran.cells:
        task = re.search(r'attnkit_tests\.run\("([^"]+)"\)', cell.source) if cell.cell_type == "code" else None
        if task:
            value = next((o["data"]["text/plain"] for o in cell.outputs if o.get("output_type") == "execute_result"),
                         None)
            found[task.group(1)] = (printed(cell), None if value is None else float(value))
    return found



def visible_points(task: str) -> float:
    from autograder.handout.task_cells import task_table

    return float(sum(COURSE.check(c).points for c in task_table(COURSE)[task]["checks"]))


def test_each_task_of_a_handout_notebook_is_followed_by_its_test_cell(handout):
    for stem in COURSE.exercises:
        cells = nbformat.read(handout / f"{stem}.ipynb", as_version=4).cells
        tasks = [t for c in cells for t in re.findall(r'attnkit_tests\.run\("([^"]+)"\)', c.source)]
        todo = list(dict.fromkeys(t for c in cells if c.cell_type == "code"
                                  for t in re.findall(r"TODO\((\w+\.\w+)\)", c.source)))
        assert tasks == todo, (stem, tasks, todo)
        for cell in cells:
            if "attnkit_tests.run(" in cell.source:
                assert f"Save {stem}.ipynb first" in cell.source and "autograder" not in cell.source


def test_a_worked_notebook_checks_itself_in_jupyter_without_the_kit(handout, kit_free_python, tmp_path,
                                                                    monkeypatch):
    monkeypatch.delenv("PYTHONPATH", raising=False)
    folder = tmp_path / "student"
    shutil.copytree(handout, folder)
    mine = worked(nbformat.read(folder / "attention.ipynb", as_version=4), solution_definitions("attention"))
    nbformat.write(mine, folder / "attention.ipynb")             # saved, as Jupyter saves it
    cells = cells_checked(run_in_jupyter(mine, folder, kit_free_python))
    assert set(cells) == {"attention.softmax", "attention.scaled_dot_product_attention"}, cells
    for task, (said, score) in cells.items():
        assert "attention (attention.ipynb):" in said and "visible checks passed" in said, said
        assert "failed" not in said and "Save attention.ipynb" not in said, said
        assert score == visible_points(task), (task, said)


def test_a_test_cell_asks_for_a_save_when_the_work_run_is_not_saved(handout, kit_free_python, tmp_path,
                                                                    monkeypatch):
    monkeypatch.delenv("PYTHONPATH", raising=False)
    folder = tmp_path / "student"
    shutil.copytree(handout, folder)
    stub = nbformat.read(folder / "attention.ipynb", as_version=4)       # on disk: the untouched stub
    cells = cells_checked(run_in_jupyter(worked(stub, solution_definitions("attention")), folder, kit_free_python))
    said, score = cells["attention.softmax"]
    assert said.startswith("Save attention.ipynb first (Ctrl-S), then run this cell again: your softmax as last "
                           "run here differs from the saved file"), said
    assert "not implemented yet" in said and score == 0.0, said


def run_as_a_student(notebook: nbformat.NotebookNode, folder: Path, python: Path, steps: list[tuple]) -> dict[str, str]:
    """The notebook open in Jupyter, its kernel in `python`, worked cell by cell: each step runs a
    cell ("run", index), saves the notebook as Jupyter saves it, sources, outputs and execution
    counts ("save"), or edits a cell without running it ("edit", index, source). What each test cell
    run printed, by its task, and the score it ended with (the last run of each)."""
    from jupyter_client.manager import KernelManager
    from nbclient import NotebookClient

    mine = nbformat.from_dict(json.loads(json.dumps(notebook)))
    manager = KernelManager(kernel_name="python3")
    manager.kernel_spec.argv[0] = str(python)
    client = NotebookClient(mine, km=manager, allow_errors=True, timeout=600,
                            resources={"metadata": {"path": str(folder)}})
    try:
        with client.setup_kernel():
            for step in steps:
                if step[0] == "run":
                    client.execute_cell(mine.cells[step[1]], step[1])
                elif step[0] == "save":
                    nbformat.write(mine, folder / "attention.ipynb")
                else:
                    mine.cells[step[1]].source = step[2]
    finally:
        manager.shutdown_kernel(now=True)
    return cells_checked(mine)


def _attention_cells(notebook: nbformat.NotebookNode) -> tuple[list[int], int, int]:
    """The code cells' indices, softmax's cell and its test cell."""
    code = [n for n, c in enumerate(notebook.cells) if c.cell_type == "code"]
    work = next(n for n in code if notebook.cells[n].source.startswith("def softmax"))
    test = next(n for n in code if 'attnkit_tests.run("attention.softmax")' in notebook.cells[n].source)
    return code, work, test


# softmax without the max subtracted: it overflows on the stability check
UNSTABLE_SOFTMAX = "def softmax(x, axis=-1):\n    e = np.exp(x)\n    return e / e.sum(axis=axis, keepdims=True)"


def test_a_test_cell_checks_nothing_when_the_work_run_was_not_saved(handout, kit_free_python, tmp_path, monkeypatch):
    """The student ran their notebook and saved it, then changed softmax and ran it, and runs the test
    cell before Jupyter's autosave: the saved file is older than what they ran. The cell says to save
    and grades nothing, not the stale file (whose softmax passes)."""
    monkeypatch.delenv("PYTHONPATH", raising=False)
    folder = tmp_path / "student"
    shutil.copytree(handout, folder)
    mine = worked(nbformat.read(folder / "attention.ipynb", as_version=4), solution_definitions("attention"))
    code, work, test = _attention_cells(mine)
    steps = [("run", n) for n in code if n <= test] + [("save",), ("edit", work, UNSTABLE_SOFTMAX), ("run", work),
                                                       ("run", test)]
    said, score = run_as_a_student(mine, folder, kit_free_python, steps)["attention.softmax"]
    assert said.startswith("Save attention.ipynb first (Ctrl-S), then run this cell again: your softmax as last run "
                           "here is not in the saved file yet, and these tests check the saved file. Nothing was "
                           "checked."), said
    assert "visible checks passed" not in said and score == 0.0, said


def test_a_test_cell_checks_a_cell_edited_and_saved_but_not_run(handout, kit_free_python, tmp_path, monkeypatch):
    """The student ran their notebook, then changed softmax and saved without running it: the saved file
    is the newer. The cell checks it (its softmax overflows) and says to run the cell, not to save."""
    monkeypatch.delenv("PYTHONPATH", raising=False)
    folder = tmp_path / "student"
    shutil.copytree(handout, folder)
    mine = worked(nbformat.read(folder / "attention.ipynb", as_version=4), solution_definitions("attention"))
    code, work, test = _attention_cells(mine)
    steps = [("run", n) for n in code if n < test] + [("edit", work, UNSTABLE_SOFTMAX), ("save",), ("run", test)]
    said, score = run_as_a_student(mine, folder, kit_free_python, steps)["attention.softmax"]
    assert said.startswith("Your softmax in the saved attention.ipynb was changed after it last ran here: these "
                           "tests check the saved file; run its cell to use it here too."), said
    assert "Save attention.ipynb" not in said, said
    assert "wrong attention.softmax.stable" in said and 0 < score < visible_points("attention.softmax"), said


def test_a_test_cell_told_its_notebook_by_jupyter_checks_nothing_unsaved(handout, kit_free_python, tmp_path,
                                                                         monkeypatch):
    """Jupyter Server names a kernel's notebook (JPY_SESSION_NAME, the notebook's path): the student
    worked in the notebook and never saved it (on disk, the untouched stub). The cell says to save and
    grades nothing."""
    monkeypatch.delenv("PYTHONPATH", raising=False)
    folder = tmp_path / "student"
    shutil.copytree(handout, folder)
    monkeypatch.setenv("JPY_SESSION_NAME", str(folder / "attention.ipynb"))
    mine = worked(nbformat.read(folder / "attention.ipynb", as_version=4), solution_definitions("attention"))
    code, _, test = _attention_cells(mine)
    said, score = run_as_a_student(mine, folder, kit_free_python, [("run", n) for n in code if n <= test])[
        "attention.softmax"]
    assert said.startswith("Save attention.ipynb first (Ctrl-S), then run this cell again: your softmax as last run "
                           "here is not in the saved file yet"), said
    assert "not implemented yet" not in said and score == 0.0, said


# ---------------------------------------------------------------- an exercise that imports another

USES_YOUR_SOFTMAX = '''def causal_attention(Q, K, V):
    from attention import softmax
    scores = Q @ np.swapaxes(K, -1, -2) / math.sqrt(Q.shape[-1])
    weights = softmax(np.where(create_causal_mask(Q.shape[-2]), scores, -np.inf))
    return weights @ V, weights'''
SAID = ("causal_mask.ipynb imports softmax from attention.py, which is still the stub; your work is in "
        "attention.ipynb: download it as attention.py")


def test_a_notebook_importing_a_stub_whose_work_is_in_its_notebook_is_told_the_same_everywhere(
        handout, kit_free_python, tmp_path, monkeypatch):
    """attention.ipynb holds the work, attention.py beside it is the untouched stub, and causal_mask.ipynb
    imports softmax from attention: what Jupyter imports is the stub. Jupyter's error, the notebook's
    test cell, check.py and the grader all say so, with the fix."""
    monkeypatch.delenv("PYTHONPATH", raising=False)
    folder = tmp_path / "student"
    shutil.copytree(handout, folder)
    attention = worked(nbformat.read(folder / "attention.ipynb", as_version=4), solution_definitions("attention"))
    nbformat.write(attention, folder / "attention.ipynb")
    causal = worked(nbformat.read(folder / "causal_mask.ipynb", as_version=4),
                    solution_definitions("causal_mask") | {"causal_attention": USES_YOUR_SOFTMAX})
    nbformat.write(causal, folder / "causal_mask.ipynb")
    # Jupyter: the demo that calls causal_attention meets the stub, whose error says where the work must go
    ran = run_in_jupyter(causal, folder, kit_free_python)
    demo = next(printed(c) for c in ran.cells if "causal_attention(Q, K, V)" in c.source and "__main__" in c.source)
    assert ("not implemented yet: attention.softmax: not implemented yet in attention.py; work done in "
            "attention.ipynb is imported only once downloaded as attention.py") in demo, demo
    said, score = cells_checked(ran)["causal_mask.causal_attention"]
    assert SAID in said and score == 0.0, said
    # check.py in a terminal
    done = subprocess.run([str(kit_free_python), "check.py", "causal_mask"], cwd=folder, capture_output=True,
                          text=True, timeout=600)
    assert f"waits: {SAID}" in done.stdout and "Traceback" not in done.stderr, done.stdout + done.stderr
    # the grader, which gives causal_mask a correct attention: full marks, and the same sentence in its note
    class_dir = tmp_path / "class" / "student"
    class_dir.mkdir(parents=True)
    for name in ("attention.py", "attention.ipynb", "causal_mask.ipynb"):
        shutil.copyfile(folder / name, class_dir / name)
    graded = subprocess.run([sys.executable, "-m", "autograder.cli", "grade", str(class_dir.parent), "--out",
                             str(tmp_path / "out"), "--layout", "folders", "--no-preflight"],
                            capture_output=True, text=True, timeout=1200)
    assert graded.returncode == 0, graded.stdout[-2000:] + graded.stderr[-2000:]
    result = json.loads((tmp_path / "out" / "results" / "student.json").read_text())["extra_data"]["result"]
    causal_mask = next(e for e in result["exercises"] if e["stem"] == "causal_mask")
    assert SAID in causal_mask["note"], causal_mask["note"]
    assert all(c["status"] == "passed" for c in causal_mask["checks"]), causal_mask["checks"]
