"""Adapted from Raschka's CausalAttention (LLMs from scratch, ch. 3): no layers, transpose of the last two axes."""
import torch


def create_causal_mask(seq_len):
    # the book's mask marks the FUTURE with 1; the contract wants 1 where attending is allowed
    future = torch.triu(torch.ones(seq_len, seq_len), diagonal=1)
    return (1 - future).numpy()


def causal_attention(Q, K, V):
    queries, keys, values = (torch.as_tensor(a) for a in (Q, K, V))
    num_tokens = queries.shape[-2]
    attn_scores = queries @ keys.transpose(-2, -1)
    future = torch.triu(torch.ones(num_tokens, num_tokens), diagonal=1)
    attn_scores = attn_scores.masked_fill(future.bool()[:num_tokens, :num_tokens], -torch.inf)
    attn_weights = torch.softmax(attn_scores / num_tokens ** 0.5, dim=-1)
    context_vec = attn_weights @ values
    return context_vec, attn_weights
