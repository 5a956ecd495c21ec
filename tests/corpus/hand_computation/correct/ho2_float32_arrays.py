import numpy as np

SCORES = np.array([[1, 1], [1, 0]], dtype=np.float32)
SCALED_SCORES = (SCORES / np.sqrt(np.float32(2))).astype(np.float32)
WEIGHTS = np.array([[0.5, 0.5], [0.6698, 0.3302]], dtype=np.float32)
OUTPUT = np.array([[1.5, 1.5], [1.6698, 1.3302]], dtype=np.float32)
CSM_SCORES = np.array([[1.93, 1.09, 1.08], [1.09, 1.07, 0.55], [1.08, 0.55, 0.98]], dtype=np.float32)
CSM_WEIGHTS = np.array([[0.4327, 0.2843, 0.2829], [0.3632, 0.3596, 0.2772], [0.3679, 0.2822, 0.3499]], dtype=np.float32)
CSM_OUTPUT = np.array([[0.6878, 0.5289, 0.313, 0.5448], [0.6374, 0.5607, 0.3027, 0.5175],
                       [0.6625, 0.5079, 0.3467, 0.5122]], dtype=np.float32)
