"""Does the handout's check.py, run without the kit, agree with `attnkit grade` on student folders?

For the given student folders this builds a handout, makes (or reuses) a virtual environment that
has numpy, matplotlib and torch but not the kit, runs the handout's `python check.py --json` on each
folder as a student would (the folder's files copied into a fresh copy of the handout), grades the
same folders with `attnkit grade`, and prints every visible check whose status, score or hint
differs. The hand computation's checks are listed apart: check.py sees only whether the answers are
consistent, the grader grades their values, so they are not a code check. So are the checks check.py
says wait on another exercise (status "blocked": they called the student's own attention, say,
which does not pass its checks, where the grader gives a correct one): such a check is an explained
difference only when check.py, run again with the kit's solution in place of that exercise, gives
the grader's verdict on it; else it is a code-check difference.

Exit status: 0 when no visible code check differs, 1 when one does, 2 when the run itself failed.
"""
from __future__ import annotations

import argparse
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

EXERCISE_SUFFIXES = (".py", ".ipynb")
HAND_EXERCISE = "hand_computation"
COMPARED_FIELDS = ("status", "score", "hint")
BLOCKED = "blocked"          # check.py: the check waits on another exercise of the student's (check_siblings.py)
# The kit this interpreter imports, not whichever `attnkit` comes first on PATH.
ATTNKIT = [sys.executable, "-m", "autograder.cli"]


class RunFailed(Exception):
    """A step of the comparison itself failed (not a difference between the two)."""


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description="Compare the handout's check.py (run without the kit) with `attnkit grade` "
                    "on student folders, visible check by visible check.",
        epilog="example: python scripts/handout_agreement.py --venv ~/.cache/nokit students/*/")
    parser.add_argument("folders", nargs="+", type=Path, metavar="FOLDER",
                        help="a student's folder of exercise files (.py or .ipynb)")
    parser.add_argument("--venv", type=Path, metavar="DIR",
                        help="the kit-free environment: reused if DIR holds one, else created there "
                             "(default: a new one in the work folder, which takes minutes)")
    parser.add_argument("--torch", default="torch", metavar="SPEC",
                        help="what pip installs for torch in a new environment (default: %(default)s), "
                             "e.g. torch==2.13.0")
    parser.add_argument("--work", type=Path, metavar="DIR",
                        help="where the handout, the copies and the results go (default: a temporary "
                             "folder, removed afterwards)")
    parser.add_argument("--timeout", type=float, default=900, metavar="SECONDS",
                        help="longest wait for one folder's check.py (default: %(default)s)")
    args = parser.parse_args(argv)
    missing = [str(f) for f in args.folders if not f.is_dir()]
    if missing:
        parser.error(f"not a folder: {', '.join(missing)}")
    names = [f.resolve().name for f in args.folders]
    if len(set(names)) != len(names):
        parser.error("two folders share a name; the grader names students by their folder's name")
    return args


def run(command: list[str], *, cwd: Path | None = None, timeout: float | None = None,
        env: dict | None = None) -> subprocess.CompletedProcess:
    try:
        return subprocess.run(command, cwd=cwd, env=env, timeout=timeout, capture_output=True, text=True)
    except subprocess.TimeoutExpired as err:
        raise RunFailed(f"`{' '.join(command)}` did not end within {timeout:g} s") from err


def kit_free_python(venv: Path, torch_spec: str) -> Path:
    """The interpreter of a venv with numpy, matplotlib and torch, checked not to see the kit."""
    python = venv / ("Scripts/python.exe" if os.name == "nt" else "bin/python")
    if not python.exists():
        print(f"making a kit-free environment in {venv} (numpy, matplotlib, {torch_spec}) ...", flush=True)
        for command in ([sys.executable, "-m", "venv", str(venv)],
                        [str(python), "-m", "pip", "install", "-q", "numpy", "matplotlib", torch_spec]):
            done = run(command)
            if done.returncode:
                raise RunFailed(f"`{' '.join(command)}` failed:\n{done.stderr.strip()}")
    probe = run([str(python), "-I", "-c", "import autograder"], cwd=venv)
    if probe.returncode == 0:
        raise RunFailed(f"{venv} can import the kit (`autograder`): give an environment without it")
    return python


def handed_in_stems(folder: Path) -> set[str]:
    return {f.stem for f in folder.iterdir() if f.suffix in EXERCISE_SUFFIXES and not f.name.startswith("check")}


def check_py_results(handout: Path, folder: Path, copy: Path, python: Path, timeout: float,
                     correct: dict[str, Path] | None = None, stems: list[str] = ()) -> dict:
    """check.py's per-check results for one folder: {check id: check}, as the student sees them.
    `correct`: exercises whose files are replaced by these correct ones (stem -> a .py file);
    `stems`: check only these exercises."""
    shutil.copytree(handout, copy)
    for item in folder.iterdir():
        if item.is_file():
            shutil.copy2(item, copy / item.name)
    for stem, solution in (correct or {}).items():
        for suffix in EXERCISE_SUFFIXES:
            (copy / f"{stem}{suffix}").unlink(missing_ok=True)
        shutil.copyfile(solution, copy / f"{stem}.py")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV")}
    done = run([str(python), "check.py", *stems, "--json", "check-results.json"], cwd=copy, timeout=timeout, env=env)
    out = copy / "check-results.json"
    if not out.exists():
        last_lines = (done.stderr or done.stdout).strip().splitlines()[-3:]
        raise RunFailed(f"check.py wrote no results (exit {done.returncode}): " + " / ".join(last_lines))
    (copy / "check-output.txt").write_text(done.stdout + done.stderr)
    exercises = json.loads(out.read_text())["exercises"]
    return {check["id"]: dict(check, exercise=stem)
            for stem, exercise in exercises.items() for check in exercise["checks"]}


def grader_results(folders: list[Path], work: Path) -> dict[str, dict]:
    """`attnkit grade`'s visible checks per student: {student: {check id: check}}."""
    class_dir, out = work / "class", work / "graded"
    for folder in folders:
        shutil.copytree(folder, class_dir / folder.resolve().name)
    done = run([*ATTNKIT, "grade", str(class_dir), "--out", str(out), "--layout", "folders"])
    if done.returncode:
        said = (done.stderr or done.stdout).strip()[-2000:]
        raise RunFailed(f"attnkit grade failed (exit {done.returncode}):\n{said}")
    graded = {}
    for folder in folders:
        student = folder.resolve().name
        record = json.loads((out / "results" / f"{student}.json").read_text())
        graded[student] = {check["check_id"]: check
                           for exercise in record["extra_data"]["result"]["exercises"]
                           for check in exercise["checks"] if not check.get("hidden")}
    return graded


def same(field: str, mine, theirs) -> bool:
    if field == "score":
        return abs(float(mine or 0) - float(theirs or 0)) < 1e-9
    return (mine or "").strip() == (theirs or "").strip() if field == "hint" else mine == theirs


def differences(from_check_py: dict, from_grader: dict, stems: set[str]) -> tuple[int, list[tuple[str, str, str]]]:
    """(checks compared, [(check id, field, what each says)]) over the exercises handed in."""
    ids = sorted(i for i in from_check_py.keys() | from_grader.keys() if i.split(".")[0] in stems)
    found = []
    for check_id in ids:
        mine, theirs = from_check_py.get(check_id), from_grader.get(check_id)
        if mine is None or theirs is None:
            found.append((check_id, "presence", "only in " + ("the grader" if mine is None else "check.py")))
            continue
        for field in COMPARED_FIELDS:
            if not same(field, mine.get(field), theirs.get(field)):
                found.append((check_id, field, f"check.py {mine.get(field)!r} | grader {theirs.get(field)!r}"))
    return len(ids), found


def explained_waits(from_check_py: dict, with_correct_siblings: dict, from_grader: dict) -> dict[str, str]:
    """check.py's blocked checks whose verdict, with the kit's solution in place of the exercise they
    wait on, is the grader's: {check id: check.py's reason}."""
    explained = {}
    for check_id, mine in from_check_py.items():
        fixed, theirs = with_correct_siblings.get(check_id), from_grader.get(check_id)
        if mine["status"] == BLOCKED and fixed is not None and theirs is not None and fixed["status"] != BLOCKED \
                and all(same(f, fixed.get(f), theirs.get(f)) for f in COMPARED_FIELDS):
            explained[check_id] = mine.get("message", "")
    return explained


def correct_siblings_results(handout: Path, folder: Path, work: Path, python: Path, timeout: float,
                             mine: dict) -> dict:
    """check.py's results on the exercises that have blocked checks, with the exercises they wait on
    replaced by the kit's solutions ({} when none waits)."""
    from autograder.config.paths import KIT_ROOT

    blocked = [c for c in mine.values() if c["status"] == BLOCKED]
    if not blocked:
        return {}
    correct = {c["waiting_on"]: KIT_ROOT / "solutions" / f"{c['waiting_on']}.py" for c in blocked}
    missing = [str(p) for p in correct.values() if not p.is_file()]
    if missing:
        raise RunFailed(f"no solution to put in place of the exercise a check waits on: {', '.join(missing)}")
    return check_py_results(handout, folder, work / "checked-correct-siblings" / folder.name, python, timeout,
                            correct, sorted({c["exercise"] for c in blocked}))


def compare(args: argparse.Namespace, work: Path) -> int:
    handout = work / "handout"
    made = run([*ATTNKIT, "handout", str(handout)])
    if made.returncode:
        raise RunFailed(f"attnkit handout failed:\n{made.stderr.strip()}")
    python = kit_free_python((args.venv or work / "venv").resolve(), args.torch)
    folders = [f.resolve() for f in args.folders]
    print(f"grading {len(folders)} folder(s) with attnkit grade ...", flush=True)
    graded = grader_results(folders, work)
    compared = code_differences = hand_differences = waits = 0
    for folder in folders:
        stems = handed_in_stems(folder)
        try:
            mine = check_py_results(handout, folder, work / "checked" / folder.name, python, args.timeout)
        except RunFailed as err:
            compared += 1
            code_differences += 1
            print(f"{folder.name}: DIFFERS check.py gave no results, the grader did: {err}")
            continue
        try:
            correct = correct_siblings_results(handout, folder, work, python, args.timeout, mine)
        except RunFailed as err:
            print(f"{folder.name}: check.py with correct siblings gave no results: {err}")
            correct = {}
        explained = explained_waits(mine, correct, graded[folder.name])
        count, found = differences({k: v for k, v in mine.items() if k not in explained},
                                   {k: v for k, v in graded[folder.name].items() if k not in explained}, stems)
        count += len(explained)
        compared += count
        code = [d for d in found if not d[0].startswith(HAND_EXERCISE + ".")]
        hand = [d for d in found if d[0].startswith(HAND_EXERCISE + ".")]
        code_differences += len(code)
        hand_differences += len(hand)
        print(f"{folder.name}: {count} visible checks of {', '.join(sorted(stems)) or 'no exercise'}: "
              f"{len(code) or 'no'} difference(s)")
        for check_id, field, said in code:
            print(f"  DIFFERS {check_id} {field}: {said}")
        for check_id, field, said in hand:
            print(f"  hand computation (values graded after hand-in) {check_id} {field}: {said}")
        for check_id, reason in sorted(explained.items()):
            print(f"  waits on another exercise (with its correct version, the grader's verdict) {check_id}: {reason}")
        waits += len(explained)
    print(f"summary: {len(folders)} folders, {compared} visible checks compared, "
          f"{code_differences} code-check differences, {hand_differences} hand-computation differences, "
          f"{waits} checks waiting on another exercise (explained)")
    return 1 if code_differences else 0


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if importlib.util.find_spec("autograder") is None:
        print("error: run this with the Python that has the kit installed (pip install -e .)", file=sys.stderr)
        return 2
    work = args.work.resolve() if args.work else Path(tempfile.mkdtemp(prefix="handout-agreement-"))
    if args.work and work.exists() and any(work.iterdir()):
        print(f"error: --work {work} is not empty; give a new or empty folder", file=sys.stderr)
        return 2
    around = [str(f) for f in args.folders if work.is_relative_to(f.resolve())]
    if around:
        print(f"error: {', '.join(around)} holds the work folder {work}: copying it there would never end; "
              f"give student folders, or --work elsewhere", file=sys.stderr)
        if not args.work:
            work.rmdir()
        return 2
    work.mkdir(parents=True, exist_ok=True)
    try:
        return compare(args, work)
    except RunFailed as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    finally:
        if not args.work:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
