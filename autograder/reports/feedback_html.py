"""A student's feedback page as HTML (OUT/feedback/<student>.html): the Markdown page, rendered
with raw HTML disabled, followed by pictures of the failed checks that carry picture data
(hidden checks only when the course shows hidden details). Self-contained: inline SVG, no network."""

from __future__ import annotations

import html
from functools import lru_cache

from markdown_it import MarkdownIt

from autograder.config import CourseConfig
from autograder.reports.feedback import feedback_markdown
from autograder.reports.pictures import render
from autograder.results import SubmissionResult

STYLE = """body{font:15px/1.5 system-ui,sans-serif;max-width:62em;margin:2em auto;padding:0 1em;color:#222}
table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:.2em .6em}
pre{background:#f5f5f5;padding:.6em;overflow-x:auto;white-space:pre-wrap}
figure{margin:1.5em 0}figcaption{font-weight:600;margin-bottom:.3em}svg{max-width:100%;height:auto}"""
CAPTION = {"weights": "your attention weights beside the expected ones",
           "scaling": "your scaling statistics against the reference curves",
           "figure": "the lines of your plot beside the results it was given"}


@lru_cache(maxsize=1)
def _markdown() -> MarkdownIt:
    """CommonMark with tables; raw HTML in the text is shown as text, never as HTML."""
    return MarkdownIt("commonmark", {"html": False}).enable("table")


def feedback_html(result: SubmissionResult, course: CourseConfig) -> str:
    body = _markdown().render(feedback_markdown(result, course))
    for ex in result.exercises:
        figures = [_figure(c) for c in ex.checks
                   if not c.passed and c.visual and (not c.hidden or course.show_hidden)]
        figures = [f for f in figures if f]
        if figures:
            body = _after_section(body, ex.stem, "".join(figures))
    title = html.escape(f"{course.course}: {result.assignment} - {result.student}")
    return (f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>{title}</title>'
            f'<meta name="viewport" content="width=device-width, initial-scale=1">'
            f"<style>{STYLE}</style></head><body>{body}</body></html>\n")


def _figure(check) -> str:
    svg = render(check.visual)
    if not svg:
        return ""
    caption = html.escape(f"{check.check_id}: {CAPTION.get(check.visual.get('kind'), 'picture')}")
    return f'<figure role="img" aria-label="{caption}"><figcaption>{caption}</figcaption>{svg}</figure>'


def _after_section(body: str, stem: str, figures: str) -> str:
    """`figures` at the end of the exercise's section (before the next heading or the closing
    seed line), so each picture sits under the checks it shows."""
    head = body.find(f"<h2><code>{html.escape(stem)}</code>")
    if head < 0:
        return body + figures
    ends = [i for i in (body.find("<h2>", head + 4), body.rfind("<p>Checks with random inputs")) if i > head]
    end = min(ends) if ends else len(body)
    return body[:end] + figures + body[end:]
