"""Signals of copying for the instructor: hand answers that are another variant's key (hand_answers)."""
