"""An update compares stored property values without validating them again (issue 26).

A replace-all update of N resources validated every old resource's stored values only to
compare them with the new ones; :func:`changed_from_stored` compares the stored form
instead. These check it finds exactly the changes the validated comparison finds, and
that it declines (so the values are validated as before) where stored values may be of
another schema.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from kiln.resources.schema import Properties, changed_from_stored
from tests.unit.resources.fakes import registry

CASES: list[tuple[str, dict[str, Any], dict[str, Any]]] = [
    ("OS::Heat::RandomString", {"salt": "a"}, {"salt": "b"}),
    ("OS::Heat::RandomString", {"salt": "a"}, {"salt": "a"}),
    ("OS::Heat::RandomString", {"length": 8}, {"length": "8"}),
    ("OS::Heat::RandomString", {"character_classes": [{"class": "digits"}]},
     {"character_classes": [{"class": "digits", "min": 1}]}),
    ("OS::Heat::RandomString", {"character_classes": [{"class": "digits"}]},
     {"character_classes": [{"class": "digits", "min": 2}]}),
    ("OS::Heat::RandomString", {"character_sequences": [{"sequence": "ab", "min": 1}]},
     {}),
    ("OS::Heat::Value", {"value": {"a": [1, None, {"b": 2.5}]}, "type": "json"},
     {"value": {"a": [1, None, {"b": 2.5}]}, "type": "json"}),
    ("OS::Heat::Value", {"value": {"a": [1, None]}, "type": "json"},
     {"value": {"a": [1]}, "type": "json"}),
    ("OS::Heat::Value", {"value": "x"}, {"value": "x", "type": "string"}),
    ("OS::Heat::SoftwareConfig", {"config": "c", "inputs": [{"name": "i"}]},
     {"config": "c", "inputs": [{"name": "i", "type": "String"}]}),
    ("OS::Heat::SoftwareConfig", {"config": "c", "inputs": [{"name": "i"}]},
     {"config": "c", "inputs": [{"name": "j"}], "options": {"k": None}}),
    ("OS::Heat::TestResource", {"value": "v", "action_wait_secs": {"create": 1}},
     {"value": "v", "action_wait_secs": {"create": 1, "update": 0}}),
]


def _props(type_name: str, values: dict[str, Any]) -> Properties:
    result: Properties = registry().get(type_name).make_properties("r", values)
    return result


@pytest.mark.parametrize(("type_name", "old", "new"), CASES)
def test_the_stored_comparison_finds_what_validating_finds(
        type_name: str, old: dict[str, Any], new: dict[str, Any]) -> None:
    before, after = _props(type_name, old), _props(type_name, new)
    stored = json.loads(json.dumps(before.stored()))   # as read back from the database
    validated = {k: after[k] for k in after if before.get(k) != after.get(k)}
    assert changed_from_stored(after.schema, stored, after) == validated


def test_values_that_may_be_of_another_schema_are_left_to_validation() -> None:
    after = _props("OS::Heat::RandomString", {"salt": "b"})
    stored = _props("OS::Heat::RandomString", {"salt": "a"}).stored()
    assert changed_from_stored(after.schema, stored, after) == {"salt": "b"}
    # a key the schema no longer has, a defaulted value missing (stored before the
    # default existed): the caller validates the stored values as before
    assert changed_from_stored(after.schema, {**stored, "gone": 1}, after) is None
    assert changed_from_stored(after.schema, {"salt": "a"}, after) is None
