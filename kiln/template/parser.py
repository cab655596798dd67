"""Turning a request body into plain template data, safely.

Heat's rules: JSON is tried first, then YAML (safe loader; unquoted dates stay strings);
the result must be a mapping. Kiln adds the guarantees Heat lacks, because a template is
untrusted input:

* the size limit is checked before any parsing;
* flow nesting deeper than :data:`MAX_DEPTH` is refused *before* libyaml sees it
  (libyaml recurses on the C stack and crashes the process on ~100k nested brackets);
* the parsed data is walked once: nesting deeper than :data:`MAX_DEPTH` (so every later
  recursive walk is bounded far below Python's recursion limit) and YAML alias
  expansion beyond a budget proportional to the text ("billion laughs") are rejected.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

import yaml

from kiln.template import yaml_loader
from kiln.template.errors import (
    RequestLimitExceeded,
    StackValidationFailed,
    TemplateError,
    TemplateParseError,
)

#: Deepest nesting of maps/lists a template may have. Real templates stay under ~20.
MAX_DEPTH = 128
#: Alias expansion budget: parsed elements may not exceed this many per input character
#: (plus a floor), so shared YAML anchors cannot multiply the work of later passes.
EXPANSION_PER_CHAR = 4
EXPANSION_FLOOR = 100_000

_BRACKETS = re.compile(r"[\[\]{}]")


def check_size(text: str, max_size: int) -> None:
    if len(text) > max_size:
        raise RequestLimitExceeded(
            f"Request limit exceeded: Template size ({len(text)} bytes) exceeds maximum "
            f"allowed size ({max_size} bytes).")


def flow_depth_ok(text: str) -> bool:
    """Upper bound of bracket nesting; quoted brackets only make it more cautious."""
    depth = 0
    for ch in _BRACKETS.findall(text):
        if ch in "[{":
            depth += 1
            if depth > MAX_DEPTH:
                return False
        elif depth:
            depth -= 1
    return True


def nesting_exceeds(data: Any, limit: int) -> bool:
    """True if maps/lists in ``data`` nest more than ``limit`` levels (walked level by
    level, without recursion)."""
    level: list[Any] = [data] if isinstance(data, dict | list) else []
    depth = 0
    while level:
        depth += 1
        if depth > limit:
            return True
        level = [v for item in level
                 for v in (item.values() if isinstance(item, dict) else item)
                 if isinstance(v, dict | list)]
    return False


def _too_deep() -> StackValidationFailed:
    return StackValidationFailed(
        f"Template is nested too deeply (more than {MAX_DEPTH} levels of maps or lists).")


def parse_text(text: str | bytes, *, max_size: int = 524288,
               url: str | None = None) -> dict[str, Any]:
    """Parse a JSON or YAML template body into a dict (Heat's rules plus safety limits)."""
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise TemplateParseError(f"Error parsing template: {exc}") from None
    check_size(text, max_size)
    data: Any
    shape: yaml_loader.Shape | None = None
    try:
        data = json.loads(text)
    except RecursionError:
        raise _too_deep() from None
    except ValueError:
        if not flow_depth_ok(text):  # before libyaml, which recurses on the C stack
            raise _too_deep() from None
        data, shape = _load_yaml(text, url)
    if not isinstance(data, dict):
        raise TemplateParseError("The template is not a JSON object or YAML mapping.")
    _check_shape(data, shape, budget=max(EXPANSION_FLOOR, EXPANSION_PER_CHAR * len(text)))
    return data


def load_yaml_document(text: str | bytes) -> Any:
    """Any YAML (or JSON) document a client sends — an environment, adopt data — under the
    same guards as a template: libyaml recurses on the C stack, so deep flow nesting would
    crash the process, not raise. ``yaml.YAMLError`` is left to the caller to word."""
    if isinstance(text, bytes):
        text = text.decode("utf-8", "replace")
    if not flow_depth_ok(text):
        raise _too_deep()
    try:
        data, shape = yaml_loader.load_with_shape(text)
    except RecursionError:
        raise _too_deep() from None
    _check_shape(data, shape, budget=max(EXPANSION_FLOOR, EXPANSION_PER_CHAR * len(text)))
    return data


def _check_shape(data: Any, shape: yaml_loader.Shape | None, *, budget: int) -> None:
    """check_shape, unless the YAML loader measured the shape on its way and it is
    within the limits (walking the data again costs more than linearly on a large
    template: it no longer fits in the CPU caches)."""
    if shape is None or shape.depth > MAX_DEPTH or shape.elements > budget:
        check_shape(data, budget=budget)  # measures again, and words the error


def _load_yaml(text: str, url: str | None) -> tuple[Any, yaml_loader.Shape | None]:
    try:
        data, shape = yaml_loader.load_with_shape(text)
    except yaml.YAMLError as exc:
        raise _yaml_error(text, exc, url) from None
    except RecursionError:
        raise _too_deep() from None
    except (ValueError, TypeError) as exc:  # a scalar its explicit tag cannot convert
        # (``!!int abc``); Heat's API words it so
        raise TemplateParseError(f"Template not in valid format: {exc}") from None
    return ({}, None) if data is None else (data, shape)


def _yaml_error(text: str, exc: yaml.YAMLError, url: str | None) -> TemplateParseError:
    detail: yaml.YAMLError = exc
    try:  # Heat words the error with the pure loader, which quotes the offending line
        yaml.load(text, Loader=yaml_loader.PyHeatLoader)
    except yaml.YAMLError as py_exc:
        detail = py_exc
    except RecursionError:
        pass
    err = TemplateParseError(f"Error parsing template {url or '[root stack]'} {detail}",
                             hint=yaml_loader.describe_error(detail, url or "template"))
    mark = getattr(detail, "problem_mark", None) or getattr(detail, "context_mark", None)
    err.line = mark.line + 1 if mark is not None else None  # type: ignore[attr-defined]
    err.column = mark.column + 1 if mark is not None else None  # type: ignore[attr-defined]
    return err


def check_shape(data: Any, *, budget: int) -> None:
    """Reject nesting beyond MAX_DEPTH and alias expansion beyond ``budget`` elements.

    Walks one nesting level at a time, so the work is bounded by ``budget`` even when
    YAML aliases make the data a DAG that would expand exponentially.
    """
    level: list[Any] = [data] if isinstance(data, dict | list) else []
    depth = 0
    seen = 0
    while level:
        depth += 1
        if depth > MAX_DEPTH:
            raise _too_deep()
        nxt: list[Any] = []
        for item in level:
            values = item.values() if type(item) is dict else item
            seen += len(values)
            if seen > budget:
                raise RequestLimitExceeded(
                    "Request limit exceeded: Template expands to more than "
                    f"{budget} elements (YAML aliases).")
            for v in values:
                t = type(v)
                if t is dict or t is list:
                    nxt.append(v)
        level = nxt


def load_data(body: str | bytes | Mapping[str, Any], *, max_size: int = 524288,
              url: str | None = None) -> dict[str, Any]:
    """Body as the API receives it (text, or JSON already decoded) → template dict."""
    if isinstance(body, str | bytes):
        return parse_text(body, max_size=max_size, url=url)
    if not isinstance(body, Mapping):
        raise TemplateParseError("The template is not a JSON object or YAML mapping.")
    data = dict(body)
    try:
        size = len(str(data))  # Heat measures a decoded body by its Python repr
    except RecursionError:
        raise _too_deep() from None
    check_size_value(size, max_size)
    check_shape(data, budget=max(EXPANSION_FLOOR, EXPANSION_PER_CHAR * size))
    return data


def check_size_value(size: int, max_size: int) -> None:
    if size > max_size:
        raise RequestLimitExceeded(
            f"Request limit exceeded: Template size ({size} bytes) exceeds maximum "
            f"allowed size ({max_size} bytes).")


__all__ = ["MAX_DEPTH", "TemplateError", "check_shape", "load_data", "load_yaml_document",
           "parse_text"]
