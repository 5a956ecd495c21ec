"""One student's grade as every output says it: the score the work earned (raw), the late
penalty, the final score, in that order, with the same numbers (the feedback page, grades.csv, the
report, the exports, the Moodle worksheet's comment). The penalty is course.yml's late policy
(late_policy.Lateness); the final score is what the gradebook gets, in the gradebook column's
own points where they differ from the course's (`--assignment`).
"""

from __future__ import annotations

from dataclasses import dataclass

from autograder.intake.late_policy import Lateness


def points(x: float) -> str:
    """A number of points as every page writes it (7, 6.3, 38.75)."""
    return f"{round(x, 2):g}"


@dataclass(frozen=True)
class Grade:
    raw: float                            # what the checks earned
    max_score: float
    penalty: float = 0.0                  # points off for lateness (course.yml `late:`)
    column_points: float | None = None    # the gradebook column's points, when they are not the course's
    lateness: Lateness | None = None      # what the penalty is for: when the work came, the percent off
    changed: float = 0.0                  # points the instructor's overrides added to the grader's (in `raw`)
    changes: tuple[str, ...] = ()         # those overrides, as grades.csv says them

    @classmethod
    def held(cls, raw: float, max_score: float, lateness: Lateness | None,
             column_points: float | None = None, changed: float = 0.0, changes: tuple[str, ...] = ()) -> "Grade":
        """The grade of a score held against its due date (`lateness` None: no late policy)."""
        penalty = lateness.penalty(raw) if lateness is not None else 0.0
        return cls(raw, max_score, penalty, column_points, lateness, changed, changes)

    @property
    def final(self) -> float:
        return round(self.raw - self.penalty, 2)

    @property
    def in_column(self) -> float | None:
        """The final score in the gradebook column's points (None: the column has the course's)."""
        if not self.column_points or not self.max_score or self.column_points == self.max_score:
            return None
        return round(self.final * self.column_points / self.max_score, 2)

    def said(self, bold: str = "") -> str:
        """"Score 43 - 4.3 late penalty = 38.7 / 53 (73.02 / 100 in the gradebook)"; without a
        penalty "Score 43 / 53". `bold`: the Markdown around the final score."""
        final = f"{bold}{points(self.final)} / {points(self.max_score)}{bold}"
        text = f"Score {points(self.raw)} - {points(self.penalty)} late penalty = {final}" if self.penalty else \
            f"Score {final}"
        if self.in_column is not None:
            text += f" ({points(self.in_column)} / {points(self.column_points)} in the gradebook)"
        return text
