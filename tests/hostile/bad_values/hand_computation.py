"""Hand answers that are not numbers, or not the right shape."""
SCORES = [[float("nan"), 1.0], [1.0, float("nan")]]
SCALED_SCORES = None
WEIGHTS = "0.5 0.5 0.5 0.5"
OUTPUT = {"row0": [1.5, 1.5], "row1": [1.5, 1.5]}
CSM_SCORES = [[1.0, 2.0]]
CSM_WEIGHTS = [[0.3, 0.3, "a"], [0.3, 0.3, 0.3], [0.3, 0.3, 0.3]]
CSM_OUTPUT = [[float("inf")] * 4] * 3
