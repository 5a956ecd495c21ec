"""The student handout: what a course gives students, without the answer key.

`student_check.py` is copied as the handout's `check.py`, with `check_child.py` (the process that
imports the student's file and runs the calls), `check_answers.py` (its comparisons,
which the grader imports too), `check_properties.py` (the properties some checks test with code,
which the grader's checks call) and the sandbox's `convert.py` (as `check_convert.py`: how a dict or
a figure is read) beside it; they import nothing of the kit (numpy and the standard library; torch
for a module's forward, matplotlib for a figure). `data.py` writes the data of the visible checks they read;
`write.py` puts the handout together (`attnkit handout OUT`).
"""
