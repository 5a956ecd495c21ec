"""The grader's side of the sandbox: `Sandbox` and `Session`.

    with Sandbox(limits, require_isolation=True) as sandbox:     # zygotes start when first needed
        sandbox.isolation                                        # which layers hold (outcome.Isolation)
        with sandbox.budget(60):                                 # one submission's wall budget
            with sandbox.session(stem, source, filename, provided={"attention": {"softmax": fn}}) as s:
                s.import_outcome                                 # CallOutcome: "ok" or why not
                s.call("softmax", [x], {"axis": -1}, returns="array")

`source` is a string, or a notebook's cells: [{"source": ..., "index": 3, "solution": True}, ...].
A numpy-only zygote serves sources that import neither torch nor matplotlib; a zygote that
imported them starts only when a source does (or `torch=True` / `matplotlib=True` is passed).
Student code never runs in this process; everything a child sends is validated here again.
See docs/architecture.md and docs/security.md.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
import time
from typing import Any, Callable, Iterator

from autograder.sandbox.exchange import (Child, Deadline, Expired, Sent, capture_file, init_frame, receive_answer,
                                         send_request)
from autograder.config.limits import Limits
from autograder.sandbox.outcome import Budget, CallOutcome, Isolation, Reason, SandboxError
from autograder.sandbox.inside.protocol import PeerClosed, ProtocolError
from autograder.sandbox.provided import ProvidedRefused, session_provided
from autograder.sandbox.cgroups import Cgroups, kill_tree, remove_in_background
from autograder.sandbox.literals import Read, inert_of, read_here, source_texts
from autograder.sandbox.inert import InertSession
from autograder.sandbox.answers import clean, end_text, import_outcome, not_started
from autograder.sandbox.session import Session
from autograder.sandbox.zygote_process import _Zygote, _ZygoteDied
from autograder.sandbox.zygotes import Zygotes, needs as needs_of_source

KIT_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


class Sandbox:
    """Warm zygotes (numpy-only and torch, each started when first needed); `session()` forks a
    child per stem of a submission. Use from one thread; several Sandboxes can run at once."""

    def __init__(self, limits: Limits | None = None, *, blocked: tuple[str, ...] = (),
                 hide: tuple[str, ...] = (), stems: tuple[str, ...] = (),
                 startup_timeout: float = 120.0, require_isolation: bool = False, warm: bool = False,
                 reader: Callable[[tuple[str, ...]], Read] = read_here):
        """`blocked`: more top-level module names a submission may not import. `hide`: kept for
        callers; with the jail nothing outside the interpreter is in a child's view anyway.
        `reader`: what a source imports and binds, found without running it (students' code: in
        a bounded child, autograder/intake/facts.py; the default parses here, for trusted texts).
        `stems`: the exercises' names: a file may import one only where its session provides it.
        `require_isolation`: raise SandboxError unless the jail holds (`attnkit grade`)."""
        self.limits = limits or Limits()
        self.blocked = tuple(blocked)
        self.reader = reader
        self.hide = tuple(hide)
        self.stems = tuple(stems)
        self._closed = False
        self.zygotes = Zygotes(self.limits, startup_timeout)   # numpy-only, and torch / matplotlib when needed
        self._budget: Budget | None = None
        self._root: str | None = None       # children's folders, only when there is no jail
        self.cgroups, self._cgroup_why = Cgroups.detect()
        if warm or require_isolation:
            self.zygotes.start((False, False))    # numpy only is cheap; torch and matplotlib start when needed
        if require_isolation:
            iso = self.isolation
            if not iso.full:
                self.close()
                raise SandboxError("the sandbox cannot isolate submissions here: " + "; ".join(iso.why or ("?",))
                                   + ". Pass --no-isolation to grade anyway (only for code you trust).")

    # -------------------------------------------------------------- zygotes

    def prepare(self, sources) -> None:
        """Starts, without waiting, the zygotes these sources will need: they warm up while
        the stems before them are graded."""
        if not self._closed:
            reads = [self.reader(source_texts(source)) for source in sources if source is not None]
            self.zygotes.prepare(needs_of_source(read.imports) for read in reads
                                 if inert_of(read, self.blocked) is None)

    @property
    def isolation(self) -> Isolation:
        z = self.zygotes.any()
        if not z.ready:
            z.wait_ready(self.zygotes.startup_timeout)
        layers = z.layers
        jailed = bool(layers.get("jailed"))
        why = [] if jailed else [str(layers.get("why") or "no jail")]
        if not self.cgroups:
            why.append(self._cgroup_why or "no cgroups: memory and processes are limited per process only")
        return Isolation(user_namespace=jailed and bool(layers.get("user")), mount_namespace=jailed,
                         pid_namespace=jailed, ipc_namespace=jailed, network=jailed,
                         private_uid=bool(layers.get("uid")) or (not jailed and self.zygotes.uid() is not None),
                         not_dumpable=jailed or layers.get("not_dumpable") is True,
                         seccomp=jailed and layers.get("seccomp") is True,
                         cgroups=self.cgroups.version if self.cgroups else "", why=tuple(why))

    # -------------------------------------------------------------- budget

    @contextlib.contextmanager
    def budget(self, seconds: float | None) -> Iterator[Budget | None]:
        """Every call and import inside shares `seconds` of the submission's own time (the wall
        time the grader waits for its children: not its own work between calls, nor a moment it
        stood still); past it they answer a timeout (reason "budget") at once."""
        if not seconds or seconds <= 0:
            yield None
            return
        outer = self._budget
        self._budget = Budget(seconds)
        try:
            yield self._budget
        finally:
            self._budget = outer

    def budget_left(self) -> CallOutcome | None:
        b = self._budget
        if b is not None and b.used >= b.seconds:
            b.spent = True
            return CallOutcome("timeout", reason=Reason.BUDGET,
                               message=f"not run: this submission used up its time budget of {b.seconds:g} s")
        return None

    # -------------------------------------------------------------- children

    def _spawn(self, stem: str, source: Any, filename: str, provided: dict, needs: tuple[bool, bool],
               timeout: float) -> tuple[Child | None, CallOutcome]:
        """Forks a child and executes the source in it: (child or None, import outcome)."""
        started = self.begin_spawn(stem, source, filename, provided, needs, timeout)
        if isinstance(started, CallOutcome):
            return None, started
        return self.finish_spawn(started, filename, provided)

    def begin_spawn(self, stem: str, source: Any, filename: str, provided: dict, needs: tuple[bool, bool],
                    timeout: float) -> Sent | CallOutcome:
        """Forks a child and sends it the source, without waiting: `finish_spawn` reads how the
        import went. A CallOutcome when no child could be started."""
        spent = self.budget_left()
        if spent is not None:
            return CallOutcome("not_run", reason=Reason.TIMEOUT, message=spent.message)
        child = None
        for attempt in (1, 2):
            try:
                z = self.zygotes.get(needs)
                child = self._fork(z)
                break
            except (_ZygoteDied, SandboxError) as err:
                if attempt == 2:
                    return not_started("not_run", str(err))
        frame = init_frame(child, stem, filename, source, provided, self.limits, stems=self.stems,
                           blocked=self.blocked, nproc=self.cgroups is None)
        sent = self.send(child, frame, timeout)
        sent.again = (stem, source, filename, provided, needs, timeout)
        return sent

    def finish_spawn(self, sent: Sent, filename: str, provided: dict) -> tuple[Child, CallOutcome]:
        """How the import of a `begin_spawn` went: (the child, its import outcome). A child whose
        fork failed (its answer read only now) is asked for once more, as a failed fork always was."""
        reply = self.receive(sent, provided)
        if sent.child.unborn and sent.again is not None and not self._closed:
            again = self.begin_spawn(*sent.again)
            if isinstance(again, CallOutcome):
                return sent.child, again
            again.again = None
            sent, reply = again, self.receive(again, provided)
        if sent.child.unborn:
            return sent.child, not_started("not_run", sent.child.unborn)
        return sent.child, import_outcome(sent.child, reply, filename, sent.timeout)

    def _fork(self, z: _Zygote) -> Child:
        """Asks `z` for a child and returns at once: the zygote forks it, puts it in its cgroup and
        lets it start, while this lane goes on (the move into a cgroup is mostly the kernel's wait,
        which held the lane when the grader made it). `_settle` reads the answer."""
        import socket

        tmpdir, uid = None, None
        if not z.layers.get("jailed"):
            # No jail: a folder of our own for the child, removed in the background afterwards.
            if self._root is None:
                self._root = tempfile.mkdtemp(prefix="attnkit-sandbox-")
                os.chmod(self._root, 0o711)
            tmpdir = tempfile.mkdtemp(prefix="child-", dir=self._root)
            uid = self.zygotes.uid()
            if uid is not None:
                os.chown(tmpdir, uid, uid)
        group = self.cgroups.create(self.limits.group_memory_mb, self.limits.max_processes) if self.cgroups else None
        procs = group.procs_files() if group is not None else []
        if group is not None and not procs:
            self.cgroups.discard(group)
            group = None
        cap_fd = capture_file(self.limits.output_bytes)
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            request = z.request_fork(theirs.fileno(), cap_fd, procs)
        except _ZygoteDied:
            ours.close()
            os.close(cap_fd)
            if group is not None:
                self.cgroups.discard(group)
            raise
        finally:
            theirs.close()
            for fd in procs:
                os.close(fd)
        child = Child(None, ours, cap_fd, group, tmpdir, uid)
        child.zygote, child.fork_request, child.settle = z, request, self._settle
        return child

    def _settle(self, child: Child, wait: bool = True) -> bool:
        """Reads the zygote's answer to `child`'s fork: its pid and whether the zygote placed it in
        its cgroup; where it could not, the child is placed from here, as the grader always did,
        and then let start. False while no answer has come (`wait=False`). A fork that failed
        leaves the child dead, the reason in `child.unborn`."""
        if child.fork_request is None:
            return True
        z = child.zygote
        try:
            answer = z.fork_answer(child.fork_request, 30.0 if wait else 0.0)
        except _ZygoteDied as err:
            child.fork_request, child.alive, child.unborn = None, False, str(err) or "no answer"
            return True
        if answer is None:
            return False
        child.fork_request = None
        child.pid, placed = answer
        if placed is False:
            if child.cgroup is not None and not child.cgroup.add(child.pid):
                self.cgroups.discard(child.cgroup)
                child.cgroup = None
            z.go(child.pid)
        return True

    def roundtrip(self, child: Child, frame: bytes, timeout: float, provided: dict):
        """One request and its answer: (header, blobs, output) or a failed CallOutcome (timeout,
        crashed, bad_return). A failure leaves the child dead."""
        return self.receive(self.send(child, frame, timeout), provided)

    def send(self, child: Child, frame: bytes, timeout: float) -> Sent:
        """Sends a request; its clocks start now. `receive` reads the answer."""
        sent = Sent(child, self._deadline(child, timeout), child.output_size(), timeout)
        try:
            send_request(child, frame, sent.deadline)
        except Exception as err:  # noqa: BLE001 - translated into what happened to the child
            sent.failed = self._failed(sent, err)
        return sent

    def receive(self, sent: Sent, provided: dict):
        """The answer to a `send`, as `roundtrip` gives it."""
        if sent.failed is not None:
            return sent.failed
        child = sent.child
        self._settle(child)
        if child.unborn:
            return not_started("crashed", child.unborn)
        try:
            header, blobs = receive_answer(child, sent.deadline, self.limits.max_frame_bytes, provided)
        except Exception as err:  # noqa: BLE001 - never let a child's bytes raise in the grader
            return self._failed(sent, err)
        return header, blobs, child.output_since(sent.start)

    def _deadline(self, child: Child, timeout: float) -> Deadline:
        return Deadline(child, timeout, self.limits, self._budget)

    def _failed(self, sent: Sent, err: Exception) -> CallOutcome:
        """What an exchange that raised means: the child is dead afterwards."""
        child, deadline, start, timeout = sent.child, sent.deadline, sent.start, sent.timeout
        if isinstance(err, Expired):
            self.kill(child)
            if err.reason == Reason.BUDGET:
                self._budget.spent = True
                message = f"stopped: this submission used up its time budget of {self._budget.seconds:g} s"
            elif time.monotonic() < deadline.clock.backstop:
                message = f"stopped after {timeout:g} s"      # of CPU time, or of no progress at all
            else:
                message = (f"stopped after {time.monotonic() - deadline.clock.start:.0f} s of wall time "
                           f"(limit {timeout:g} s of CPU time)")
            return CallOutcome("timeout", reason=err.reason, message=message, output=child.output_since(start))
        if isinstance(err, ProvidedRefused):
            self.kill(child)
            return CallOutcome("crashed", reason=Reason.REFUSED, message=f"stopped: {err}",
                               output=child.output_since(start))
        if isinstance(err, (PeerClosed, OSError)):
            return self._crashed(child, start)
        self.kill(child)
        what = clean(str(err), 200) if isinstance(err, ProtocolError) else type(err).__name__
        return CallOutcome("bad_return", message=f"gave an answer that could not be read ({what})",
                           output=child.output_since(start))

    def _crashed(self, child: Child, start: int) -> CallOutcome:
        if child.pid is None:     # its fork failed (the pid settles here): nothing ran
            return not_started("crashed", child.unborn or "no answer")
        message, reason = end_text(child, self.limits)
        self.kill(child)
        return CallOutcome("crashed", reason=reason, message=message, output=child.output_since(start))

    def kill(self, child: Child) -> None:
        if not child.alive:
            return
        child.alive = False
        z = child.zygote
        # An init is pid 1 of its PID namespace: its death takes every process in it along.
        if child.pid:
            try:
                os.kill(child.pid, 9)
            except OSError:
                pass
        if child.cgroup is not None:
            child.cgroup.kill()
        if not child.layers.get("pid"):
            z.await_answers()      # every child of the zygote known, so that the hunt spares them
            kill_tree(child.pid, z.pid, z.live - {child.pid}, child.uid)
        try:
            child.sock.close()
        except OSError:
            pass

    def discard(self, child: Child) -> None:
        self.kill(child)
        try:
            os.close(child.cap_fd)
        except OSError:
            pass
        if child.cgroup is not None:
            self.cgroups.discard(child.cgroup)
        if child.tmpdir:
            remove_in_background(child.tmpdir)
        z = child.zygote
        if not z.dead:
            z.poll(0)
            if z.exits.pop(child.pid, None) is None and child.pid in z.live:
                z.forgotten.add(child.pid)

    # -------------------------------------------------------------- public

    @contextlib.contextmanager
    def session(self, stem: str, source: str | list, filename: str | None = None,
                provided: dict[str, dict[str, Any]] | None = None, torch: bool | None = None,
                matplotlib: bool | None = None) -> Iterator[Session]:
        """`provided`: stem -> {name: grader-side callable or plain value}. `torch`, `matplotlib`:
        whether the stem needs them warm (default: whether its source mentions them; a child
        can still import either, only slower)."""
        read = self.reader(source_texts(source))
        needs = needs_of_source(read.imports, torch, matplotlib)
        filename, provided = filename or f"{stem}.py", session_provided(provided or {})
        values = inert_of(read, self.blocked)
        if values is not None:     # only literals: read here; a child only for what they do not answer
            s = InertSession(self, values, lambda: Session(self, stem, source, filename, provided, needs))
        else:
            s = Session(self, stem, source, filename, provided, needs)
        try:
            yield s
        finally:
            s.close()

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        self.zygotes.close()
        if self.cgroups is not None:
            self.cgroups.close()
        if self._root is not None:
            remove_in_background(self._root)

    def __enter__(self) -> "Sandbox":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:  # noqa: BLE001
            pass
