"""Right answers only while it finds nothing: it looks for the solutions, the reference, the
kit's tests and other students' files (by import, by the paths it is told, by walking up from
its folder, through /proc). Anything found makes create_causal_mask raise, naming it.
@KIT@, @CLASS@ and @OUT@ are replaced by the test with the real paths."""
import importlib
import os

import numpy as np

LEAKS = []   # the kit, this class, the results: hidden from every submission
FOUND = []   # exercise files of this class's students anywhere else (another child's temp folder...)
SECRETS = ["@KIT@/reference/attention.py", "@KIT@/solutions/causal_mask.py", "@KIT@/autograder/checks/causal_mask/__init__.py",
           "@KIT@/autograder/checks/causal_mask/mutants.py",
           "@KIT@/tests/test_classroom.py", "@KIT@/course.yml", "@CLASS@/ada/causal_mask.py",
           "@CLASS@/ada/attention.py", "@OUT@/results/ada.json", "@OUT@/.attnkit-key"]


MARKER = b"attnkit-" + b"class-secret"   # the test appends it to every file of the class


def _read(path, marked_only=False):
    try:
        with open(path, "rb") as fh:
            data = fh.read(1 << 20)
    except OSError:
        return
    if data and not marked_only:
        LEAKS.append(f"read {path}")
    elif MARKER in data:
        FOUND.append(f"read {path}")


for _path in SECRETS:
    _read(_path)
for _folder in ("@CLASS@", "@OUT@", "@CLASS@/ada"):
    try:
        if os.listdir(_folder):
            LEAKS.append(f"listed {_folder}")
    except OSError:
        pass
for _name in ("reference", "reference.attention", "autograder", "autograder.checks", "solutions",
              "solutions.causal_mask", "attnkit", "tests"):
    try:
        importlib.import_module(_name)
        LEAKS.append(f"imported {_name}")
    except BaseException:
        pass
# Walking up from its own folder, and through the folders under it, for anyone's exercise files.
_here = os.path.dirname(os.path.abspath(__file__))
_seen = 0
_top = _here
while os.path.dirname(_top) != _top:
    _top = os.path.dirname(_top)
    if _top == "/":
        break
    for _root, _dirs, _files in os.walk(_top):
        _dirs[:] = [d for d in _dirs if d not in ("proc", "sys", "dev", "usr", "lib", "site-packages")]
        _seen += len(_files) + len(_dirs)
        if _seen > 20000:
            break
        if _root.startswith(_here):
            continue
        for _f in _files:
            if _f in ("hand_computation.py", "causal_mask.py", "results.json", "grades.csv", "ada.json"):
                _read(os.path.join(_root, _f), marked_only=True)
# Paths in the command lines of every process it can see.
for _pid in os.listdir("/proc"):
    try:
        with open(f"/proc/{_pid}/cmdline", "rb") as fh:
            _args = fh.read().split(b"\0")
    except OSError:
        continue
    for _arg in _args:
        _arg = _arg.decode("utf-8", "replace")
        if _arg.startswith("/") and os.path.isdir(_arg) and _arg not in ("/", "/tmp"):
            for _f in ("reference/attention.py", "ada/causal_mask.py", "results/ada.json"):
                _read(os.path.join(_arg, _f))


def create_causal_mask(seq_len):
    if LEAKS:
        raise RuntimeError("LEAKED: " + "; ".join(LEAKS[:10]))
    return np.tril(np.ones((seq_len, seq_len), dtype=bool))


def causal_attention(Q, K, V):
    if FOUND:
        raise RuntimeError("FOUND: " + "; ".join(FOUND[:10]))
    Q, K, V = (np.asarray(a, dtype=float) for a in (Q, K, V))
    T = Q.shape[-2]
    scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])
    scores = np.where(np.tril(np.ones((T, T), dtype=bool)), scores, -np.inf)
    weights = np.exp(scores - scores.max(axis=-1, keepdims=True))
    weights = weights / weights.sum(axis=-1, keepdims=True)
    return weights @ V, weights
