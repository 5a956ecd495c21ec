"""Signals of copying for the instructor: code unusually similar across the class (similarity,
fingerprint, class_code), which never changes a grade; and hand answers that are another
student's variant key (hand_answers), which are wrong for their own variant anyway."""
