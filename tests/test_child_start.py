"""How a child starts: forked by the zygote, placed in its cgroup before its worker runs, under
its own init (pid 1 of its namespaces); a fork that failed is asked for once more."""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
import time
from pathlib import Path

from autograder.sandbox import Sandbox

SOURCE = "import os\n\ndef pid():\n    return os.getpid()\n"


def _pid_inside(pid: int) -> int:
    """The process's pid in its own (innermost) PID namespace."""
    with open(f"/proc/{pid}/status") as f:
        return int(next(line for line in f if line.startswith("NSpid:")).split()[-1])


def _descendants(pid: int) -> list[int]:
    found, todo = [], [pid]
    while todo:
        parent = todo.pop()
        try:
            with open(f"/proc/{parent}/task/{parent}/children") as f:
                kids = [int(k) for k in f.read().split()]
        except OSError:
            kids = []
        found += kids
        todo += kids
    return found


def test_each_child_runs_under_its_own_init_and_its_signal_is_reported(course):
    """The zygote clones each child into namespaces of its own, its init: the student's code runs
    as pid 2 under pid 1 of its own namespace, and a worker killed by a signal is reported as that
    signal."""
    source = ("import os, signal\nimport numpy as np\n"
              "def where():\n    return np.array([os.getpid(), os.getppid()])\n"
              "def die():\n    os.kill(os.getpid(), signal.SIGTERM)\n")
    with Sandbox(course.limits) as sandbox:
        with sandbox.session("attention", source, "attention.py") as session:
            answer = session.call("where", [], {}, returns="array")
            if not sandbox.isolation.pid_namespace:
                return        # no jail here: test_without_a_jail_... covers it
            assert answer.status == "ok" and list(answer.value) == [2, 1]
            died = session.call("die", [], {}, returns="array")
            assert died.status == "crashed" and "signal 15" in died.message, died


def test_without_a_jail_the_zygote_forks_the_worker_itself_and_its_signal_is_still_reported(course):
    """No jail (root, privileges kept): no namespaces, no init -- the process the zygote made runs
    the student's code, and its death by a signal is said as that signal, as under an init."""
    if os.geteuid() != 0:
        return           # a normal user's zygote is always jailed
    source = ("import os, signal\n"
              "def where():\n    return [os.getpid(), os.getppid()]\n"
              "def die():\n    os.kill(os.getpid(), signal.SIGTERM)\n")
    limits = dataclasses.replace(course.limits, drop_privileges=False)
    with Sandbox(limits) as sandbox, sandbox.session("attention", source, "attention.py") as session:
        answer = session.call("where", [], {}, returns="array")
        assert answer.status == "ok", answer
        child = session._child
        assert not child.init and list(answer.value) == [child.pid, child.zygote.pid]
        died = session.call("die", [], {}, returns="array")
        assert died.status == "crashed" and "signal 15" in died.message, died


def test_a_child_is_cloned_with_the_older_call_where_clone3_is_refused(tmp_path):
    """Where a seccomp profile hides clone3 (it answers ENOSYS), the child is made with clone:
    it runs, exits with its own code, and its fork hooks ran as os.fork's do."""
    import autograder.sandbox.inside as inside

    script = tmp_path / "clone.py"
    script.write_text(
        "import importlib.util, os, sys\n"
        f"spec = importlib.util.spec_from_file_location('kernel', {str(Path(inside.__file__).parent / 'kernel.py')!r})\n"
        "kernel = importlib.util.module_from_spec(spec)\nspec.loader.exec_module(kernel)\n"
        "kernel._SYS_CLONE3 = 100000        # no such call: ENOSYS, as the profile answers\n"
        "os.register_at_fork(after_in_child=lambda: os.write(1, b'hook ran\\n'))\n"
        "pid = kernel.fork_into(0)\n"
        "if pid == 0:\n    os.write(1, b'child %d\\n' % os.getppid())\n    os._exit(7)\n"
        "print('parent', os.getpid(), os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]), flush=True)\n")
    import platform

    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=60)
    if platform.machine() not in ("x86_64", "aarch64", "arm64"):
        assert done.returncode != 0 and "clone" in done.stderr
        return
    assert done.returncode == 0, done.stderr
    lines = done.stdout.split("\n")
    parent = lines[-2].split()
    assert parent[0] == "parent" and parent[2] == "7", done.stdout
    assert "hook ran" in lines and f"child {parent[1]}" in lines, done.stdout


def _in_group(child) -> bool:
    """Whether the child's first process and every process under it are listed in its cgroup."""
    listed = set(child.cgroup.pids())
    return bool(listed) and {child.pid, *_descendants(child.pid)} <= listed


def test_every_child_is_in_its_cgroup_before_its_worker_starts(course):
    """The zygote writes each new child into its cgroup before the child's gate opens: the worker
    the child forks is born there."""
    with Sandbox(course.limits) as sandbox:
        if sandbox.cgroups is None or not sandbox.isolation.full:
            return
        for _ in range(3):
            with sandbox.session("attention", SOURCE, "attention.py") as s:
                assert s.call("pid", returns="array").status == "ok"
                assert s._child.started and _in_group(s._child)


def test_where_the_zygote_cannot_place_a_child_the_grader_does(course, monkeypatch):
    """A move the kernel refuses to the zygote (a kernel that checks the writer, not the opener)
    leaves the child's gate shut: it runs nothing until the grader has placed it and said "go"."""
    from autograder.sandbox.cgroups import ChildCgroup

    # /dev/full refuses every write: the zygote's move fails as a refused one would
    monkeypatch.setattr(ChildCgroup, "procs_files", lambda self: [os.open("/dev/full", os.O_WRONLY)])
    with Sandbox(course.limits) as sandbox:
        if sandbox.cgroups is None or not sandbox.isolation.full:
            return
        z = sandbox.zygotes.get((False, False))
        child = sandbox._fork(z)
        pid, placed = z.fork_answer(child.fork_request)
        assert placed is False
        time.sleep(0.3)
        assert not _descendants(pid)              # shut: no worker, no jail, nothing of its own
        child.fork_request = None                 # answered above: now as _settle does with it
        child.pid = pid
        assert child.cgroup.add(pid)
        z.go(pid)
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and not _descendants(pid):
            time.sleep(0.01)
        assert _descendants(pid) and _in_group(child)
        sandbox.discard(child)
        with sandbox.session("attention", SOURCE, "attention.py") as s:   # _settle's own fallback
            assert s.call("pid", returns="array").status == "ok"
            assert _in_group(s._child)


def test_a_fork_that_failed_is_asked_for_once_more_then_said(course, monkeypatch):
    """The grader reads the zygote's answer to a fork only when it needs it: a fork that failed
    (no memory, no pids left) shows at the import's answer, and the child is asked for once more,
    as a failed fork always was; twice failed, the import says the sandbox could not start it."""
    from autograder.sandbox.zygote_process import _Zygote, _ZygoteDied

    answer = _Zygote.fork_answer
    for failures, status in ((1, "ok"), (2, "crashed")):
        left = [failures]

        def failing(self, request, timeout=30.0):
            if left[0] and timeout > 0:
                left[0] -= 1
                answer(self, request, timeout)        # the child exists; as far as the grader knows, not
                raise _ZygoteDied("fork failed: [Errno 11] Resource temporarily unavailable")
            return answer(self, request, timeout)

        monkeypatch.setattr(_Zygote, "fork_answer", failing)
        with Sandbox(course.limits) as sandbox:
            with sandbox.session("attention", SOURCE, "attention.py") as s:
                outcome = s.import_outcome
                assert outcome.status == ("ok" if status == "ok" else "not_run"), outcome
                if status == "ok":
                    assert s.call("pid", returns="array").status == "ok"
                else:
                    assert "the sandbox could not start a process (fork failed" in outcome.message, outcome
                    assert outcome.reason == "sandbox"


def test_a_torch_module_is_built_in_its_child_without_reading_a_file(course):
    """Around the student's code, a child reads no file: building their module seeds torch's CPU
    generator alone (torch.manual_seed would format a stack for CUDA and XPU and so read the source
    of every frame, in every new child). The student's own audit hook sees every open."""
    source = ("import sys\nimport numpy as np\nimport torch\nfrom torch import nn\n\nOPENED = []\n\n\n"
              "def _record(event, args):\n"
              "    if event == 'open' and isinstance(args[0], str):\n        OPENED.append(args[0])\n\n\n"
              "sys.addaudithook(_record)\n\n\n"
              "class Tiny(nn.Module):\n    def __init__(self, d):\n        super().__init__()\n"
              "        self.W_q = nn.Linear(d, d)\n\n    def forward(self, x, mask=None):\n"
              "        return self.W_q(x), x\n\n\n"
              "def opened():\n    return np.array([float(len(OPENED))])\n")
    import numpy as np

    x = np.ones((1, 2, 3), dtype=np.float32)
    with Sandbox(course.limits) as sandbox, sandbox.session("multihead", source, "multihead.py") as s:
        for _ in range(2):
            built = s.call_module("Tiny", init_args=[3], forward_args=[x], returns=("tuple", "array", "array"))
            assert built.status == "ok", built
        count = s.call("opened", [], {}, returns="array")
    assert count.status == "ok", count
    assert count.value.tolist() == [0.0]


def test_a_childs_start_imports_nothing_after_the_fork():
    """What a child's init runs before the worker was imported by the zygote, before any fork: an
    import in one of its functions would load a module from disk in every child."""
    import ast
    from pathlib import Path

    import autograder.sandbox.inside as inside

    tree = ast.parse((Path(inside.__file__).parent / "start.py").read_text(encoding="utf-8"))
    late = [ast.unparse(node) for function in ast.walk(tree) if isinstance(function, ast.FunctionDef)
            for node in ast.walk(function) if isinstance(node, (ast.Import, ast.ImportFrom))]
    assert late == []
