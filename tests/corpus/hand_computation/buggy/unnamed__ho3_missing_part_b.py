SCORES = [[1.0, 1.0], [1.0, 0.0]]
SCALED_SCORES = [[0.71, 0.71], [0.71, 0.0]]
WEIGHTS = [[0.5, 0.5], [0.67, 0.33]]
OUTPUT = [[1.5, 1.5], [1.67, 1.33]]
# Part B: not done yet
