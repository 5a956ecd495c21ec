# torch.matmul(q, k): the tutorial line with the transpose forgotten.
import math
import torch


def softmax(x, axis=-1):
    return torch.softmax(torch.as_tensor(x), dim=axis).numpy()


def scaled_dot_product_attention(Q, K, V, mask=None):
    q, k, v = torch.tensor(Q), torch.tensor(K), torch.tensor(V)
    scores = torch.matmul(q, k) / math.sqrt(q.size(-1))
    if mask is not None:
        scores = scores.masked_fill(torch.as_tensor(mask) == 0, float("-inf"))
    w = torch.softmax(scores, dim=-1)
    return torch.matmul(w, v).numpy(), w.numpy()
