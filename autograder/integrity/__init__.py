"""Integrity signals for the instructor (code similarity, hand answers): they never change a grade."""
