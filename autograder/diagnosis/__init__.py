"""Diagnosis: which misconception explains a wrong answer (`explain`), and what was seen in it (`observations`)."""
