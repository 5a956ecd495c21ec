"""Small classes for each step; the contract functions only wire them together."""
from dataclasses import dataclass

import numpy as np


class Softmax:
    def __init__(self, axis=-1):
        self.axis = axis

    def __call__(self, x):
        x = np.asarray(x, dtype=np.float64)
        z = x - np.amax(x, axis=self.axis, keepdims=True)
        ez = np.exp(z)
        return ez / ez.sum(axis=self.axis, keepdims=True)


@dataclass
class Scorer:
    d_k: int

    def __call__(self, Q, K):
        return np.matmul(Q, np.moveaxis(K, -1, -2)) / np.sqrt(self.d_k)


class Masker:
    FILL = np.finfo(np.float64).min / 2

    def __call__(self, scores, mask):
        if mask is None:
            return scores
        return np.where(np.not_equal(mask, 0), scores, self.FILL)


def softmax(x, axis=-1):
    return Softmax(axis)(x)


def scaled_dot_product_attention(Q, K, V, mask=None):
    Q, K, V = np.asarray(Q, dtype=np.float64), np.asarray(K, dtype=np.float64), np.asarray(V, dtype=np.float64)
    scores = Masker()(Scorer(Q.shape[-1])(Q, K), mask)
    weights = Softmax(-1)(scores)
    return weights @ V, weights
