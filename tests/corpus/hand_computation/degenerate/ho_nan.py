nan = float("nan")
SCORES = [[nan, nan], [nan, nan]]
SCALED_SCORES = SCORES
WEIGHTS = SCORES
OUTPUT = SCORES
CSM_SCORES = [[nan] * 3] * 3
CSM_WEIGHTS = CSM_SCORES
CSM_OUTPUT = [[nan] * 4] * 3
