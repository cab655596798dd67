"""The documentation the tests run: the README (the front page) and the pages of the site
in docs/ (mkdocs.yml). Tests that run a page's commands read them from here, by page and
heading, so moving a section means changing one name, not every slicing expression."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
HEADING = re.compile(r"^(#{1,6}) (.*)$")
FENCE = re.compile(r"^\s*(```|~~~)")


def readme() -> str:
    return (ROOT / "README.md").read_text()


def page(name: str) -> str:
    """A page of the documentation site, by its path under docs/ (e.g. ``agents.md``)."""
    return (DOCS / name).read_text()


def section(text: str, title: str) -> str:
    """The part of a Markdown text under the first heading that starts with ``title`` (any
    level), up to the next heading of the same or a higher level. Lines inside code
    fences (a shell comment, ``# topics = ...``) are not headings."""
    lines = text.split("\n")
    start = level = None
    fenced = False
    for i, line in enumerate(lines):
        if FENCE.match(line):
            fenced = not fenced
            continue
        match = None if fenced else HEADING.match(line)
        if match is None:
            continue
        depth = len(match[1])
        if start is None:
            if match[2].startswith(title):
                start, level = i + 1, depth
        elif level is not None and depth <= level:
            return "\n".join(lines[start:i])
    if start is None:
        raise LookupError(f"no heading starting with {title!r}")
    return "\n".join(lines[start:])
