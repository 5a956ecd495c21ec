"""split_heads asks the provided create_causal_mask for a 60000 x 60000 mask with a float size,
which an int-only size cap does not see."""
from causal_mask import create_causal_mask


def split_heads(x, num_heads):
    return create_causal_mask(60000.0)
