import numpy as np

Q = np.array([[1., 0.], [0., 1.]])
K = np.array([[1., 1.], [1., 0.]])
V = np.array([[2., 1.], [1., 2.]])
SCORES = Q @ K.T
SCALED_SCORES = SCORES / np.sqrt(2)
_e = np.exp(SCALED_SCORES)
WEIGHTS = _e / _e.sum(axis=1, keepdims=True)
OUTPUT = WEIGHTS @ V

X = np.array([[1.0, 0.5, 0.2, 0.8], [0.3, 0.9, 0.1, 0.4], [0.6, 0.2, 0.7, 0.3]])
CSM_SCORES = X @ X.T
_e = np.exp(CSM_SCORES / 2.0)
CSM_WEIGHTS = (_e / _e.sum(-1, keepdims=True)).astype(np.float32)
CSM_OUTPUT = CSM_WEIGHTS @ X.astype(np.float32)
