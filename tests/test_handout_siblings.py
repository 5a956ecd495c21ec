"""An exercise that imports another of the student's (`from attention import ...` in causal_mask):
the grader gives it a correct attention, check.py can only run the student's. A check that does not
pass and called a sibling that does not pass its own checks waits on it ("blocked", no score), said
once; the checks that do not need it are judged as the grader judges them.
Run as a student runs it: a Python that sees numpy, torch and matplotlib but not the kit."""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from autograder.checks import check_ids
from autograder.config import KIT_ROOT, load_course
from autograder.handout import unjailed_siblings
from autograder.handout.write import write_handout

# A hanging function costs each driver its call limit per call: 3 s of CPU time, not the
# course's 10, is still far above what any honest call here takes.
_COURSE = load_course(known_checks=check_ids())
COURSE = dataclasses.replace(_COURSE, limits=dataclasses.replace(_COURSE.limits, call_timeout=3.0))
SOLUTIONS = KIT_ROOT / "solutions"
CORPUS = KIT_ROOT / "tests" / "corpus"

CALLS_ATTENTION = '''

from attention import scaled_dot_product_attention


def causal_attention(Q, K, V):
    return scaled_dot_product_attention(Q, K, V, mask=create_causal_mask(Q.shape[-2]))
'''

CALLS_SOFTMAX = '''

def causal_attention(Q, K, V):
    from attention import softmax
    scores = Q @ np.swapaxes(K, -1, -2) / math.sqrt(Q.shape[-1])
    weights = softmax(np.where(create_causal_mask(Q.shape[-2]), scores, -np.inf))
    return weights @ V, weights
'''

# its own mistake (the future allowed, the diagonal blocked), through a correct attention
CALLS_ATTENTION_WITH_WRONG_MASK = '''

from attention import scaled_dot_product_attention


def causal_attention(Q, K, V):
    return scaled_dot_product_attention(Q, K, V, mask=np.triu(np.ones((Q.shape[-2],) * 2)))
'''


HANGS = '''def softmax(x, axis=-1):
    while True:
        pass'''


def _cases() -> dict[str, dict[str, str]]:
    attention, causal = (SOLUTIONS / "attention.py").read_text(), (SOLUTIONS / "causal_mask.py").read_text()
    return {
        "attention does not compile": {"attention.py": attention + "\n\ndef unfinished(x:\n",
                                       "causal_mask.py": causal + CALLS_ATTENTION},
        "attention is the stub": {"causal_mask.py": causal + CALLS_SOFTMAX},
        "attention's softmax hangs": {"attention.py": attention.replace("def softmax(", HANGS + "\n\ndef _softmax(", 1),
                                      "causal_mask.py": causal + CALLS_SOFTMAX},
        "attention wrong, not called": {
            "attention.py": (CORPUS / "attention/buggy/softmax_wrong_axis.py").read_text(),
            "causal_mask.py": (CORPUS / "causal_mask/buggy/mask_after_softmax.py").read_text()},
        "attention right, called": {"attention.py": attention, "causal_mask.py": causal + CALLS_ATTENTION_WITH_WRONG_MASK},
    }


@pytest.fixture(scope="module")
def folders(tmp_path_factory) -> dict[str, Path]:
    handout = tmp_path_factory.mktemp("handout") / "handout"
    write_handout(handout, COURSE)
    made = {}
    for name, files in _cases().items():
        folder = tmp_path_factory.mktemp("students") / name
        shutil.copytree(handout, folder)
        for filename, text in files.items():
            (folder / filename).write_text(text, encoding="utf-8")
        made[name] = folder
    return made


def _check_py(python, folder: Path) -> tuple[dict, str]:
    """causal_mask's checks from `python check.py causal_mask --json` ({id: check}), and what it printed."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    done = subprocess.run([str(python), "check.py", "causal_mask", "--json", "results.json"], cwd=folder,
                          capture_output=True, text=True, timeout=900, env=env)
    assert done.returncode in (0, 1) and "Traceback" not in done.stdout + done.stderr, done.stdout + done.stderr
    checks = json.loads((folder / "results.json").read_text())["exercises"]["causal_mask"]["checks"]
    return {c["id"]: c for c in checks}, done.stdout


def _grader(folder: Path) -> dict[str, tuple[str, float]]:
    from autograder.grading.course_session import GradingSession

    with GradingSession(COURSE) as session:      # causal_mask alone: it is given a correct attention
        result = session.grade(folder, stems=("causal_mask",))
    return {c.check_id: (c.status, c.score) for e in result.exercises if e.stem == "causal_mask"
            for c in e.checks if not c.hidden}


def _split(mine: dict) -> tuple[set, set]:
    waiting = {i for i, c in mine.items() if c["status"] == "blocked"}
    return waiting, set(mine) - waiting


@pytest.mark.parametrize("case, reason_says", [
    ("attention does not compile", ("attention.py", "syntax error at line", "fix attention.py first")),
    ("attention is the stub", ("causal_attention calls your attention.py's softmax", "not implemented yet")),
    ("attention's softmax hangs", ("causal_attention calls your attention.py's softmax",
                                   "not pass attention's own checks")),
])
def test_checks_that_call_an_attention_that_fails_wait_on_it(case, reason_says, folders, kit_free_python):
    folder = folders[case]
    mine, printed = _check_py(kit_free_python, folder)
    graders = _grader(folder)
    waiting, judged = _split(mine)
    assert waiting == {i for i in mine if i.startswith("causal_mask.causal_attention.")} != set(), mine
    assert all(mine[i]["score"] is None and mine[i]["waiting_on"] == "attention" for i in waiting)
    assert all(graders[i][0] == "passed" for i in waiting), graders        # the grader's attention is correct
    # a broken attention.py does not stop the mask's own checks: judged as the grader judges them
    assert {i: (mine[i]["status"], mine[i]["score"]) for i in judged} == {i: graders[i] for i in judged}
    assert all(mine[i]["status"] == "passed" for i in judged), mine
    reason = mine[next(iter(waiting))]["message"]
    assert all(words in reason for words in reason_says), reason
    assert printed.count(reason) == 1, printed                               # said once, not per check
    assert "points not decided" in printed, printed


@pytest.mark.parametrize("case", ["attention wrong, not called", "attention right, called"])
def test_a_mistake_of_the_exercise_itself_is_judged_as_the_grader_judges_it(case, folders, kit_free_python):
    """Not waiting: the failing checks did not call attention, or attention passes its checks."""
    folder = folders[case]
    mine, _ = _check_py(kit_free_python, folder)
    graders = _grader(folder)
    assert {i: (c["status"], c["score"]) for i, c in mine.items()} == graders
    assert any(status == "failed" for status, _ in graders.values()), graders


# ---------------------------------------------------------------- the rule, without a child

def _outcome(check_id: str, status: str, function: str = "causal_attention"):
    from autograder.judge.answers import Outcome

    return Outcome({"id": check_id, "points": 1, "calls": [{"name": function}]}, status, "its own message", "a hint")


def _called(problem=None) -> dict:
    return {"attention": {"file": "attention.py", "functions": ["scaled_dot_product_attention"], "problem": problem}}


def test_a_sibling_that_passes_its_checks_is_trusted_and_checked_once():
    asked = []

    def check_sibling(stem):
        asked.append(stem)
        return [_outcome("attention.softmax.rows", "passed")], {}

    checked = {"causal_mask": ([_outcome("causal_mask.causal_attention.weights", "failed"),
                                _outcome("causal_mask.causal_attention.output", "error")],
                               {"called": {"causal_mask.causal_attention.weights": _called(),
                                           "causal_mask.causal_attention.output": _called()}})}
    settled = unjailed_siblings.wait_on_siblings(checked, check_sibling)
    assert [o.status for o in settled["causal_mask"][0]] == ["failed", "error"]
    assert asked == ["attention"]


def test_only_the_checks_that_called_a_failing_sibling_wait():
    checked = {
        "attention": ([_outcome("attention.softmax.rows", "failed", "softmax"),
                       _outcome("attention.softmax.axis", "passed", "softmax")], {}),
        "causal_mask": ([_outcome("causal_mask.causal_attention.weights", "failed"),
                         _outcome("causal_mask.causal_attention.output", "passed"),
                         _outcome("causal_mask.create_causal_mask.values", "failed", "create_causal_mask")],
                        {"called": {"causal_mask.causal_attention.weights": _called(),
                                    "causal_mask.causal_attention.output": _called()}})}
    settled = unjailed_siblings.wait_on_siblings(checked, lambda stem: pytest.fail("checked already"))
    weights, output, mask = settled["causal_mask"][0]
    assert (weights.status, weights.hint, weights.waiting_on) == ("blocked", "", "attention")
    assert weights.message == ("causal_attention calls your attention.py's scaled_dot_product_attention, which "
                               "does not pass attention's own checks yet (1 of its 2 visible checks does not pass); "
                               "the grader checks causal_mask with a correct attention: fix attention.py first")
    assert (output.status, mask.status) == ("passed", "failed")


def test_a_sibling_that_cannot_be_imported_is_named_with_its_problem():
    checked = {"causal_mask": ([_outcome("causal_mask.causal_attention.weights", "error")],
                               {"called": {"causal_mask.causal_attention.weights": _called(
                                   "attention.py has a syntax error at line 12 (invalid syntax)")}})}
    settled = unjailed_siblings.wait_on_siblings(checked, lambda stem: pytest.fail("no need to check it"))
    (waiting,), _ = settled["causal_mask"]
    assert waiting.status == "blocked"
    assert "which cannot be used yet: attention.py has a syntax error at line 12" in waiting.message


def test_watch_checks_the_exercise_that_calls_a_saved_one_again(folders, kit_free_python, tmp_path):
    """`check.py --watch`: saving a fixed attention.py checks attention again, and causal_mask too,
    whose checks waited on it; each run says its time and the file it checked."""
    import queue
    import re
    import threading

    folder = tmp_path / "student"
    shutil.copytree(folders["attention is the stub"], folder)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    proc = subprocess.Popen([str(kit_free_python), "check.py", "attention", "causal_mask", "--watch"], cwd=folder,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
    lines: queue.Queue = queue.Queue()
    threading.Thread(target=lambda: [lines.put(line) for line in proc.stdout], daemon=True).start()
    printed: list[str] = []

    def until(pattern: str) -> None:
        """Read on until a line matches `pattern`, after the lines an earlier call matched."""
        start = len(printed)
        while not any(re.search(pattern, line) for line in printed[start:]):
            try:
                printed.append(lines.get(timeout=120))
            except queue.Empty:
                pytest.fail(f"no {pattern!r} in:\n" + "".join(printed))

    try:
        until(r"^watching ")
        assert any("wait on attention" in line for line in printed), "".join(printed)
        (folder / "attention.py").write_text((SOLUTIONS / "attention.py").read_text(), encoding="utf-8")
        until(r"^--- \d\d:\d\d:\d\d: causal_mask, checked from causal_mask\.py \(it calls attention, saved\)")
        until(r"^causal_mask \(causal_mask\.py\): ")
    finally:
        proc.kill()
        proc.wait()
    after = "".join(printed).split("\nwatching ", 1)[1]
    assert re.search(r"--- \d\d:\d\d:\d\d: attention, checked from attention\.py\n", after), after
    assert re.search(r"attention \(attention\.py\): 11/11 visible checks passed", after), after
    mask = after.split(": causal_mask, checked from", 1)[1]
    assert re.search(r"causal_mask \(causal_mask\.py\): (\d+)/\1 visible checks passed", mask), mask
    assert "wait on" not in mask, mask
