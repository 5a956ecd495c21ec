"""How the autograder presents results on Gradescope: chosen when the zip is made, stored in it."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

ROOT_ENV = "ATTNKIT_GRADESCOPE_ROOT"     # Gradescope's root; a test points it at a temporary copy
DEFAULT_ROOT = "/autograder"
SETTINGS_FILE = "gradescope.json"

Visibility = Literal["hidden", "after_due_date", "after_published", "visible"]


class GradescopeSettings(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    # What students see of a hidden check (course.yml `hidden: true`) before grades are published.
    hidden_visibility: Literal["hidden", "after_due_date", "after_published"] = "after_published"
    stdout_visibility: Visibility = "hidden"    # the autograder's own log, for instructors
    leaderboard: bool = False                   # a "score" column on Gradescope's leaderboard
    stdout_limit: int = Field(64 * 1024, ge=1024, le=1 << 24)   # bytes of the log shown
    python: str = ""                            # the Python (major.minor) the pins were made for
