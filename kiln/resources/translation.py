"""Heat's translation rules: deprecated property names moved to their replacements.

Heat lets a template keep a property's old spelling (``network_id`` for a subnet's
``network``, a server NIC's ``uuid``...) and rewrites it before the properties are
validated, through each type's ``translation_rules()``. A type here declares the same
rules as data (:attr:`Resource.translation_rules`); :func:`translate` applies them once
to the resolved property values, so the schema check, the plugin's own checks, update
diffs and handlers all see only the current names, as in Heat. A required property
given under its old name therefore counts as given.

Heat's RESOLVE rules (a name turned into an ID through a client) are not modelled here:
Kiln looks names up when a handler talks to the cloud (``find_id`` and friends), with
the identity of that call, which is where a cloud is reachable at all.

The deprecated properties stay in ``properties_schema``: ``resource_types/{type}``
lists them as Heat does (hidden ones hidden).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kiln.errors import StackValidationFailed

#: a path element of a property value: a key, or an index in a list
PathElement = str | int


@dataclass(frozen=True)
class Replace:
    """Heat's REPLACE with ``value_path`` (top level) or ``value_name`` (inside list
    items): the deprecated key *old*, a sibling of the last key of *path*, gives its
    value to that key and disappears. Both given (non-empty) is Heat's conflict."""

    path: tuple[str, ...]
    old: str


@dataclass(frozen=True)
class Add:
    """Heat's ADD of a deprecated single value to its list replacement, followed by the
    DELETE of the single one (a router's ``l3_agent_id`` into ``l3_agent_ids``)."""

    path: tuple[str, ...]
    old: str


@dataclass(frozen=True)
class Delete:
    """Heat's DELETE: the property at *path* is treated as never given."""

    path: tuple[str, ...]


Rule = Replace | Add | Delete


def translate(rules: Sequence[Rule], values: Any) -> Any:
    """*values* with *rules* applied, in order; the input is not changed. Values that
    are not maps (a property section still unresolved) are returned as they are."""
    if not rules or not isinstance(values, Mapping):
        return values
    result = dict(values)
    for rule in rules:
        _walk(result, rule.path[:-1], (), functools.partial(_apply, rule))
    return result


def _walk(data: dict[str, Any], containers: tuple[str, ...], at: tuple[PathElement, ...],
          apply: Callable[[dict[str, Any], tuple[PathElement, ...]], None]) -> None:
    """Call *apply* on every map reached through *containers* (maps and lists of maps),
    copying each container on the way so the caller's data stays untouched."""
    if not containers:
        apply(data, at)
        return
    key, rest = containers[0], containers[1:]
    value = data.get(key)
    if isinstance(value, Mapping):
        data[key] = dict(value)
        _walk(data[key], rest, (*at, key), apply)
    elif isinstance(value, list):
        items = [dict(item) if isinstance(item, Mapping) else item for item in value]
        data[key] = items
        for index, item in enumerate(items):
            if isinstance(item, dict):
                _walk(item, rest, (*at, key, index), apply)


def _apply(rule: Rule, data: dict[str, Any], at: tuple[PathElement, ...]) -> None:
    new = rule.path[-1]
    if isinstance(rule, Delete):
        data.pop(new, None)
        return
    old_value = data.get(rule.old)
    if isinstance(rule, Add):
        if old_value:
            current = data.get(new)
            data[new] = [*(current if isinstance(current, list) else []), old_value]
            del data[rule.old]
        return
    if old_value is not None and data.get(new) and old_value:
        raise StackValidationFailed(
            "Cannot define the following properties at the same time: "
            f"{'.'.join(rule.path)}, {'.'.join((*rule.path[:-1], rule.old))}",
            path=(*at, new))
    data.pop(rule.old, None)
    if old_value is not None:
        data[new] = old_value

