# the second output row from e^s, before dividing by the row's sum; the weights typed right
SCORES = [[1.0, 1.0], [1.0, 0.0]]
SCALED_SCORES = [[0.71, 0.71], [0.71, 0.0]]
WEIGHTS = [[0.5, 0.5], [0.67, 0.33]]
OUTPUT = [[1.5, 1.5], [5.07, 4.03]]
CSM_SCORES = [[1.93, 1.09, 1.08], [1.09, 1.07, 0.55], [1.08, 0.55, 0.98]]
CSM_WEIGHTS = [[0.43, 0.28, 0.28], [0.36, 0.36, 0.28], [0.37, 0.28, 0.35]]
CSM_OUTPUT = [[0.69, 0.53, 0.31, 0.54], [0.64, 0.56, 0.30, 0.52], [0.66, 0.51, 0.35, 0.51]]
