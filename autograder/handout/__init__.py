"""The student handout: what a course gives students, without the answer key.

`student_check.py` is copied as the handout's `check.py`, with the grader's own kit-free modules
beside it, byte for byte (write.MODULES): `check_runner.py` and `check_child.py` (the file read and
run in a child process), `check_notebook.py` (a notebook as Jupyter's Run All runs it: the grader's
intake reads notebooks with it), `check_forms.py` (which form of an exercise counts: intake's
rule), `check_answers.py`, `check_properties.py`, `check_causes.py`, `check_clock.py` (how long a call
may take: the sandbox's clock too), `figure_reading.py` (the
comparisons, properties, causes and hints the grader imports), and the sandbox's `convert.py`,
`ipython_shell.py` and `errors.py`. They import nothing of the kit (the standard library, numpy;
torch and matplotlib where an exercise uses them). `data.py` writes the data of the visible checks
they read; `write.py` puts the handout together (`attnkit handout OUT`).
"""
