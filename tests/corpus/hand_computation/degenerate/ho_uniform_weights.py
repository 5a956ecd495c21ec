# guess: every weight equal, outputs the mean row
SCORES = [[1, 1], [1, 1]]
SCALED_SCORES = [[1, 1], [1, 1]]
WEIGHTS = [[0.5, 0.5], [0.5, 0.5]]
OUTPUT = [[1.5, 1.5], [1.5, 1.5]]
CSM_SCORES = [[1] * 3] * 3
CSM_WEIGHTS = [[1 / 3] * 3] * 3
CSM_OUTPUT = [[0.63, 0.53, 0.33, 0.5]] * 3
