"""`attnkit grade --scheduler`: a class graded on a Dask cluster says exactly what a local run
says; submissions cross in the transport's own framing and are loaded on the worker as locally; a worker's answer
is validated, and the client's memory does not grow with the class.

The cluster test starts a real scheduler and two workers (`dask scheduler`, `dask worker`
subprocesses on 127.0.0.1) and compares with `grade_class` on the same class.
"""

from __future__ import annotations

import csv
import io
import json
import os
import re
import socket
import struct
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("distributed")

from autograder.checks import check_ids  # noqa: E402
from autograder.grading.local_grading import grade_class  # noqa: E402
from autograder.cluster.client import grade_class_on_cluster  # noqa: E402
from autograder.cluster.transport import (MAGIC, MAX_LINK_TEXT, MAX_MEMBERS, MAX_SOURCES,  # noqa: E402
                                          PackError, pack_submission, unpack_submission)
from autograder.cluster.validate import BadAnswer, parse_answer  # noqa: E402
from autograder.cluster.worker import answer_json  # noqa: E402
from autograder.config import KIT_ROOT, load_course  # noqa: E402
from autograder.checks.contract import STEMS  # noqa: E402
from autograder.intake.load import MAX_BYTES, load_submission  # noqa: E402

from tests.cluster_canned import passed_result  # noqa: E402
from tests.test_classroom import _hostile, _student, small_course  # noqa: E402

DEMO = KIT_ROOT / "demo" / "class"
SOLUTIONS = KIT_ROOT / "solutions"
HOSTILE = KIT_ROOT / "tests" / "hostile"


def course_at(path: Path):
    return load_course(path, known_checks=check_ids())


# ====================================================================== transport

def _roundtrip(folder: Path, tmp_path: Path) -> Path:
    dest = tmp_path / "unpacked"
    dest.mkdir(parents=True)
    packed = pack_submission(folder, STEMS)
    assert packed.notes == ()
    unpack_submission(packed.data, dest, STEMS)
    return dest


def test_every_demo_and_corpus_submission_loads_the_same_after_the_trip(tmp_path):
    folders = [p for p in sorted(DEMO.iterdir())] + sorted(
        p for p in (KIT_ROOT / "tests" / "corpus").glob("*/*") if p.is_dir())
    for i, folder in enumerate(folders):
        dest = _roundtrip(folder, tmp_path / str(i))
        assert load_submission(dest) == load_submission(folder), folder


def test_links_huge_files_mtimes_and_odd_entries_read_the_same(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    secret = tmp_path / "secret.py"
    secret.write_text("SECRET = 1\n")
    (src / "attention.py").symlink_to(secret)                       # a link to a real file
    (src / "causal_mask.py").symlink_to(tmp_path / "nowhere.py")   # a dangling link
    (src / "scaling.py").write_bytes(b"# pad\n" * (MAX_BYTES // 6 + 10))   # over the size limit
    (src / "multihead.py").write_text("X = 1\n")
    (src / "multihead.ipynb").write_text('{"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}')
    os.utime(src / "multihead.py", ns=(1, 1_700_000_000_123_456_789))          # the .ipynb is newer
    os.mkfifo(src / "hand_computation.py")                          # neither file nor link
    (src / "notes.txt").write_text("not sent")
    dest = _roundtrip(src, tmp_path)
    assert load_submission(dest) == load_submission(src)
    assert sorted(p.name for p in dest.iterdir()) == sorted(
        ["attention.py", "causal_mask.py", "scaling.py", "multihead.py", "multihead.ipynb", "hand_computation.py",
         "notes.txt"])
    assert (dest / "attention.py").is_symlink() and (dest / "notes.txt").stat().st_size == 0
    assert os.stat(dest / "multihead.py").st_mtime_ns == 1_700_000_000_123_456_789
    assert b"SECRET" not in pack_submission(src, STEMS).data


def test_links_inside_the_folder_are_followed_there_as_here(tmp_path):
    """A link that stays inside the student's folder is graded through (as intake does locally);
    a name that is no UTF-8 arrives as it is."""
    src = tmp_path / "src"
    (src / "work").mkdir(parents=True)
    (src / "work" / "attention_v3.py").write_text("def softmax(x, axis=-1):\n    return x\n")
    (src / "attention.py").symlink_to(Path("work") / "attention_v3.py")
    (src / os.fsdecode(b"caf\xe9.txt")).write_text("latin-1 name")
    dest = _roundtrip(src, tmp_path)
    assert load_submission(dest) == load_submission(src)
    assert "return x" in (dest / "attention.py").read_text()
    assert (dest / os.fsdecode(b"caf\xe9.txt")).exists()


def _packed(records: list[tuple[bytes, bytes, bytes]], magic: bytes = MAGIC) -> bytes:
    """A packed submission made by hand: (kind, name, payload) records, as this test writes them."""
    out = [magic]
    for kind, name, payload in records:
        out.append(struct.pack("!cHqQ", kind, len(name), 1_700_000_000_000_000_000, len(payload)) + name + payload)
    return b"".join(out)


@pytest.mark.parametrize("records", [
    [(b"f", b"../attention.py", b"x = 1\n")],
    [(b"f", b"/tmp/attention.py", b"x = 1\n")],
    [(b"f", b"sub/attention.py", b"x = 1\n")],                       # its folder was not sent first
    [(b"f", b"attention.py", b"x"), (b"f", b"attention.py", b"y")],
    [(b"l", b"a", b"attention.py"), (b"f", b"a/attention.py", b"x")],   # a file below a link
    [(b"f", b"attention\0.py", b"x")],
    [(b"h", b"attention.py", b"x")],                                   # no such kind
    [(b"d", b"sub", b"x")],                                            # a folder with content
    [(b"f", b"notes.txt", b"only names travel for it")],
    [(b"f", b"attention.py", b"#" * (MAX_BYTES + 1))],
    [(b"s", b"attention.py", struct.pack("!Q", 10))],                 # "too large" for a small size
    [(b"l", b"attention.py", b"")],
    [(b"l", b"attention.py", b"x" * 4096)],
])
def test_unpacking_refuses_what_the_client_never_packs(tmp_path, records):
    dest = tmp_path / "dest"
    dest.mkdir()
    with pytest.raises(PackError):
        unpack_submission(_packed(records), dest, STEMS)
    assert not (tmp_path / "attention.py").exists() and not Path("/tmp/attention.py").exists()


@pytest.mark.parametrize("data", [
    b"\x80\x04not a packed submission" * 100,
    _packed([(b"f", b"attention.py", b"x = 1\n")])[:-3],          # cut short
    _packed([(b"f", b"attention.py", b"x = 1\n")], magic=b"attnkit submission 1\n"),
])
def test_unpacking_refuses_bytes_that_are_not_a_packed_submission(tmp_path, data):
    with pytest.raises(PackError):
        unpack_submission(data, tmp_path, STEMS)


def test_the_worker_refuses_more_than_one_students_totals(tmp_path):
    """Totals hold on the worker's side too: entries, and bytes of files and of link text, past what
    a client sends for one student are refused before they are written."""
    entries = [(b"o", f"p{i}".encode(), b"") for i in range(MAX_MEMBERS + 1)]
    source = b"#" * (MAX_BYTES - 100)
    sources = [(b"f", f"s{i}.py".encode(), source) for i in range(MAX_SOURCES // len(source) + 1)]
    links = [(b"l", f"l{i}".encode(), b"1" * 4095) for i in range(MAX_LINK_TEXT // 4095 + 1)]
    for i, records in enumerate((entries, sources, links)):
        dest = tmp_path / str(i)
        dest.mkdir()
        unpack_submission(_packed(records[:-1]), dest, STEMS)      # one fewer: taken
        dest = tmp_path / f"{i}-over"
        dest.mkdir()
        with pytest.raises(PackError):
            unpack_submission(_packed(records), dest, STEMS)


def test_the_client_sends_no_more_than_one_students_totals_and_says_what_it_left_out(tmp_path):
    """A folder with more entries, link text or source bytes than a student's totals: what is
    sent stays within them (the worker takes it), and the notes say what was left out."""
    src = tmp_path / "src"
    src.mkdir()
    for i in range(4):
        sub = src / f"d{i}"
        sub.mkdir()
        for j in range(MAX_MEMBERS // 4 + 10):
            (sub / f"l{j:05d}").symlink_to("1" * 4095)
    source = b"#" * (MAX_BYTES - 100)
    big = src / "big"
    big.mkdir()
    for i in range(MAX_SOURCES // len(source) + 2):
        (big / f"s{i:02d}.py").write_bytes(source)
    packed = pack_submission(src, STEMS)
    said = " ".join(packed.notes)
    assert f"more than {MAX_MEMBERS} files and folders" in said
    assert "symbolic links name more than" in said
    assert ".py and .ipynb files hold more than" in said
    dest = tmp_path / "dest"
    dest.mkdir()
    written = unpack_submission(packed.data, dest, STEMS)
    assert len(written) == MAX_MEMBERS
    sent_whole = [n for n in written if n.startswith("big/") and (dest / n).read_bytes() == source]
    assert len(sent_whole) == MAX_SOURCES // len(source)


def test_past_the_totals_the_client_reads_no_more_and_the_exercises_go_first(tmp_path, monkeypatch):
    """Sparse .py files beside the work (sizes on disk of nothing): past the source total, the
    client sends their sizes without reading them, and the exercise's file, named after them in
    the alphabet, is sent whole all the same."""
    from autograder.cluster import transport

    src = tmp_path / "src"
    src.mkdir()
    count = MAX_SOURCES // MAX_BYTES + 40
    for i in range(count):
        with open(src / f"a_scratch_{i:03d}.py", "wb") as fh:
            fh.truncate(MAX_BYTES)
    work = (SOLUTIONS / "attention.py").read_bytes()
    (src / "attention.py").write_bytes(work)
    opened = []
    real_open = os.open
    monkeypatch.setattr(transport.os, "open", lambda path, *a, **k: (opened.append(path), real_open(path, *a, **k))[1])
    packed = pack_submission(src, STEMS)
    monkeypatch.undo()
    assert len(opened) == MAX_SOURCES // MAX_BYTES, len(opened)    # the whole files that fit, no more
    assert ".py and .ipynb files hold more than" in " ".join(packed.notes)
    dest = tmp_path / "dest"
    dest.mkdir()
    unpack_submission(packed.data, dest, STEMS)
    assert (dest / "attention.py").read_bytes() == work
    assert len(list(dest.iterdir())) == count + 1


def test_a_client_out_of_time_sends_what_it_packed_exercises_first_and_says_so(tmp_path):
    from autograder.cluster.transport import OUT_OF_TIME

    src = tmp_path / "src"
    (src / "a_folder").mkdir(parents=True)
    for name in ("a_notes.txt", "b_scratch.py", "hand_computation.py", "work.zip"):
        (src / name).write_bytes(b"x = 1\n")
    asked = []
    packed = pack_submission(src, STEMS, must_stop=lambda: asked.append(1) or len(asked) > 2)
    assert packed.notes == (OUT_OF_TIME,)
    dest = tmp_path / "dest"
    dest.mkdir()
    assert unpack_submission(packed.data, dest, STEMS) == ["hand_computation.py", "work.zip"]


def test_a_reading_child_must_stop_while_it_can_still_answer():
    """A child under a CPU limit (RLIMIT_CPU, as the helper sets it: here less than the student's
    time left, as an item's) that works until must_stop says so is still alive, with a margin
    of its limit to spare."""
    code = """
import json, resource
from autograder.config.limits import IntakeLimits
from autograder.intake import budget
resource.setrlimit(resource.RLIMIT_CPU, (2, 3))
child = budget.Account.in_child(budget.Account(IntakeLimits(cpu_seconds=12)).state())
started = not child.must_stop()
while not child.must_stop():
    pass
own = resource.getrusage(resource.RUSAGE_SELF)
print(json.dumps([started, own.ru_utime + own.ru_stime]))
"""
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, cwd=KIT_ROOT)
    assert run.returncode == 0, run.stderr[-2000:]
    started, own = json.loads(run.stdout)
    assert started
    assert 1.0 < own <= 2 - 0.25, own


# ====================================================================== validation of answers

def test_an_honest_answer_is_accepted_and_a_doctored_one_is_not():
    course = course_at(KIT_ROOT / "course.yml")
    honest = passed_result("ada", course)
    assert parse_answer(answer_json(honest), "ada", course) == honest
    data = json.loads(answer_json(honest))
    doctored = json.loads(json.dumps(data))
    doctored["result"]["exercises"][0]["checks"][0]["max_score"] = 100
    lost = json.loads(json.dumps(data))
    del lost["result"]["exercises"][1]["checks"][0]
    failed_full = json.loads(json.dumps(data))
    failed_full["result"]["exercises"][0]["checks"][0]["status"] = "failed"
    for text, name in [(answer_json(honest), "ben"), (json.dumps(doctored), "ada"), (json.dumps(lost), "ada"),
                       (json.dumps(failed_full), "ada"), ('{"error": "KitMismatch: other kit"}', "ada"),
                       ("[1, 2]", "ada"), ("not json", "ada")]:
        with pytest.raises(BadAnswer):
            parse_answer(text, name, course)


# ====================================================================== a real cluster on loopback

def _env() -> dict:
    """This kit first on the path (and tests/, for the workers' canned task)."""
    path = [str(KIT_ROOT), str(KIT_ROOT / "tests"), os.environ.get("PYTHONPATH", "")]
    return dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in path if p), MPLBACKEND="Agg")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def scheduler(tmp_path_factory):
    """`dask scheduler` and two `dask worker`s (one thread each) on 127.0.0.1, using this kit."""
    logs = tmp_path_factory.mktemp("dask-logs")
    env = _env()
    address = f"tcp://127.0.0.1:{_free_port()}"
    dask = [sys.executable, "-m", "distributed.cli.dask_scheduler"]
    procs = [subprocess.Popen([*dask, "--host", "127.0.0.1", "--port", address.rsplit(":", 1)[1],
                               "--dashboard-address", ":0", "--no-show"],
                              env=env, stdout=subprocess.DEVNULL, stderr=open(logs / "scheduler.log", "wb"))]
    for i in range(2):
        procs.append(subprocess.Popen(
            [sys.executable, "-m", "distributed.cli.dask_worker", address, "--nthreads", "1", "--nworkers", "1",
             "--host", "127.0.0.1", "--no-dashboard", "--local-directory", str(logs / f"w{i}")],
            env=env, stdout=subprocess.DEVNULL, stderr=open(logs / f"worker{i}.log", "wb")))
    from distributed import Client

    deadline = time.monotonic() + 120
    while True:
        try:
            with Client(address, timeout=5) as client:
                client.wait_for_workers(2, timeout=max(1, deadline - time.monotonic()))
            break
        except Exception:  # noqa: BLE001 - not up yet
            if time.monotonic() > deadline:
                for p in procs:
                    p.kill()
                pytest.fail("the Dask scheduler and workers did not start: " +
                            (logs / "scheduler.log").read_text(errors="replace")[-2000:])
            time.sleep(1)
    yield address
    for p in reversed(procs):
        p.terminate()
    for p in procs:
        try:
            p.wait(30)
        except subprocess.TimeoutExpired:
            p.kill()


def _class(root: Path) -> tuple[Path, Path]:
    """The demo class, a hostile spy and writer, a link, a huge file, both .py and .ipynb, an odd name."""
    class_dir = root / "class"
    out = root / "out"
    for folder in DEMO.iterdir():
        _student(class_dir, folder.name, {p.name: p for p in folder.iterdir()})
    paths = {"@KIT@": str(KIT_ROOT), "@CLASS@": str(class_dir), "@OUT@": str(out)}
    witness = {"hand_computation.py": SOLUTIONS / "hand_computation.py"}
    for case in ("spy", "writer"):
        _student(class_dir, case, witness | {"causal_mask.py": _hostile(case, "causal_mask", paths)})
    linked = _student(class_dir, "linked", witness)
    (linked / "attention.py").symlink_to(class_dir / "ada" / "attention.py")
    _student(class_dir, "huge", witness | {"attention.py": b"# padding\n" * 300_000})
    both = _student(class_dir, "both", {"attention.py": "def softmax(x, axis=-1):\n    return x\n",
                                        "attention.ipynb": (DEMO / "ben" / "attention.ipynb").read_bytes()})
    os.utime(both / "attention.py", (1_000_000, 1_000_000))
    _student(class_dir, "José Ñúñez", {"causal_mask.py": SOLUTIONS / "causal_mask.py"})
    return class_dir, out


def _without_timing(data):
    """The summary without grading times (and the list of the slowest students they order), when
    it was written, and how the run checked its sandbox (a preflight here, one per worker there)."""
    if isinstance(data, dict):
        return {k: _without_timing(v) for k, v in data.items()
                if k not in ("duration_s", "slowest", "preflight", "generated")}
    if isinstance(data, list):
        return [_without_timing(v) for v in data]
    return data


def _comparable(out: Path) -> dict[str, object]:
    """Every file of OUT but the key, with what differs between any two runs removed (timing,
    and the signature, made with each run folder's own key)."""
    files: dict[str, object] = {}
    for path in sorted(out.rglob("*")):
        rel = str(path.relative_to(out))
        if not path.is_file() or path.name.startswith("."):
            continue
        if path.name == "summary.json":
            files[rel] = _without_timing(json.loads(path.read_text(encoding="utf-8")))
        elif path.name == "report.html":     # when it was written, grading times, the preflight
            text = re.sub(r"<dc:date>.*?</dc:date>", "", path.read_text(encoding="utf-8"))
            text = re.sub(r"<time .*?</time>", "", text)
            text = re.sub(r'<tr id="preflight">.*?</tr>', "", text, flags=re.S)
            files[rel] = re.sub(r'<section id="slowest">.*?</section>', "", text, flags=re.S)
        elif path.suffix == ".json" and path.parent.name == "results":
            data = json.loads(path.read_text(encoding="utf-8"))
            for extra in (data["extra_data"], data["extra_data"]["result"]):
                extra.pop("duration_s", None)
            data["extra_data"].pop("signature", None)
            files[rel] = data
        else:   # an HTML page's stamp hashes its result, timing included, and its pictures carry
            # matplotlib's date: both differ between any two runs
            text = re.sub(r"<dc:date>.*?</dc:date>", "", path.read_text(encoding="utf-8"))
            files[rel] = "\n".join(line for line in text.splitlines() if not line.startswith("<!-- attnkit "))
    return files


@pytest.mark.slow
def test_a_class_on_two_workers_grades_exactly_as_a_local_run_and_resumes(tmp_path, scheduler):
    class_dir, _ = _class(tmp_path)
    # The kit's time limits: on a loaded machine a 2 s limit times out honest code in one run and
    # not the other, and the runs would differ by load, not by where they ran.
    course_file = small_course(tmp_path, limits={"call_timeout": 10, "import_timeout": 20, "memory_mb": 1024,
                                                 "cpu_seconds": 60, "max_processes": 32})
    local_out, cluster_out = tmp_path / "local-out", tmp_path / "cluster-out"
    grade_class(class_dir, local_out, course_at(course_file), jobs=2)
    run = subprocess.run([sys.executable, "-m", "autograder.cli", "--course", str(course_file), "grade",
                          str(class_dir), "--out", str(cluster_out), "--scheduler", scheduler],
                         cwd=KIT_ROOT, capture_output=True, text=True, timeout=900,
                         env=_env())
    assert run.returncode == 0, run.stderr + run.stdout
    local, cluster = _comparable(local_out), _comparable(cluster_out)
    assert set(cluster) == set(local)
    for name in local:
        assert cluster[name] == local[name], name
    results = {p.stem: json.loads(p.read_text())["extra_data"]["result"] for p in (cluster_out / "results").iterdir()}
    assert results["spy"]["score"] == results["writer"]["score"] == 15   # found nothing, changed nothing
    assert not (class_dir / "writer" / "results.json").exists()
    assert "symbolic link" in json.dumps(results["linked"])
    huge = next(e for e in results["huge"]["exercises"] if e["stem"] == "attention")
    assert all(c["status"] == "error" and c["reason"] in ("load_error", "refused") for c in huge["checks"])

    # Resume: nothing changed, so nothing is sent again; a forged result is graded again.
    forged = cluster_out / "results" / "cleo.json"
    data = json.loads(forged.read_text())
    check = next(c for e in data["extra_data"]["result"]["exercises"] for c in e["checks"] if c["status"] != "passed")
    check.update(status="passed", score=check["max_score"])
    forged.write_text(json.dumps(data))
    before = {p.name: p.stat().st_mtime_ns for p in (cluster_out / "results").iterdir()}
    graded: list[tuple[str, bool]] = []
    grade_class_on_cluster(class_dir, cluster_out, course_at(course_file), scheduler,
                           on_result=lambda r, reused: graded.append((r.student, reused)))
    assert sorted(n for n, reused in graded if not reused) == ["cleo"]
    after = {p.name: p.stat().st_mtime_ns for p in (cluster_out / "results").iterdir()}
    assert {n for n in before if before[n] != after[n]} == {"cleo.json"}
    assert _comparable(cluster_out) == local


def test_an_unreachable_scheduler_is_a_clear_message(tmp_path):
    run = subprocess.run([sys.executable, "-m", "autograder.cli", "grade", str(DEMO), "--out", str(tmp_path / "o"),
                          "--scheduler", f"tcp://127.0.0.1:{_free_port()}"],
                         cwd=KIT_ROOT, capture_output=True, text=True, timeout=120,
                         env=_env() | {"ATTNKIT_CONNECT_TIMEOUT": "3"})
    assert run.returncode == 2
    assert "cannot reach a Dask scheduler" in run.stdout + run.stderr


def test_a_scheduler_without_workers_is_a_clear_message(tmp_path):
    port = _free_port()
    scheduler = subprocess.Popen([sys.executable, "-m", "distributed.cli.dask_scheduler", "--host", "127.0.0.1",
                                  "--port", str(port), "--dashboard-address", ":0", "--no-show"],
                                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=_env())
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", port)) == 0:
                    break
            time.sleep(0.5)
        run = subprocess.run([sys.executable, "-m", "autograder.cli", "grade", str(DEMO), "--out",
                              str(tmp_path / "o"), "--scheduler", f"tcp://127.0.0.1:{port}"],
                             cwd=KIT_ROOT, capture_output=True, text=True, timeout=120,
                             env=_env() | {"ATTNKIT_CONNECT_TIMEOUT": "3"})
    finally:
        scheduler.terminate()
        scheduler.wait(30)
    assert run.returncode == 2, run.stderr
    assert "has no workers" in run.stdout + run.stderr


# ====================================================================== memory: 600 students of long results

def _synthetic_class(root: Path, n: int) -> Path:
    source = (SOLUTIONS / "attention.py").read_bytes()
    for i in range(n):
        folder = root / f"s{i:05d}"
        folder.mkdir(parents=True)
        (folder / "attention.py").write_bytes(source)
    return root


@pytest.mark.slow
def test_six_hundred_students_stream_to_disk_with_bounded_client_memory(tmp_path, scheduler):
    """The client (its own process; the workers answer at once with full marks, each check's
    message long) grades 60 and then 600 students: its peak memory grows by far less than the
    results it wrote (as many bytes as 2,000 students of short messages write)."""
    peaks = {}
    for n in (60, 600):
        class_dir = _synthetic_class(tmp_path / f"class{n}", n)
        run = subprocess.run([sys.executable, str(KIT_ROOT / "tests" / "cluster_canned.py"), str(class_dir),
                              str(tmp_path / f"out{n}"), scheduler], cwd=KIT_ROOT, capture_output=True, text=True,
                             timeout=1200, env=_env())
        assert run.returncode == 0, run.stderr[-3000:]
        report = json.loads(run.stdout.strip().splitlines()[-1])
        assert report["n"] == n
        peaks[n] = report["max_rss_kb"] * 1024
    out = tmp_path / "out600"
    written = sum(p.stat().st_size for p in (out / "results").iterdir())
    assert written > 40e6                                   # what holding every result would cost, at least
    # Holding the results' texts (as a local run does) would add more than `written` while the end-of-run
    # reports are written; dask's connection keeping its last messages (a student's packed files
    # each) went beyond this bound as often as not (cluster/client.MESSAGES_KEPT).
    assert peaks[600] - peaks[60] < 0.5 * written, (peaks, written)
    rows = (out / "grades.csv").read_text().splitlines()
    top = sum(c.points for ex in course_at(KIT_ROOT / "course.yml").exercises.values() for c in ex.checks.values())
    assert len(rows) == 601 and rows[1].startswith("s00000,") and rows[-1].endswith(f",{top:g},{top:g},graded")
    assert json.loads((out / "results" / "s00599.json").read_text())["extra_data"]["result"]["student"] == "s00599"


# ====================================================================== overrides, late work, one re-grade

@pytest.mark.slow
def test_overrides_late_work_and_one_regrade_on_the_cluster_give_the_local_grades(tmp_path, scheduler):
    """The instructor's round trip on a cluster: an overrides file, a late submission under the
    course's late policy (nbgrader's timestamp.txt), then `--student` grading one student again
    after a fix: grades.csv and summary.json's audit trail as the local run writes them."""
    from autograder.cli import main
    from tests.lms_downloads import HAND, RIGHT
    from tests.test_lms_roundtrip import _course

    course = _course(tmp_path, late={"due": "2026-03-02T23:59:00-05:00", "penalty": 10, "per": "day"},
                     limits={"call_timeout": 10, "import_timeout": 20, "memory_mb": 1024, "cpu_seconds": 60,
                             "max_processes": 32})
    wrong = RIGHT.replace(b"CSM_OUTPUT = ", b"CSM_OUTPUT = 1 + ", 1)
    assert wrong != RIGHT
    cls = tmp_path / "class"
    for name, code, stamp in (("ada", RIGHT, "2026-03-02 20:00:00.000000 UTC"),       # on time
                              ("ben", RIGHT, "2026-03-05 10:00:00.000000 UTC"),       # two days late
                              ("cleo", wrong, "2026-03-02 21:00:00.000000 UTC")):
        handed_in = cls / "submitted" / name / "self_attention"      # nbgrader's layout, its timestamp
        handed_in.mkdir(parents=True)
        (handed_in / f"{HAND}.py").write_bytes(code)
        (handed_in / "timestamp.txt").write_text(stamp, encoding="utf-8")
    overrides = tmp_path / "overrides.csv"
    overrides.write_text(f"student,check,points,reason,who\nada,{HAND},5,copied from a classmate,Prof. Diaz\n",
                         encoding="utf-8")
    outs = {"local": tmp_path / "local-out", "cluster": tmp_path / "cluster-out"}
    where = {"local": ["--jobs", "1"], "cluster": ["--scheduler", scheduler]}

    def grade(run: str, *more: str) -> tuple[list[dict], dict]:
        assert main(["--course", str(course), "grade", str(cls), "--out", str(outs[run]), "--overrides",
                     str(overrides), *where[run], *more]) == 0
        rows = list(csv.DictReader(io.StringIO((outs[run] / "grades.csv").read_text(encoding="utf-8"))))
        summary = json.loads((outs[run] / "summary.json").read_text(encoding="utf-8"))
        return rows, {k: summary.get(k) for k in ("statuses", "scores", "overrides", "regraded")}

    first = {run: grade(run) for run in outs}
    assert first["cluster"][0] == first["local"][0]
    assert first["cluster"][1] == first["local"][1]
    rows = {r["student"]: r for r in first["local"][0]}
    assert (rows["ada"]["total"], rows["ada"]["override"].split(" (")[0]) == ("5", f"{HAND}: 7 -> 5")
    assert (rows["ben"]["raw_total"], rows["ben"]["penalty"], rows["ben"]["total"], rows["ben"]["status"]) == (
        "7", "2.1", "4.9", "late")
    assert float(rows["cleo"]["total"]) < 7

    (cls / "submitted" / "cleo" / "self_attention" / f"{HAND}.py").write_bytes(RIGHT)      # the student's fix, graded again alone
    again = {run: grade(run, "--student", "cleo") for run in outs}
    assert again["cluster"][0] == again["local"][0]
    local_summary, cluster_summary = again["local"][1], again["cluster"][1]
    assert local_summary["regraded"]["student"] == cluster_summary["regraded"]["student"] == "cleo"
    assert {k: v for k, v in cluster_summary.items() if k != "regraded"} == \
        {k: v for k, v in local_summary.items() if k != "regraded"}
    rows = {r["student"]: r for r in again["local"][0]}
    assert rows["cleo"]["total"] == "7" and rows["ben"]["total"] == "4.9" and rows["ada"]["total"] == "5"
