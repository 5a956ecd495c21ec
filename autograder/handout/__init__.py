"""The student handout: the top floor, what a course gives students, without the answer key.

The builder: `write.py` puts the handout together (`attnkit handout OUT`; a handout per student,
`per_student.py`), `data.py` writes the data of the visible checks. The driver students run:
`student_check.py`, copied as the handout's `check.py`, with `unjailed*.py` (what check.py alone
needs: the student's code run in a plain child with the grader's time limits, another exercise
run from the student's own files) and the judge package (autograder/judge/, kit-free) beside it,
byte for byte (write.MODULES). check.py holds no judgement of its own: which file counts, the
comparisons, causes, hints and points are the judge's.
"""
