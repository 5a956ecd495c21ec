"""I did it on paper, then let plain Python redo the arithmetic (no numpy)."""
import math


def matmul(a, b):
    return [[sum(a[i][k] * b[k][j] for k in range(len(b))) for j in range(len(b[0]))] for i in range(len(a))]


def transpose(m):
    return [list(col) for col in zip(*m)]


def softmax_rows(m):
    result = []
    for row in m:
        top = max(row)
        exps = [math.exp(v - top) for v in row]
        total = sum(exps)
        result.append([e / total for e in exps])
    return result


Q = [[1, 0], [0, 1]]
K = [[1, 1], [1, 0]]
V = [[2, 1], [1, 2]]

SCORES = matmul(Q, transpose(K))
SCALED_SCORES = [[s / math.sqrt(2) for s in row] for row in SCORES]
WEIGHTS = softmax_rows(SCALED_SCORES)
OUTPUT = matmul(WEIGHTS, V)

X = [[1.0, 0.5, 0.2, 0.8],
     [0.3, 0.9, 0.1, 0.4],
     [0.6, 0.2, 0.7, 0.3]]
CSM_SCORES = matmul(X, transpose(X))
CSM_WEIGHTS = softmax_rows([[s / math.sqrt(4) for s in row] for row in CSM_SCORES])
CSM_OUTPUT = matmul(CSM_WEIGHTS, X)
