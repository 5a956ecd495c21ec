"""Red team: hostile submissions, written as a student would, against the jail.

Each test is one attack class. Where the jail cannot be built here (no user namespaces),
the tests that need it skip and say why; `attnkit grade` refuses to run there anyway.
Run as root in CI and as a normal user through scripts/normal_user_env.sh.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

from autograder.sandbox import Limits, Reason, Sandbox

LIMITS = Limits(call_timeout=2.0, import_timeout=5.0, memory_mb=512, cpu_seconds=30, max_processes=32,
                output_kb=256)
KIT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def src(text: str) -> str:
    return textwrap.dedent(text).lstrip("\n")


REQUIRES_JAIL = True     # tests/conftest.py's `sandbox` skips where the jail cannot be built


@pytest.fixture(scope="module", autouse=True)
def secret_in_the_graders_environment():
    """Set before the module's sandbox starts (autouse fixtures come first in their scope), so
    its zygotes start from an environment holding the secret a submission must not see."""
    os.environ["ATTNKIT_REDTEAM_SECRET"] = "signing-key-0123456789"


def call(sandbox, code, function, *args, timeout=None, stem="attention", provided=None):
    with sandbox.session(stem, src(code), f"{stem}.py", provided=provided) as s:
        assert s.import_outcome.status == "ok", s.import_outcome
        return s.call(function, list(args), timeout=timeout)


def pid_namespace(pid: int) -> str | None:
    try:
        return os.readlink(f"/proc/{pid}/ns/pid")
    except OSError:
        return None


# ====================================================================== reading what is not theirs

READER = """
import os

def probe(paths):
    seen = []
    for p in paths.split("|"):
        try:
            if os.path.isdir(p):
                os.listdir(p)
            else:
                open(p, "rb").read(1)
            seen.append(1.0)
        except OSError:
            seen.append(0.0)
    return seen
"""


def test_nothing_of_the_kit_the_class_or_the_grader_is_in_view(sandbox, tmp_path):
    other = tmp_path / "other_student" / "attention.py"
    other.parent.mkdir()
    other.write_text("SECRET = 1\n")
    out_dir = tmp_path / "OUT"
    out_dir.mkdir()
    (out_dir / "key").write_text("k")
    paths = [os.path.join(KIT, "reference", "attention.py"), os.path.join(KIT, "solutions", "attention.py"),
             os.path.join(KIT, "autograder", "grading", "submission.py"), str(other), str(out_dir / "key"),
             f"/proc/{os.getpid()}/environ", f"/proc/{os.getpid()}/mem", f"/proc/{os.getpid()}/cmdline",
             os.path.expanduser("~/.bash_history"), "/etc/shadow"]
    assert all(os.path.exists(p) for p in paths[:5])
    out = call(sandbox, READER, "probe", "|".join(paths))
    assert out.status == "ok", out
    assert dict(zip(paths, out.value.tolist())) == dict.fromkeys(paths, 0.0)


# One student's submission in nbgrader's shared exchange, as `nbgrader submit` leaves it.
EXCHANGE_SUBMISSION = "redteam_course/inbound/bob+ps1+2026-03-02 20:00:00.000000 UTC+redteam"


@pytest.fixture
def shared_exchange():
    """nbgrader's shared exchange where its docs put it, holding a submission in inbound/ (with
    nbgrader's modes): made here as root where there is none, and removed after; for a normal
    user, scripts/normal_user_env.sh makes it beforehand, owned by that user, as an instructor's
    own exchange is."""
    import shutil
    from pathlib import Path

    from autograder.nbgrader.shared_machine import NBGRADER_EXCHANGE

    exchange = Path(NBGRADER_EXCHANGE)
    entry = exchange / EXCHANGE_SUBMISSION
    made = None
    if not entry.exists():
        made = next(p for p in [*reversed(entry.parents), entry] if not p.exists())
        try:
            entry.mkdir(parents=True)
        except PermissionError:
            pytest.skip(f"{NBGRADER_EXCHANGE} cannot be made here (not root); scripts/normal_user_env.sh "
                        f"makes one for its user")
        (entry / "attention.ipynb").write_text('{"cells": []}')
        for folder, mode in ((exchange, 0o777), (entry.parent, 0o733), (entry, 0o755)):
            folder.chmod(mode)
    try:
        yield entry
    finally:
        if made is not None:
            shutil.rmtree(made, ignore_errors=True)


LOOKER = """
import os

def look(paths, allowed):
    seen = []
    for p, names in zip(paths.split("|"), allowed.split("|")):
        try:
            if os.path.isdir(p):
                seen.append(float(len(set(os.listdir(p)) - set(names.split(",")))))
            else:
                seen.append(float(os.path.exists(p)))
        except OSError:
            seen.append(0.0)
    return seen
"""


def on_the_way_to_the_interpreter(folder: str) -> set[str]:
    """The names in `folder` a child may see: the first step from it towards the interpreter's own
    prefixes (a venv or pyenv under a home shows its home holding that one name)."""
    names = set()
    for prefix in {os.path.realpath(p) for p in (sys.prefix, sys.base_prefix)}:
        if prefix.startswith(folder.rstrip("/") + "/"):
            names.add(os.path.relpath(prefix, folder).split(os.sep)[0])
    return names


def test_a_shared_exchange_the_homes_and_the_class_folder_are_not_in_view(sandbox, tmp_path, shared_exchange):
    """The jail shows a child the interpreter and its libraries, not /usr as a whole: nbgrader's
    exchange (every student's submission in inbound/), the homes (the grader's own, whoever runs
    it), /root and the class folder are not there, or hold nothing but the way to the interpreter."""
    import pwd

    classmate = tmp_path / "class" / "bob"
    classmate.mkdir(parents=True)
    (classmate / "attention.py").write_text("SECRET = 1\n")
    exchange = shared_exchange.parents[2]
    paths = [str(exchange), str(exchange.parent), str(shared_exchange), str(shared_exchange / "attention.ipynb"),
             "/home", "/root", os.path.expanduser("~"), pwd.getpwuid(os.getuid()).pw_dir, "/srv",
             str(classmate.parent), str(classmate / "attention.py")]
    assert os.path.exists(shared_exchange) and os.path.exists(classmate)
    allowed = [",".join(sorted(on_the_way_to_the_interpreter(os.path.realpath(p)))) for p in paths]
    out = call(sandbox, LOOKER, "look", "|".join(paths), "|".join(allowed))
    assert out.status == "ok", out
    assert dict(zip(paths, out.value.tolist())) == dict.fromkeys(paths, 0.0)


def test_of_the_shared_data_folders_a_submission_sees_fonts_and_time_zones_only(sandbox):
    """/usr/share and /usr/local/share hold nbgrader's exchange, Jupyter's files and whatever a site
    installs there: a child sees the fonts, fontconfig's rules and the time zones (and Debian's
    matplotlib data, where matplotlib is Debian's), nothing else."""
    code = """
    import os

    EXPECTED = {"fonts", "fontconfig", "zoneinfo", "matplotlib"}

    def shared():
        found = []
        for folder in ("/usr/share", "/usr/local/share"):
            try:
                found.append(float(len(set(os.listdir(folder)) - EXPECTED)))
            except OSError:
                found.append(0.0)
        return found
    """
    out = call(sandbox, code, "shared")
    assert out.status == "ok", out
    assert out.value.tolist() == [0.0, 0.0]


def test_numpy_torch_matplotlib_fonts_and_time_zones_work_in_the_jail(sandbox):
    """What honest code uses of the system still works with only the interpreter's needs bound:
    numpy's linear algebra, torch's autograd, matplotlib drawing text (a font file read) to a PNG,
    the time zone database."""
    code = """
    import io
    import zoneinfo

    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib import font_manager
    import numpy as np
    import torch

    def works():
        a = np.linalg.inv(np.array([[2.0, 0.0], [0.0, 4.0]]))
        x = torch.ones(3, requires_grad=True)
        (x * x).sum().backward()
        fig, ax = plt.subplots()
        ax.set_title("softmax(QK^T / sqrt(d))")
        ax.plot([0, 1], [1, 0], label="attention")
        ax.legend()
        png = io.BytesIO()
        fig.savefig(png, format="png")
        plt.close(fig)
        font = font_manager.findfont(font_manager.FontProperties(family="DejaVu Sans"), fallback_to_default=False)
        with open(font, "rb") as f:
            font_bytes = len(f.read(16))
        paris = zoneinfo.ZoneInfo("Europe/Paris")
        return [float(a[1, 1]), float(x.grad.sum()), float(png.getvalue()[:4] == b"\\x89PNG"), float(font_bytes),
                float(paris.key == "Europe/Paris")]
    """
    out = call(sandbox, code, "works", stem="multihead")
    assert out.status == "ok", out
    assert out.value.tolist() == [0.25, 6.0, 1.0, 16.0, 1.0]


def test_the_graders_environment_is_not_the_childs(sandbox):
    code = """
    import os

    def leaked():
        return [float(any("signing-key" in v for v in os.environ.values()))]
    """
    assert call(sandbox, code, "leaked").value.tolist() == [0.0]


def test_only_its_own_processes_are_visible_and_signals_reach_nothing_outside(sandbox):
    code = """
    import ctypes
    import os
    import signal

    def attack(zygote, grader):
        libc = ctypes.CDLL(None, use_errno=True)
        hits = 0
        for pid in (int(zygote), int(grader)):
            try:
                os.kill(pid, signal.SIGKILL)
                hits += 1
            except OSError:
                pass
            if libc.ptrace(16, pid, 0, 0) == 0:      # PTRACE_ATTACH
                hits += 1
        others = [p for p in os.listdir("/proc") if p.isdigit() and int(p) > 2]
        return [hits, len(others)]
    """
    zygote = sandbox.zygotes.any().pid
    out = call(sandbox, code, "attack", zygote, os.getpid())
    assert out.status == "ok", out
    assert out.value.tolist() == [0.0, 0.0]
    assert sandbox.zygotes.any().alive()


def test_no_network(sandbox):
    code = """
    import socket

    def connect():
        try:
            socket.create_connection(("1.1.1.1", 53), timeout=1)
            return [1.0]
        except OSError:
            return [0.0]
    """
    assert call(sandbox, code, "connect").value.tolist() == [0.0]


# ====================================================================== nothing outlives a child

def test_daemons_die_with_the_child(sandbox):
    code = """
    import os
    import time

    def daemonize():
        if os.fork() == 0:
            os.setsid()
            if os.fork() == 0:
                time.sleep(600)
            os._exit(0)
        return [1.0]
    """
    with sandbox.session("attention", src(code), "attention.py") as s:
        assert s.call("daemonize").status == "ok"
        time.sleep(0.2)
        init = s._child.pid
        tree = descendants(init)
        assert len(tree) >= 3, tree            # the init, the worker and the daemon, at least
        ns = pid_namespace(init)               # unreadable as a normal user: the init is not dumpable
        assert ns is None or ns != pid_namespace(os.getpid())
    deadline = time.monotonic() + 5
    while alive(tree) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert alive(tree) == []


def descendants(pid: int) -> list[int]:
    found, todo = [], [pid]
    while todo:
        p = todo.pop()
        found.append(p)
        try:
            with open(f"/proc/{p}/task/{p}/children") as f:
                todo += [int(c) for c in f.read().split()]
        except OSError:
            pass
    return found


def alive(pids: list[int]) -> list[int]:
    out = []
    for p in pids:
        try:
            with open(f"/proc/{p}/stat") as f:
                if f.read().rsplit(")", 1)[1].split()[0] not in ("Z", "X"):
                    out.append(p)
        except OSError:
            pass
    return out


HOST_TEMP = ("/dev/shm", "/var/tmp", "/run/lock", "/tmp")
LITTER_KEY = 0x5EED


def _host_leftovers() -> tuple:
    """What the host's shared temp folders and SysV shared memory hold of a child's litter (the
    file and the segment LITTER makes), not what other tests running meanwhile put there."""
    def ours(folder):
        try:
            return sorted(n for n in os.listdir(folder) if n == "redteam-left-behind")
        except OSError:
            return []

    try:
        with open("/proc/sysvipc/shm") as f:
            shm = sorted(line.split()[1] for line in f.readlines()[1:] if int(line.split()[0]) == LITTER_KEY)
    except OSError:
        shm = []
    return tuple(ours(folder) for folder in HOST_TEMP), shm


LITTER = """
import ctypes
import os

def litter():
    made = 0
    for folder in ("/dev/shm", "/var/tmp", "/run/lock", "/tmp"):
        try:
            with open(os.path.join(folder, "redteam-left-behind"), "w") as f:
                f.write("x" * 1000)
            made += 1
        except OSError:
            pass
    libc = ctypes.CDLL(None, use_errno=True)
    shmid = libc.shmget(0x5EED, 1 << 20, 0o1666)      # IPC_CREAT | 0666; LITTER_KEY
    return [made, float(shmid >= 0)]

def read_shared():
    try:
        return [float(open("/dev/shm/redteam-left-behind").read() == "x" * 1000)]
    except OSError:
        return [0.0]
"""


def test_temp_folders_and_shared_memory_leave_nothing_and_carry_nothing(sandbox):
    before = _host_leftovers()
    with sandbox.session("attention", src(LITTER), "attention.py") as s:
        out = s.call("litter")
        assert out.status == "ok" and out.value.tolist() == [4.0, 1.0], out
        # another stem's child, graded at the same time, sees none of it
        with sandbox.session("causal_mask", src(LITTER), "causal_mask.py") as other:
            assert other.call("read_shared").value.tolist() == [0.0]
    assert _host_leftovers() == before


def test_deep_trees_and_many_files_cost_the_grader_nothing(sandbox):
    code = """
    import os

    def deep(n):
        os.chdir("/tmp")
        for _ in range(int(n)):
            os.mkdir("d")
            os.chdir("d")
        os.chmod(".", 0)
        return [1.0]

    def many(n):
        os.mkdir("/tmp/many")
        made = 0
        for i in range(int(n)):
            try:
                open(f"/tmp/many/{i}", "w").close()
                made += 1
            except OSError:
                break
        return [made]
    """
    with sandbox.session("attention", src(code), "attention.py") as s:
        assert s.call("deep", [3000], timeout=20).status == "ok"
        out = s.call("many", [100_000], timeout=30)
        assert out.status == "ok", out
        t0 = time.monotonic()
    print(f"\nclosing a session with a 3000-deep tree and {int(out.value[0])} files: "
          f"{time.monotonic() - t0:.3f} s")
    assert call(sandbox, "def f():\n    return [1.0]\n", "f").status == "ok"


# ====================================================================== budgets

def test_processes_of_a_child_are_capped_together(sandbox):
    # with cgroups: pids.max of the child's cgroup; without: RLIMIT_NPROC in its user namespace
    code = """
    import os
    import time

    def bomb():
        n = 0
        for _ in range(500):
            try:
                if os.fork() == 0:
                    time.sleep(30)
                    os._exit(0)
                n += 1
            except OSError:
                break
        return [n]
    """
    out = call(sandbox, code, "bomb", timeout=20)
    assert out.status == "ok", out
    assert out.value[0] < LIMITS.max_processes


def test_memory_is_capped_for_all_processes_of_a_child_together(sandbox):
    if not sandbox.isolation.cgroups:
        pytest.skip("no cgroups here: RLIMIT_AS per process holds instead")
    code = """
    import os
    import time

    def hog(n, mb):
        kids = []
        for _ in range(int(n)):
            pid = os.fork()
            if pid == 0:
                block = bytearray(int(mb) * 1024 * 1024)
                for i in range(0, len(block), 4096):
                    block[i] = 1
                time.sleep(30)
                os._exit(0)
            kids.append(pid)
        time.sleep(3)
        alive = 0
        for pid in kids:
            done, _ = os.waitpid(pid, os.WNOHANG)
            alive += done == 0
        return [alive]
    """
    out = call(sandbox, code, "hog", 6, 150, timeout=20)    # 900 MB in all, each under 512
    assert out.status != "ok" or out.value[0] * 150 < LIMITS.group_memory_mb, out


def test_a_submission_holds_no_descriptor_but_its_own_four(sandbox):
    """The zygote is handed the child's cgroup.procs files, opened by the grader (as root: writable
    with root's rights); the child inherits them until its gate opens. A student's code looks for
    any descriptor it could write a pid into: it finds /dev/null, its output and its socket only."""
    code = """
    import os
    import stat

    def descriptors():
        found = []
        for fd in range(0, 65536):
            try:
                st = os.fstat(fd)
            except OSError:
                continue
            found.append([fd, st.st_dev, st.st_ino, stat.S_IFMT(st.st_mode)])
        return found
    """
    with sandbox.session("attention", src(code), "attention.py") as s:
        out = s.call("descriptors", timeout=10)
        group = s._child.cgroup
        files = [os.stat(os.path.join(d, "cgroup.procs")) for d in group.dirs.values()] if group is not None else []
    assert out.status == "ok", out
    assert [int(row[0]) for row in out.value] == [0, 1, 2, 3]
    assert not {(int(row[1]), int(row[2])) for row in out.value} & {(f.st_dev, f.st_ino) for f in files}


def test_a_slow_correct_submission_meets_its_budget_and_the_class_moves_on(sandbox):
    code = """
    import time

    def slow(x):
        t = time.process_time()
        while time.process_time() - t < 0.1:
            pass
        return x
    """
    outcomes = []
    with sandbox.budget(3.0):
        with sandbox.session("attention", src(code), "attention.py") as s:
            for _ in range(200):
                outcomes.append(s.call("slow", [np.ones(2)]))
    statuses = [o.status for o in outcomes]
    # every call is correct and under its own limit: the calls answered keep their answers, the
    # budget stops the rest (the one it meets under way, if any, and every call after it)
    answered = statuses.count("ok")
    assert answered > 0 and statuses == ["ok"] * answered + ["timeout"] * (len(statuses) - answered), statuses
    late = outcomes[answered:]
    assert all(o.reason == Reason.BUDGET for o in late), late
    assert late[0].message in ("stopped: this submission used up its time budget of 3 s",
                               "not run: this submission used up its time budget of 3 s"), late[0]
    # the budget holds whatever the machine's load: past it no child is started or asked again
    assert all(o.message == "not run: this submission used up its time budget of 3 s" for o in late[1:]), late
    assert s.restarts == 0
    print(f"\n{answered} calls answered within a 3 s budget")


def test_a_busy_machine_does_not_cost_a_correct_submission_points(sandbox):
    """More CPU hogs than cores; each call needs ~0.3 s of CPU against a 2 s CPU limit."""
    hogs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(2 * (os.cpu_count() or 2))]
    code = """
    import numpy as np

    def work(x):
        a = np.asarray(x)
        for _ in range(300):
            a = np.tanh(a @ np.eye(len(a)) * 0.5 + 0.1)
        return a
    """
    try:
        time.sleep(0.5)
        with sandbox.session("attention", src(code), "attention.py") as s:
            outcomes = [s.call("work", [np.ones(200)]) for _ in range(5)]
    finally:
        for h in hogs:
            h.kill()
            h.wait()
    assert [o.status for o in outcomes] == ["ok"] * 5, outcomes


def test_sleeping_forever_is_stopped_near_the_limit(sandbox):
    code = """
    import time

    def sleeps():
        time.sleep(600)
    """
    out = call(sandbox, code, "sleeps", timeout=1.0)
    assert (out.status, out.reason) == ("timeout", Reason.WALL)


def test_grading_can_require_isolation():
    from autograder.sandbox import SandboxError

    if os.geteuid() != 0:
        pytest.skip("only root can turn the jail off (Limits.drop_privileges=False) to see the refusal")
    with pytest.raises(SandboxError, match="--no-isolation"):
        Sandbox(Limits(drop_privileges=False), require_isolation=True)


def test_the_seccomp_layer_holds_wherever_libseccomp_can_compile_the_filter(sandbox):
    """The next test skips without a filter: this one fails if a filter that could be made is not
    there (a zygote that compiled it in the wrong place once lost it without a word)."""
    try:
        import pyseccomp

        pyseccomp.SyscallFilter(pyseccomp.ALLOW)
    except Exception:  # noqa: BLE001 - not installed, or no libseccomp
        pytest.skip("pyseccomp or libseccomp missing")
    if sandbox.isolation.user_namespace:
        assert sandbox.isolation.seccomp


_PROGRAM_PROBE = """
import json, sys
sys.path.insert(0, {inside!r})
import jail
{before}
if {stubbed}:
    seccomp = jail.import_pyseccomp()
else:
    import pyseccomp as seccomp
program = jail.seccomp_program(seccomp)
spawned = "subprocess" in sys.modules
import ctypes.util
print(json.dumps([program.hex(), spawned,
                  ctypes.util.__file__ is not None and ctypes.util.find_library.__module__ == "ctypes.util"]))
"""


def _compiled(stubbed: bool, before: str = "") -> list:
    inside = os.path.join(KIT, "autograder", "sandbox", "inside")
    probe = _PROGRAM_PROBE.format(inside=inside, before=before, stubbed=stubbed)
    import json

    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def test_the_filter_compiled_without_ldconfig_is_the_one_pyseccomp_compiles_as_it_comes():
    """The zygote imports pyseccomp with its library lookups answered by the loader (no `ldconfig`
    process, no subprocess import: jail.import_pyseccomp). The BPF program is byte for byte the one
    of a plain import, and ctypes.util is the real module again afterwards. Where a soname is not
    the loader's, the import is made the usual way, with the same program."""
    try:
        import pyseccomp

        pyseccomp.SyscallFilter(pyseccomp.ALLOW)
    except Exception:  # noqa: BLE001 - not installed, or no libseccomp
        pytest.skip("pyseccomp or libseccomp missing")
    plain, subprocess_plain, _ = _compiled(stubbed=False)
    fast, subprocess_fast, util_restored = _compiled(stubbed=True)
    assert fast == plain and util_restored
    assert subprocess_plain and not subprocess_fast      # ctypes.util's lookups import it
    fallback, _, util_restored = _compiled(stubbed=True, before='jail.SECCOMP_SONAMES["seccomp"] = "libnone.so.9"')
    assert fallback == plain and util_restored


def test_system_calls_no_submission_needs_are_refused(sandbox):
    if not sandbox.isolation.seccomp:
        pytest.skip("no seccomp filter here (pyseccomp or libseccomp missing)")
    code = """
    import ctypes
    import errno
    import os

    def probe():
        libc = ctypes.CDLL(None, use_errno=True)
        refused = []
        for number, args in ((101, (16, 1, 0, 0)),          # ptrace(PTRACE_ATTACH, 1)
                             (250, (0, 0, 0, 0)),           # keyctl
                             (272, (0x10000000,)),          # unshare(CLONE_NEWUSER)
                             (425, (8, 0)),                 # io_uring_setup
                             (321, (0, 0, 0))):             # bpf
            ctypes.set_errno(0)
            result = libc.syscall(number, *args)
            refused.append(float(result == -1 and ctypes.get_errno() == errno.EPERM))
        pid = os.fork()                                     # plain fork still works
        if pid == 0:
            os._exit(7)
        refused.append(float(os.WEXITSTATUS(os.waitpid(pid, 0)[1]) == 7))
        return refused
    """
    import platform

    if platform.machine() != "x86_64":
        pytest.skip("the probe uses x86_64 system call numbers")
    assert call(sandbox, code, "probe").value.tolist() == [1.0] * 6
