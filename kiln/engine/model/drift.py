"""Drift, property by property: what a plugin read back compared with what the template
says (the plugin's :class:`~kiln.resources.live_state.LiveState`), in CloudFormation's
terms, so that every API shows the same result.

A difference has a JSON-pointer ``path`` (``/name``, ``/rules/2``, ``/value_specs/k``),
the expected and actual values, and a kind: ``NOT_EQUAL`` (a value differs), ``ADD`` (the
cloud has an item or key the template does not), ``REMOVE`` (the template's item or
key is missing from the cloud). Lists compare as collections (order does not matter:
Neutron does not keep the template's order of rules or tags): each expected item that
the cloud lacks is a REMOVE at its index in the template, each item the cloud has
beyond them an ADD at its index in the cloud's list. Scalars compare leniently across
the types the cloud may answer with (``22`` and ``"22"``, ``True`` and ``"true"``).
Pure: no I/O.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

#: a resource's drift status (AWS's StackResourceDriftStatus)
IN_SYNC = "IN_SYNC"
MODIFIED = "MODIFIED"
DELETED = "DELETED"
NOT_CHECKED = "NOT_CHECKED"
#: a stack's (AWS's StackDriftStatus)
DRIFTED = "DRIFTED"
#: a detection's (AWS's StackDriftDetectionStatus)
DETECTION_IN_PROGRESS = "DETECTION_IN_PROGRESS"
DETECTION_COMPLETE = "DETECTION_COMPLETE"
DETECTION_FAILED = "DETECTION_FAILED"

ADD = "ADD"
REMOVE = "REMOVE"
NOT_EQUAL = "NOT_EQUAL"


@dataclass(frozen=True)
class Difference:
    path: str
    expected: Any
    actual: Any
    kind: str

    def as_dict(self) -> dict[str, Any]:
        """The stored and native form (AWS's field names are the CFN API's to add)."""
        return {"path": self.path, "expected": self.expected, "actual": self.actual,
                "type": self.kind}


def differences(expected: Mapping[str, Any], actual: Mapping[str, Any]) -> list[Difference]:
    """Every difference between the template's values and the cloud's, for the keys
    of *expected* (the properties the plugin read back)."""
    out: list[Difference] = []
    for key, want in expected.items():
        _compare(f"/{_escape(key)}", want, actual.get(key), out)
    return out


def status_of(diffs: Sequence[Difference]) -> str:
    return MODIFIED if diffs else IN_SYNC


def shown(value: Any) -> str:
    """A value as AWS's ExpectedValue/ActualValue text: strings as they are, anything
    else as JSON."""
    if isinstance(value, str):
        return value
    return json.dumps(value, sort_keys=True, default=str)


def _escape(key: str) -> str:
    return str(key).replace("~", "~0").replace("/", "~1")


def _compare(path: str, want: Any, have: Any, out: list[Difference]) -> None:
    if want is None and have is None:
        return
    if have is None:
        out.append(Difference(path, want, None, REMOVE))
        return
    if want is None:
        out.append(Difference(path, None, have, ADD))
        return
    if isinstance(want, Mapping) and isinstance(have, Mapping):
        for key, value in want.items():
            _compare(f"{path}/{_escape(key)}", value, have.get(key), out)
        for key, value in have.items():
            if key not in want and value is not None:
                out.append(Difference(f"{path}/{_escape(key)}", None, value, ADD))
        return
    if _is_list(want) and _is_list(have):
        _compare_items(path, list(want), list(have), out)
        return
    if not same(want, have):
        out.append(Difference(path, want, have, NOT_EQUAL))


def _compare_items(path: str, want: list[Any], have: list[Any],
                   out: list[Difference]) -> None:
    left = Counter(_key(item) for item in have)
    for index, item in enumerate(want):
        key = _key(item)
        if left[key] > 0:
            left[key] -= 1
        else:
            out.append(Difference(f"{path}/{index}", item, None, REMOVE))
    for index, item in enumerate(have):
        key = _key(item)
        if left[key] > 0:
            left[key] -= 1
            out.append(Difference(f"{path}/{index}", None, item, ADD))


def _is_list(value: Any) -> bool:
    return isinstance(value, Sequence) and not isinstance(value, str | bytes)


def _key(value: Any) -> str:
    """A canonical text of *value* (lists of maps compare as multisets)."""
    return json.dumps(_canonical(value), sort_keys=True, default=str)


def _canonical(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {str(k): _canonical(v) for k, v in value.items() if v is not None}
    if _is_list(value):
        return [_canonical(v) for v in value]
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return str(value)
    return value


def same(want: Any, have: Any) -> bool:
    """Scalars equal across the types an API may use for them."""
    if want == have:
        return True
    if isinstance(want, bool) or isinstance(have, bool):
        return str(want).lower() == str(have).lower()
    if isinstance(want, int | float) or isinstance(have, int | float):
        try:
            return float(want) == float(have)
        except (TypeError, ValueError):
            return False
    return False


@dataclass(frozen=True)
class DriftRun:
    """One stored detection (the store's record of a ``drift_detection`` row)."""

    id: str
    stack_id: str
    scope: str
    status: str
    drift_status: str | None
    drifted_count: int
    status_reason: str
    #: one entry per resource checked (:func:`resource_entry`), nested stacks' included
    resources: list[dict[str, Any]]
    created_at: Any
    updated_at: Any

    @property
    def timestamp(self) -> Any:
        """When the detection's result was known (its start while it runs: its
        ``updated_at`` is then the running process's claim, renewed as it beats)."""
        if self.status == DETECTION_IN_PROGRESS:
            return self.created_at
        return self.updated_at or self.created_at


def resource_entry(*, stack_id: str, stack_name: str, name: str, physical_id: str | None,
                   type_name: str, status: str, expected: Mapping[str, Any] | None,
                   actual: Mapping[str, Any] | None, diffs: Sequence[Difference],
                   reason: str = "") -> dict[str, Any]:
    """The stored form of one resource's result (every API renders it its own way)."""
    return {"stack_id": stack_id, "stack_name": stack_name, "resource_name": name,
            "physical_resource_id": physical_id, "resource_type": type_name,
            "status": status, "expected": None if expected is None else dict(expected),
            "actual": None if actual is None else dict(actual),
            "differences": [d.as_dict() for d in diffs], "reason": reason}
