"""What the parse helper's children do (autograder/sandbox/helper_process.py runs them; bounded.py asks):
each reads some of one student's bytes within its limits and answers in JSON and .npy arrays.

Every operation runs under the student's account as the grader holds it (budget.Account, sent
with the request): an item it reads in a child of its own draws from what is left, and what the
operation counted, refused or left out goes back with its answer.
"""

from __future__ import annotations

import json

from autograder.intake import archives, budget, candidates, facts, load, staging, stubs
from autograder.judge import reading


def charged(operation):
    """`operation` run under the account sent with the request, with the graded names sent with it
    (the sender's stubs.graded_here); answers its value and what it changed of the account."""
    def charged(state: dict, graded: dict, *args):
        account = budget.Account.in_child(state)
        with budget.charging(account), stubs.graded_as(graded):
            value = operation(*args)
        return {"value": value, "account": account.changes(state)}
    return charged


OPS = {name: charged(operation) for name, operation in {
    "archive": archives.unpacked_here,
    "notebook": load.notebook_here,
    "python": load.python_here,
    "source": load.source_here,
    "load": load.load_here,
    "candidates": candidates.candidates_here,
    "facts": facts.facts_here,
    "read": staging.read_here,
}.items()}


def warm() -> None:
    """What every child would otherwise do first, done once in the helper (a fork shares it):
    the text decoded, IPython's transformer made, the tokenizer's and the compiler's first use."""
    cell = {"cell_type": "code", "metadata": {}, "source": "%matplotlib inline\n!ls\nx = 1\nx?"}
    notebook = {"nbformat": 4, "nbformat_minor": 5, "metadata": {},
                "cells": [cell, dict(cell, source="%%time\ny = 2")]}
    try:
        reading.text_of(b"x = 1\n", "warm.py")      # its codec, utf-8-sig, is a module imported on first use
        with stubs.graded_as({"warm": ["f"]}):
            load.notebook_here(json.dumps(notebook), "warm.ipynb", "warm")
            facts.facts_here(["import numpy as np\nX = [1.0]\ndef f():\n    pass\n"], "warm")
    except Exception:  # noqa: BLE001 - a child that needs it meets the error and says so
        pass
