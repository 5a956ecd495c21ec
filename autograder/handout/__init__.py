"""The student handout: what a course gives students, without the answer key.

`student_check.py` is copied as the handout's `check.py` and imports nothing of the kit (numpy and
the standard library; torch for a module's forward); `data.py` writes the answers of the visible
checks it reads; `write.py` puts the handout together (`attnkit handout OUT`).
"""
