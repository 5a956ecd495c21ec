"""`attnkit check` starts the children it will wait for (its zygotes, the parse helper) before it
imports its checks, and grades in those same children: a zygote started early is the one its
Sandbox uses, never a second of the same kind; one a course's limits do not match is replaced."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from autograder.config.limits import Limits
from autograder.sandbox import zygotes
from autograder.sandbox.zygotes import Zygotes, start_early

KIT = Path(__file__).resolve().parents[1]

# Runs `attnkit check ARGS` in a fresh interpreter, noting for each zygote and helper started
# whether the checks were imported yet, and the check's exit code.
WATCHED = """
import json, sys
from autograder.sandbox import helper_process, zygote_process
events = []
real_zygote, real_running = zygote_process._Zygote.__init__, helper_process.Helper._running
def zygote(self, config):
    events.append(["zygote", config["torch"], config["matplotlib"], "autograder.checks" in sys.modules])
    real_zygote(self, config)
def running(self):
    if self._proc is None:
        events.append(["helper", self.module, None, "autograder.checks" in sys.modules])
    return real_running(self)
zygote_process._Zygote.__init__, helper_process.Helper._running = zygote, running
from autograder import cli
code = cli.main(sys.argv[1:])
print("EVENTS " + json.dumps({"code": code, "events": events}))
"""


def check_events(*args: str) -> dict:
    done = subprocess.run([sys.executable, "-c", WATCHED, "check", *args], cwd=KIT, capture_output=True, text=True,
                          timeout=600)
    line = next((x for x in done.stdout.splitlines() if x.startswith("EVENTS ")), None)
    assert line is not None, done.stdout[-2000:] + done.stderr[-2000:]
    return json.loads(line.removeprefix("EVENTS "))


def test_one_numpy_exercise_starts_its_zygote_and_reader_before_the_checks_are_imported():
    seen = check_events("--submission", "solutions", "--exercise", "attention")
    assert seen["code"] == 0
    assert sorted(map(tuple, seen["events"])) == [
        ("helper", "autograder.intake.parse_helper", None, False), ("zygote", False, False, False)]


def test_all_five_start_each_zygote_once_before_the_checks_are_imported():
    """The stubs say which zygotes: numpy (attention, causal_mask), matplotlib (scaling), torch
    (multihead); the hand computation's literals need none. Each starts once, early, and is used."""
    seen = check_events("--submission", "solutions")
    assert seen["code"] == 0
    zygotes_started = sorted(tuple(e[1:]) for e in seen["events"] if e[0] == "zygote")
    assert zygotes_started == [(False, False, False), (False, True, False), (True, False, False)]


def test_an_early_zygote_is_taken_by_the_sandbox_that_asks_for_it():
    start_early(Limits(), [(False, False)])
    early = zygotes._EARLY[(False, False)]
    box = Zygotes(Limits(), startup_timeout=120)
    try:
        assert box.get((False, False)) is early
        assert (False, False) not in zygotes._EARLY
    finally:
        box.close()


def test_an_early_zygote_of_other_limits_is_replaced_and_ended():
    start_early(Limits(), [(False, False)])
    early = zygotes._EARLY[(False, False)]
    box = Zygotes(Limits(tmp_mb=128), startup_timeout=120)
    try:
        taken = box.get((False, False))
        assert taken is not early and taken.config["tmp_mb"] == 128
        assert early.dead and early.proc.poll() is not None
    finally:
        box.close()
