"""A student's feedback page as HTML (OUT/feedback/<student>.html): the Markdown page, rendered
with raw HTML disabled, followed by pictures of the failed checks that carry picture data
(hidden checks only when the course shows hidden details). Self-contained: inline SVG, no network."""

from __future__ import annotations

import html

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


def feedback_html(result: SubmissionResult, course: CourseConfig) -> str:
    body = MarkdownIt("commonmark", {"html": False}).enable("table").render(feedback_markdown(result, course))
    figures = []
    for c in result.checks:
        if c.passed or not c.visual or (c.hidden and not course.show_hidden):
            continue
        svg = render(c.visual)
        if svg:
            caption = f"{c.check_id}: {CAPTION.get(c.visual.get('kind'), 'picture')}"
            figures.append(f'<figure role="img" aria-label="{html.escape(caption)}">'
                           f"<figcaption>{html.escape(caption)}</figcaption>{svg}</figure>")
    pictures = ("<h2>Pictures of what went wrong</h2>" + "".join(figures)) if figures else ""
    title = html.escape(f"{course.course}: {result.assignment} - {result.student}")
    return (f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>{title}</title>'
            f'<meta name="viewport" content="width=device-width, initial-scale=1">'
            f"<style>{STYLE}</style></head><body>{body}{pictures}</body></html>\n")
