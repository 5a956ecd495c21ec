"""The instructor's CSV files (roster, gradebook export, overrides, submission times, extensions)
are read under one cap with one set of messages: too large, not UTF-8, unreadable."""

from __future__ import annotations

import pytest

from autograder.intake.gradebook_column import read_target
from autograder.intake.roster import RosterError, read_roster
from autograder.intake.student_csv import MAX_BYTES, csv_text
from autograder.intake.submitted_at import TimesError, read_times
from autograder.intake.late_policy import LateError, read_extensions


def _oversized(path, header: str):
    row = "ada,2026-11-20 10:00\n"
    path.write_text(header + row * (MAX_BYTES // len(row) + 10), encoding="utf-8")
    return path


@pytest.mark.parametrize("read, error, header", [
    (lambda p: read_times(p, "UTC", {"ada"}), TimesError, "student,submitted_at\n"),
    (lambda p: read_extensions(p, "UTC", {"ada"}), LateError, "student,due\n"),
])
def test_a_csv_larger_than_the_cap_is_refused_not_cut(tmp_path, read, error, header):
    """Cut at the cap, the last row would be half a row read as a whole one."""
    path = _oversized(tmp_path / "times.csv", header)
    with pytest.raises(error, match=rf"{path.name}: larger than 4 MB"):
        read(path)


def test_the_gradebook_export_has_the_rosters_messages(tmp_path):
    path = tmp_path / "gradebook.csv"
    path.write_bytes("Student,ID,SIS User ID,Lab (12)\nJos\xe9,1,2,\n".encode("latin-1"))
    with pytest.raises(RosterError, match=r"gradebook.csv: not UTF-8 \(byte \d+\); save it as \"CSV UTF-8\""):
        read_target(path, "Lab", "self_attention")
    with pytest.raises(RosterError, match="gradebook.csv: not UTF-8"):
        read_roster(path)


def test_a_folder_given_as_the_csv_is_named(tmp_path):
    with pytest.raises(TimesError, match=rf"{tmp_path.name}: Is a directory"):
        read_times(tmp_path, "UTC", {"ada"})


def test_the_text_is_read_without_its_byte_order_mark(tmp_path):
    path = tmp_path / "x.csv"
    path.write_bytes("\ufeffstudent,due\n".encode("utf-8"))
    assert csv_text(path, ValueError, "x") == "student,due\n"
