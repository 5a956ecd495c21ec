"""The one jinja2 environment every HTML page of the kit is rendered with (templates/*.html.j2).

Autoescape is on for every template, whatever its name: student text (folder and file names,
messages, printed output, plot labels) is data and is escaped wherever a template writes it. Only
markup the kit made itself is passed in as `Markup` (pictures, Markdown rendered with raw HTML
off), and every such picture escapes the student text it holds. An undefined name is an error,
never an empty string.
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import lru_cache

import re

import jinja2
from markupsafe import Markup, escape

from autograder.reports.maths import readable


@lru_cache(maxsize=1)
def environment() -> jinja2.Environment:
    env = jinja2.Environment(loader=jinja2.PackageLoader("autograder.reports", "templates"), autoescape=True,
                             undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True,
                             keep_trailing_newline=True)
    env.filters.update(pts=points, pct=percent, prose=prose)
    return env


def render(template: str, **context) -> str:
    return environment().get_template(template).render(**context)


def render_pieces(template: str, **context) -> Iterator[str]:
    """`render`, as pieces in order: a page of a large class written to its file as it is made
    (joined, its many pieces were megabytes held at once)."""
    return environment().get_template(template).generate(**context)


def points(x) -> str:
    """A number of points as few digits as it needs ("" for none)."""
    return "" if x is None else f"{x:g}"


def percent(x) -> str:
    """A fraction 0..1 as a whole percentage ("" for none)."""
    return "" if x is None else f"{100 * x:.0f}%"


_CODE_SPAN = re.compile(r"`([^`]+)`")


def prose(text) -> Markup:
    """The kit's own prose (a misconception's description, a title): its `code` spans as code, its
    maths as it reads (maths.readable), every character of it escaped."""
    parts = _CODE_SPAN.split(str(text or ""))
    # re.split with one group: the text between spans at even indices, the spans' code at odd ones
    return Markup("").join(Markup("<code>{}</code>").format(part) if index % 2 else escape(readable(part))
                           for index, part in enumerate(parts))
