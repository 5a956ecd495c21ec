"""A student's feedback page as HTML (OUT/feedback/<student>.html), rendered from
templates/feedback.html.j2: the Markdown page, rendered with raw HTML disabled, with the pictures
of the failed checks that carry picture data under their exercise's section (hidden checks only
when the course shows hidden details). Self-contained: inline SVG, no network."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from markdown_it import MarkdownIt
from markupsafe import Markup

from autograder.config.course import CourseConfig
from autograder.reports.feedback import feedback_sections
from autograder.reports.final_grade import Grade
from autograder.reports.pictures import render
from autograder.reports.templating import render as render_page
from autograder.reports.causes import causes
from autograder.results import CheckResult, SubmissionResult

CAPTION = {"weights": "your attention weights beside the expected ones (query position by key position)",
           "output": "your output beside the expected one (position by feature)",
           "scaling": "your scaling statistics against the reference curves",
           "figure": "the lines of your plot beside the results it was given"}


@dataclass(frozen=True)
class Picture:
    caption: str
    svg: Markup         # drawn by the kit, which escapes any student text in it


@dataclass(frozen=True)
class Section:
    html: Markup        # Markdown rendered with raw HTML off: every text in it is escaped
    pictures: tuple[Picture, ...]


@lru_cache(maxsize=1)
def _markdown() -> MarkdownIt:
    """CommonMark with tables; raw HTML in the text is shown as text, never as HTML."""
    return MarkdownIt("commonmark", {"html": False}).enable("table")


def feedback_html(result: SubmissionResult, course: CourseConfig, shown: str | None = None,
                  grade: Grade | None = None) -> str:
    # One picture per cause: the first of its checks the student may see that has one.
    result = result.for_student(course.show_hidden)
    pictures = {ex.stem: tuple(p for cause in causes(ex.checks)
                               for c in [next((c for c in cause.checks if c.visual), None)] if c
                               for p in _picture(c))
                for ex in result.exercises}
    sections = [Section(Markup(_markdown().render("\n".join(part.lines))), pictures.get(part.stem, ()))
                for part in feedback_sections(result, course, shown, grade)]
    return render_page("feedback.html.j2", course=course.course, assignment=result.assignment,
                       student=shown or result.student, sections=sections)


def _picture(check: CheckResult) -> tuple[Picture, ...]:
    svg = render(check.visual)
    if not svg:
        return ()
    return (Picture(f"{check.check_id}: {CAPTION.get(check.visual.get('kind'), 'picture')}", Markup(svg)),)
