"""A class run's sandboxes fork their torch and matplotlib zygotes from a template that did the
imports once (sandbox/template_process.py); each zygote still enters its own jail."""

from __future__ import annotations

import os
import signal
import textwrap
import time

import pytest

from autograder.sandbox import Limits, Sandbox
from autograder.sandbox.template_process import ZygoteTemplates, templates_work

pytestmark = [pytest.mark.skipif(not templates_work(), reason="no pidfd on this system"), pytest.mark.speedup("templates")]

LIMITS = Limits(call_timeout=5.0, import_timeout=20.0, memory_mb=1024, cpu_seconds=20, max_processes=64)
TORCH_SOURCE = textwrap.dedent("""
    import os
    import torch

    def where():
        return [float(os.getuid()), float(torch.ones(3).sum())]
""")
TORCH = (True, True)


def parent_of(pid: int) -> int:
    with open(f"/proc/{pid}/stat", "rb") as f:
        return int(f.read().rsplit(b")", 1)[1].split()[1])


def answer(box: Sandbox) -> list[float]:
    with box.session("multihead", TORCH_SOURCE, "multihead.py") as s:
        assert s.import_outcome.ok, s.import_outcome
        out = s.call("where", returns="array")
    assert out.ok, out
    return list(out.value)


@pytest.fixture
def two_boxes():
    templates = ZygoteTemplates()
    boxes = [Sandbox(LIMITS) for _ in range(2)]
    for box in boxes:
        box.zygotes.templates = templates
        box.zygotes.torch_with_matplotlib = True
    yield templates, boxes
    for box in boxes:
        box.close()
    templates.close()


def test_two_sandboxes_torch_zygotes_come_from_one_template_and_each_keeps_its_jail(two_boxes):
    templates, boxes = two_boxes
    zygotes = [box.zygotes.get(TORCH) for box in boxes]
    (template,) = templates._by_kind.values()
    assert [parent_of(z.pid) for z in zygotes] == [template.proc.pid] * 2
    for z in zygotes:
        assert z.layers.get("jailed") and z.layers.get("seccomp"), z.layers
    seen = [answer(box) for box in boxes]
    assert all(value[1] == 3.0 for value in seen)
    if os.geteuid() == 0:      # each sandbox's private uid, as before: its children cannot reach the other's
        assert zygotes[0].config["uid"] != zygotes[1].config["uid"]
        assert all(z.layers.get("uid") for z in zygotes)


def test_a_zygote_forked_from_the_template_that_dies_is_seen_dead_and_forked_again(two_boxes):
    templates, (box, _) = two_boxes
    first = box.zygotes.get(TORCH)
    os.kill(first.pid, signal.SIGKILL)
    deadline = time.monotonic() + 10
    while first.alive() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not first.alive()          # through its pidfd: it is not the grader's child
    assert answer(box)[1] == 3.0
    again = box.zygotes.get(TORCH)
    assert again is not first and parent_of(again.pid) == next(iter(templates._by_kind.values())).proc.pid


def test_a_template_that_died_leaves_its_zygotes_and_its_kind_then_starts_as_before(two_boxes):
    templates, (box, other) = two_boxes
    forked = box.zygotes.get(TORCH)
    (template,) = templates._by_kind.values()
    template.proc.kill()
    template.proc.wait()
    assert answer(other)[1] == 3.0    # started without the template: a zygote of its own
    assert parent_of(other.zygotes.get(TORCH).pid) == os.getpid()
    # the zygote forked before it died is still known (its answer read from the socket's end)
    assert forked.alive() and answer(box)[1] == 3.0
    assert box.zygotes.get(TORCH) is forked and box.zygotes.restarts == 0


def test_closing_the_templates_leaves_the_zygotes_to_their_sandboxes(two_boxes):
    templates, (box, _) = two_boxes
    z = box.zygotes.get(TORCH)
    (template,) = templates._by_kind.values()
    templates.close()
    assert template.proc.poll() is not None
    assert z.alive() and answer(box)[1] == 3.0
    assert box.zygotes.get(TORCH) is z and box.zygotes.restarts == 0
    box.close()
    deadline = time.monotonic() + 5
    while os.path.exists(f"/proc/{z.pid}") and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not os.path.exists(f"/proc/{z.pid}")


def test_where_the_kernel_has_no_pidfd_the_zygotes_start_as_before(two_boxes, monkeypatch):
    from autograder.sandbox import template_process

    templates, (box, _) = two_boxes
    monkeypatch.setattr(template_process, "templates_work", lambda: False)
    assert parent_of(box.zygotes.get(TORCH).pid) == os.getpid() and not templates._by_kind
    assert answer(box)[1] == 3.0
