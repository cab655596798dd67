"""Drift's property-by-property comparison (kiln.engine.model.drift), pure."""

from __future__ import annotations

from kiln.engine.model.drift import (
    ADD,
    NOT_EQUAL,
    REMOVE,
    Difference,
    differences,
    same,
    shown,
    status_of,
)


def test_scalars_maps_and_lists_compare_as_the_cloud_answers() -> None:
    expected = {"name": "web", "port": 22, "up": True, "meta": {"role": "web"},
                "rules": [{"port": 22}, {"port": 80}], "tags": ["a", "b"], "gone": "x"}
    actual = {"name": "db", "port": "22", "up": "true", "meta": {"role": "web", "x": 1},
              "rules": [{"port": 80}, {"port": 8080}], "tags": ["b", "a"], "gone": None}
    assert differences(expected, actual) == [
        Difference("/name", "web", "db", NOT_EQUAL),
        Difference("/meta/x", None, 1, ADD),
        Difference("/rules/0", {"port": 22}, None, REMOVE),
        Difference("/rules/1", None, {"port": 8080}, ADD),
        Difference("/gone", "x", None, REMOVE),
    ]
    assert status_of(differences(expected, actual)) == "MODIFIED"
    assert status_of(differences({"a": [1, 2]}, {"a": [2, 1]})) == "IN_SYNC"


def test_paths_are_json_pointers_and_values_text() -> None:
    (diff,) = differences({"a/b": {"c~d": 1}}, {"a/b": {"c~d": 2}})
    assert diff.path == "/a~1b/c~0d"
    assert diff.as_dict() == {"path": "/a~1b/c~0d", "expected": 1, "actual": 2,
                              "type": NOT_EQUAL}
    assert shown("x") == "x" and shown({"b": 1, "a": None}) == '{"a": null, "b": 1}'
    assert shown(None) == "null"
    assert same(1, 1.0) and not same("a", 1) and not same(True, "no")
    assert differences({"a": None}, {"a": None}) == []
