"""Intake: which files of a student's upload are graded, and their source read without running it (archives, LMS downloads, rosters, notebooks' cells as Jupyter runs them)."""
