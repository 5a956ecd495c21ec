"""I checked my hand numbers with plain Python (math only)."""
import math

Q = [[1, 0], [0, 1]]
K = [[1, 1], [1, 0]]
V = [[2, 1], [1, 2]]


def matmul(a, b):
    return [[sum(a[i][k] * b[k][j] for k in range(len(b))) for j in range(len(b[0]))] for i in range(len(a))]


def transpose(a):
    return [list(r) for r in zip(*a)]


def softmax_rows(m):
    out = []
    for row in m:
        top = max(row)
        ex = [math.exp(v - top) for v in row]
        s = sum(ex)
        out.append([e / s for e in ex])
    return out


SCORES = matmul(Q, transpose(K))
SCALED_SCORES = [[v / math.sqrt(2) for v in r] for r in SCORES]
WEIGHTS = softmax_rows(SCALED_SCORES)
OUTPUT = matmul(WEIGHTS, V)

X = [[1.0, 0.5, 0.2, 0.8], [0.3, 0.9, 0.1, 0.4], [0.6, 0.2, 0.7, 0.3]]
CSM_SCORES = matmul(X, transpose(X))
CSM_WEIGHTS = softmax_rows([[v / 2 for v in r] for r in CSM_SCORES])
CSM_OUTPUT = matmul(CSM_WEIGHTS, X)
