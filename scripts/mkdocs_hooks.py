"""MkDocs hooks (mkdocs.yml ``hooks``): links from a documentation page to the repository's
other files.

The pages link to tests, templates and bench/README.md by relative paths (``../tests/...``),
which work where the Markdown is read in the repository. MkDocs only knows the files under
``docs/`` and, in strict mode, fails on such a link. This hook checks that each such target
exists in the checkout (and, for a Markdown file, that the ``#anchor`` is one of its
headings as GitHub names them), so a renamed test or heading still breaks the build, and
then makes it a link into the repository's web view when ``repo_url`` is set, or plain
text otherwise.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from mkdocs.exceptions import PluginError

LINK = re.compile(r"(?<!!)\[(?P<text>[^\]]+)\]\((?P<target>[^)\s#]+)(?P<anchor>#[^)\s]*)?\)")
FENCE = re.compile(r"^(```|~~~)")
HEADING = re.compile(r"^#{1,6} (.+?)\s*#*$")


def _github_anchors(path: Path) -> set[str]:
    """The anchors GitHub gives a Markdown file's headings (lower case, punctuation but
    ``-`` and ``_`` dropped, spaces as ``-``; a repeated one gets ``-1``, ``-2``...)."""
    seen: dict[str, int] = {}
    fenced = False
    for line in path.read_text().splitlines():
        if FENCE.match(line.lstrip()):
            fenced = not fenced
        match = None if fenced else HEADING.match(line)
        if match:
            slug = re.sub(r"[^\w\- ]", "", match[1].lower()).replace(" ", "-")
            count = seen.get(slug, 0)
            seen[slug] = count + 1
            if count:
                seen[f"{slug}-{count}"] = 1
    return set(seen)


def _outside(target: str, page_dir: Path, docs_dir: Path) -> Path | None:
    """The target's path when it leaves docs_dir (None for pages, URLs, anchors)."""
    if "://" in target or target.startswith(("/", "mailto:")):
        return None
    path = (page_dir / target).resolve()
    return None if path.is_relative_to(docs_dir) else path


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    docs_dir = Path(config["docs_dir"]).resolve()
    repo = Path(config["config_file_path"]).resolve().parent
    page_dir = (docs_dir / page.file.src_path).parent
    base = (config.get("repo_url") or "").rstrip("/")

    def replace(match: re.Match[str]) -> str:
        path = _outside(match["target"], page_dir, docs_dir)
        if path is None:
            return match[0]
        if not path.is_relative_to(repo) or not path.exists():
            raise PluginError(f"{page.file.src_path}: link to {match['target']}, "
                              "which is not in the repository")
        anchor = (match["anchor"] or "#")[1:]
        if anchor and path.suffix == ".md" and anchor not in _github_anchors(path):
            raise PluginError(f"{page.file.src_path}: link to {match['target']}#{anchor}, "
                              "which has no such heading")
        if not base:
            return match["text"]
        rel = path.relative_to(repo).as_posix()
        return f"[{match['text']}]({base}/blob/HEAD/{rel}{match['anchor'] or ''})"

    out, fenced = [], False
    for line in markdown.split("\n"):
        if FENCE.match(line.lstrip()):
            fenced = not fenced
        out.append(line if fenced else LINK.sub(replace, line))
    return "\n".join(out)
