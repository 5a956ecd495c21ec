SCORES = [[0, 0], [0, 0]]
SCALED_SCORES = [[0, 0], [0, 0]]
WEIGHTS = [[0, 0], [0, 0]]
OUTPUT = [[0, 0], [0, 0]]
CSM_SCORES = [[0] * 3] * 3
CSM_WEIGHTS = [[0] * 3] * 3
CSM_OUTPUT = [[0] * 4] * 3
