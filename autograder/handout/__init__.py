"""The student handout: what a course gives students, without the answer key.

`student_check.py` is copied as the handout's `check.py`, and `check_answers.py` (its comparisons,
which the grader imports too) beside it; they import nothing of the kit (numpy and the standard
library; torch for a module's forward). `data.py` writes the data of the visible checks they read;
`write.py` puts the handout together (`attnkit handout OUT`).
"""
