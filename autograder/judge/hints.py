"""Hints that several exercises share (their catalogues, autograder/checks/<stem>/misconceptions.py,
give each to their entries); a hint one exercise alone gives is written in its catalogue.

A hint says what went wrong, where to look, and gives a nudge; it never holds code to copy.
"""

NO_SCALING = ("The scores were never divided by sqrt(d_k), so they grow with the dimension and the softmax "
              "becomes nearly one-hot. Look at the line between the dot products and the softmax, and divide "
              "by the square root of the keys' feature size.")
SCALED_BY_DK = ("The scores were divided by d_k itself instead of by its square root, which shrinks them too "
                "much and flattens the weights. The variance of a dot product of d_k unit-variance terms is d_k; "
                "its standard deviation, the thing to divide by, is sqrt(d_k).")
SCALED_BY_WRONG_SIZE = ("The scores were divided by the square root of a size that is not d_k: the number of "
                        "tokens (keys), V's feature size d_v, or a size taken from an axis counted from the front "
                        "(d_k only for a 2-D K; on a batch it counts keys or batch entries). Take d_k from the "
                        "last axis of Q or K, whatever leading dimensions they have.")
WRONG_AXIS = ("The softmax normalised along another axis than the keys (along each row): down each column, over "
              "the queries, or on batched scores across the batch. Each query distributes one unit of attention "
              "over the keys, so the sum must run over the last axis of the scores.")
HARDCODED_AXIS = ("The softmax axis is a fixed number that is the key axis only for 2-D scores; with leading "
                  "batch (or head) dimensions it normalises over another axis. Count the axis from the end: "
                  "the keys are always the last one.")
KEYS_NOT_TRANSPOSED = ("The scores were computed from Q and K without transposing K: this multiplies rows of Q by "
                       "columns of K and only runs because the shapes happen to be square here. Each score is the "
                       "dot product of one query row with one key row, so K must be transposed on its last two "
                       "axes.")
MASK_IGNORED = ("The mask was accepted but never used: blocked keys still get weight. Find where the scores are "
                "computed and make blocked positions impossible before the softmax.")
MASK_INVERTED = ("The mask was read the wrong way round: keys marked 1/True (may attend) were blocked and keys "
                 "marked 0/False were allowed. In this kit 1 means 'may attend'; block where the mask is 0.")
MASK_AFTER_SOFTMAX = ("The mask was applied after the softmax, by zeroing weights, so the remaining weights no "
                      "longer add up to 1. Mask the scores before normalising: replace blocked scores by a large "
                      "negative number (or -inf) and let the softmax do the rest.")
MASK_FILL_ZERO = ("Blocked scores were set to 0 (or multiplied by the 0/1 mask), but exp(0) = 1: a blocked key "
                  "still gets as much weight as a key with score 0. A blocked score must become a large negative "
                  "number (or -inf), so that its exponential is 0.")
TRANSPOSE_ALL_AXES = ("K.T (or a transpose given no axes) reverses EVERY axis of K, not just the last two: on a "
                      "batch of shape (batch, n_k, d_k) it gives (d_k, n_k, batch), so the product fails (or mixes "
                      "batch entries). Swap only the last two axes of K, the ones that hold keys and features.")
TRUTH_VALUE = ("The code tests an array with `if` (for example `if mask:`), which has no single truth value when "
               "the array has more than one element. To ask whether a mask was given, compare it with None; to "
               "ask something about its entries, say which entries (any of them, all of them).")
LOW_PRECISION_HINT = ("Your numbers were computed in {dtype}, a 16-bit float with about 3 significant digits: rows of weights "
                      "add up to 1 only within about 0.001, and the values are off by as much. Compute in float32 "
                      "or float64 (leave the inputs' dtype as it is, or cast to float64).")
TRANSPOSE_FIXED_AXES = ("K's axes were swapped by number counted from the front (axes 1 and 2, as in code written "
                        "for a (batch, n, d) array): those are the keys and features only for a 3-D K. On a single "
                        "(n_k, d_k) array there is no axis 2, and with two batch axes the wrong ones are swapped. "
                        "Count the axes from the end: the last two, whatever leading dimensions there are.")
MASK_TRANSPOSED = ("The mask was applied with its last two axes swapped: its rows were read as keys and its columns "
                   "as queries. A padding mask of shape (batch, 1, 1, seq) then blocks whole queries instead of "
                   "keys, and a (n_q, n_k) mask no longer fits scores of that shape. The mask's last axis is the "
                   "keys, like the scores'.")
RETURNS_SWAPPED = ("The function returns (weights, output) instead of (output, weights): the two arrays are right "
                   "but in the wrong order, which shows as swapped shapes when d_v differs from the number of keys. "
                   "Return the output first, then the weights.")
MASK_ALWAYS_CAUSAL = ("A causal (lower-triangular) mask is applied whatever mask is passed in: a padding mask or any "
                      "other pattern is ignored. Use the mask you are given, as it is, broadcast to the scores' "
                      "shape.")
MASK_RANK = ("The mask is applied only when it has one particular number of dimensions (only a 2-D mask, say, "
             "or only a 4-D one); masks of the other ranks, such as (seq, seq), (batch, 1, seq, seq) or a padding "
             "mask (batch, 1, 1, seq), are skipped. Any mask that broadcasts to the scores' shape must be "
             "applied, whatever its rank.")
MASK_ADDITIVE = ("The 0/1 mask was added to the scores, as if it were an additive mask: allowed keys get +1 and "
                 "blocked keys nothing. A 1/0 mask says which keys are allowed; blocked scores must be replaced "
                 "by a large negative number before the softmax. (torch's scaled_dot_product_attention adds a "
                 "float attn_mask to the scores in just this way; give it a boolean mask, True = may attend.)")
MASK_BOOLEAN_INDEX = ("The scores were indexed with a boolean mask (scores[mask == 0] = ...), which needs the mask "
                      "in exactly the scores' shape; a (n_q, n_k) mask on batched scores, or a padding mask of shape "
                      "(batch, 1, 1, n_k), has fewer or size-1 axes and does not broadcast there. Broadcast the mask "
                      "to the scores' shape first, or choose between the score and the fill value element by element.")
MASK_BITWISE_NOT = ("`~` was used to flip the mask, but it is a logical not only for a boolean mask: on a 0/1 float "
                    "mask it is an error, and on a 0/1 integer mask it turns 1 into -2 and 0 into -1, both of them "
                    "'true', so every key is blocked. Ask which entries are 0 (mask == 0) to find the blocked keys, "
                    "whatever the mask's dtype.")
# What a hint that quotes a construct speaks of, as written in a file (Misconception.quotes, judge/quoted.py):
# the entry is named only where the student's file holds it. Each errs on the side of holding it.
BITWISE_NOT_WRITTEN = r"~|\binvert\b|bitwise_not"                          # MASK_BITWISE_NOT's `~`
ALL_AXES_REVERSED_WRITTEN = r"\.T\b|\.transpose\(\s*\)|\btranspose\(\s*[\w.]+\s*\)"   # TRANSPOSE_ALL_AXES's K.T
# TRANSPOSE_FIXED_AXES's axes counted from the front: a non-negative axis number in a call that moves axes
FRONT_AXES_WRITTEN = r"\b(transpose|permute|swapaxes|swapdims|movedim|moveaxis)\([^)\n]*?(?<![-\w.])\d"
# HARDCODED_AXIS's fixed number: axis=1, dim=1, .softmax(1), .sum(1, ...), softmax(x, 1)
FIXED_AXIS_WRITTEN = (r"\b(axis|dim)\s*=\s*[(\[]?\s*\d|\.(softmax|log_softmax|sum|max|amax|logsumexp)\(\s*\d"
                      r"|\b(softmax|sum|max|amax|logsumexp)\([^\n]*,\s*\d+\s*[,)]")
TRUTH_TEST_WRITTEN = r"\b(if|elif|while|and|or|not|assert)\b|\bbool\("       # TRUTH_VALUE's `if mask:`
# MASK_BOOLEAN_INDEX's scores[mask == 0] = ...: an item assigned, or an index made of a comparison or a mask
BOOLEAN_INDEX_WRITTEN = r"\]\s*=(?!=)|\w\s*\[[^\]\n]*(==|!=|~|<|>|\bmask)"
RESHAPE_WRITTEN = r"\breshape\b|\.view\(|\bflatten\b|\brearrange\b"      # the multi-head hints' bare reshape
ARGUMENT_CHANGED = ("The function changes an array it was given, in place, so the caller's array is not what it "
                    "was after the call: an in-place operator on an argument (`Q /= sqrt(d_k)`, `x -= the row "
                    "maximum`), an assignment into it (`scores[mask == 0] = -1e9` on "
                    "an array passed in), `out=` an argument, or setting its shape. When the same array is passed "
                    "as Q, K and V (self-attention) the change reaches all three. Make a new array instead: an "
                    "ordinary operator (`Q = Q / ...`) writes its result into a new one.")
