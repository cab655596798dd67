"""Read a template and its environment files on the client, as the ``openstack`` CLI does.

The server cannot read the user's disk, so everything a template refers to travels in the
request's ``files`` map: each ``get_file`` target, each template used as a resource type
(``type: child.yaml``), each provider template an environment's ``resource_registry`` maps
to, recursively through the nested templates. Files are keyed by the reference exactly as
written (which is where the server looks them up) and read relative to the file that names
them. The template itself is sent as its text; one that is neither JSON nor YAML is refused
here, naming the file with the line and column (the server only knows it as ``[root
stack]``), and so is a nested template or an environment file. Environment files go
by name in ``environment_files``, their contents in ``files``, and the server merges them
in the order given, as it does for the ``openstack`` CLI.

Templates and environments are local paths or URLs (``file:``, ``http:``, ``https:``).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urljoin, urlparse
from urllib.request import url2pathname

import click
import httpx
import yaml

from kiln.template.yaml_loader import HeatLoader, PyHeatLoader, describe_error

#: Seconds to fetch one template over HTTP.
FETCH_TIMEOUT = 30.0
_TEMPLATE_SUFFIXES = (".yaml", ".yml", ".template", ".json")


class TemplateError(click.ClickException):
    """A template or environment file that cannot be read."""


def _location(ref: str) -> str:
    """A URL for a path or URL given on the command line."""
    if urlparse(ref).scheme in ("http", "https", "file"):
        return ref
    return Path(os.path.abspath(ref)).as_uri()


def read_location(url: str) -> str:
    parsed = urlparse(url)
    if parsed.scheme == "file":
        path = Path(url2pathname(parsed.path))
        try:
            return path.read_text(encoding="utf-8")
        except OSError as exc:
            raise TemplateError(f"cannot read {path}: {exc.strerror}") from exc
        except UnicodeDecodeError as exc:
            raise TemplateError(f"{path} is not UTF-8 text") from exc
    if parsed.scheme in ("http", "https"):
        try:
            response = httpx.get(url, timeout=FETCH_TIMEOUT, follow_redirects=True)
            response.raise_for_status()
        except httpx.HTTPError as exc:
            raise TemplateError(f"cannot fetch {url}: {exc}") from exc
        return response.text
    raise TemplateError(f"cannot read {url}: only local files and http(s) URLs")


def _shown(url: str) -> str:
    """How a file is named in an error: a local path as the user would type it."""
    parsed = urlparse(url)
    if parsed.scheme != "file":
        return url
    path = url2pathname(parsed.path)
    relative = os.path.relpath(path)
    return path if relative.startswith("..") else relative


def _parse(text: str, url: str) -> Any:
    """The document (JSON first, then YAML, as the server reads it); a YAML error names
    the file with its line and column."""
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        pass
    try:
        return yaml.load(text, Loader=HeatLoader)  # a safe loader subclass
    except yaml.YAMLError:
        pass
    except RecursionError:
        return None  # nested too deeply: the server words it
    try:  # the pure loader words the problem the way PyYAML's documentation shows it
        yaml.load(text, Loader=PyHeatLoader)
    except yaml.YAMLError as exc:
        raise TemplateError(describe_error(exc, _shown(url))) from None
    except RecursionError:
        pass
    return None


def _walk(value: Any) -> Iterator[dict[str, Any]]:
    if isinstance(value, dict):
        yield value
        for item in value.values():
            yield from _walk(item)
    elif isinstance(value, list):
        for item in value:
            yield from _walk(item)


def _is_template_name(name: Any) -> bool:
    return isinstance(name, str) and (
        name.endswith(_TEMPLATE_SUFFIXES) or urlparse(name).scheme in ("http", "https",
                                                                       "file"))


@dataclass
class Bundle:
    """What a request body carries besides its parameters."""

    template: str | None = None
    files: dict[str, str] = field(default_factory=dict)
    environment_files: list[str] = field(default_factory=list)
    #: the template as parsed here (None when it does not parse), for the update plan
    parsed: Any = None

    def _add(self, key: str, content: str) -> bool:
        """Store a file; False when it was there already with the same content."""
        if key in self.files:
            if self.files[key] != content:
                raise TemplateError(
                    f"two different files are referred to as {key!r}; rename one")
            return False
        self.files[key] = content
        return True

    def _collect_template(self, doc: Any, base: str) -> None:
        for node in _walk(doc):
            target = node.get("get_file")
            if isinstance(target, str) and len(node) == 1:
                self._add(target, read_location(urljoin(base, target)))
            rtype = node.get("type") if "properties" in node or "type" in node else None
            if _is_template_name(rtype):
                self._nested(str(rtype), base)

    def _nested(self, name: str, base: str) -> None:
        url = urljoin(base, name)
        content = read_location(url)
        if self._add(name, content):
            self._collect_template(_parse(content, url), url)

    def add_environment(self, ref: str) -> None:
        url = _location(ref)
        content = read_location(url)
        env = _parse(content, url)
        if env is not None and not isinstance(env, dict):
            raise TemplateError(f"{ref}: an environment must be a YAML mapping")
        self._add(url, content)
        self.environment_files.append(url)
        registry = (env or {}).get("resource_registry") or {}
        for node in _walk(registry):
            for key, target in node.items():
                if key != "hooks" and _is_template_name(target):
                    self._nested(str(target), url)


def load(template: str | None, environments: tuple[str, ...] = ()) -> Bundle:
    """Read ``template`` (path or URL) and the environment files, collecting ``files``."""
    bundle = Bundle()
    for env in environments:
        bundle.add_environment(env)
    if template is not None:
        url = _location(template)
        bundle.template = read_location(url)
        bundle.parsed = _parse(bundle.template, url)
        if isinstance(bundle.parsed, dict):
            bundle._collect_template(bundle.parsed, url)
    return bundle


def parameters(pairs: tuple[str, ...]) -> dict[str, str]:
    """``--parameter k=v`` (repeatable; ``k=v1;v2`` as the openstack CLI allows)."""
    result: dict[str, str] = {}
    for pair in pairs:
        for item in pair.split(";") if ";" in pair and "=" in pair.split(";")[-1] else [pair]:
            key, sep, value = item.partition("=")
            if not sep or not key:
                raise click.BadParameter(f"{item!r} is not KEY=VALUE", param_hint="--parameter")
            result[key] = value
    return result


def parameter_files(pairs: tuple[str, ...]) -> dict[str, str]:
    """``--parameter-file k=path``: the file's contents as the value."""
    result: dict[str, str] = {}
    for pair in pairs:
        key, sep, path = pair.partition("=")
        if not sep or not key:
            raise click.BadParameter(f"{pair!r} is not KEY=FILE", param_hint="--parameter-file")
        result[key] = read_location(_location(path))
    return result
