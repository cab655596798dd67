"""The update plan's property diff: what a user reads in `kiln stack preview`."""

from __future__ import annotations

from typing import Any

from kiln.client import plan

OLD = {
    "heat_template_version": "2018-08-31",
    "parameters": {"size": {"type": "number", "default": 1},
                   "flags": {"type": "comma_delimited_list", "default": "a,b"}},
    "resources": {
        "cfg": {"type": "OS::Heat::Value",
                "properties": {"value": {"a": 1, "nested": {"keep": True, "drop": "x"}}}},
        "size": {"type": "OS::Heat::RandomString", "properties": {"length": {"get_param": "size"}}},
        "list": {"type": "OS::Heat::Value", "properties": {"value": {"get_param": "flags"}}},
        "ref": {"type": "OS::Heat::Value",
                "properties": {"value": {"get_attr": ["cfg", "value"]}}},
        "old": {"type": "OS::Heat::None"},
    },
}


def _preview(**kinds: list[str]) -> dict[str, Any]:
    return {kind: [{"resource_name": n} for n in names] for kind, names in kinds.items()}


def _new(**resources: Any) -> dict[str, Any]:
    return {**OLD, "resources": {**OLD["resources"], **resources}}


def changes(name: str, built: plan.Plan) -> list[dict[str, Any]]:
    resource = next(r for r in built.resources if r.name == name)
    return [c.as_json() for c in resource.changes]


def test_nested_changes_are_one_line_per_leaf() -> None:
    new = _new(cfg={"type": "OS::Heat::Value",
                    "properties": {"value": {"a": 2, "nested": {"keep": True, "add": [1]}}}})
    built = plan.build("s", _preview(updated=["cfg"]), OLD, new, {}, {})
    assert changes("cfg", built) == [
        {"path": "value.a", "old": 1, "new": 2},
        {"path": "value.nested.drop", "old": "x"},
        {"path": "value.nested.add", "new": [1]},
    ]


def test_a_parameter_is_shown_by_its_value_as_its_declared_type() -> None:
    # the stack shows its parameters as strings; the template says size is a number
    built = plan.build("s", _preview(replaced=["size"], updated=["list"]), OLD, OLD,
                       {"size": "3", "flags": "a,b"}, {"size": "5", "flags": "a,c"})
    assert changes("size", built) == [{"path": "length", "old": 3, "new": 5}]
    assert changes("list", built) == [{"path": "value", "old": ["a", "b"],
                                       "new": ["a", "c"]}]


def test_an_unchanged_parameter_value_is_no_change() -> None:
    built = plan.build("s", _preview(updated=["size"]), OLD, OLD, {"size": "1"}, {})
    assert changes("size", built) == []


def test_functions_other_than_parameters_are_shown_as_written() -> None:
    new = _new(ref={"type": "OS::Heat::Value",
                    "properties": {"value": {"get_attr": ["size", "value"]}}})
    built = plan.build("s", _preview(updated=["ref"]), OLD, new, {}, {})
    assert changes("ref", built) == [{"path": "value",
                                      "old": {"get_attr": ["cfg", "value"]},
                                      "new": {"get_attr": ["size", "value"]}}]


def test_added_and_deleted_resources_list_all_their_properties() -> None:
    new = _new(extra={"type": "OS::Heat::Value", "properties": {"value": "v"}})
    del new["resources"]["cfg"]
    built = plan.build("s", _preview(added=["extra"], deleted=["cfg"]), OLD, new, {}, {})
    assert changes("extra", built) == [{"path": "value", "new": "v"}]
    assert changes("cfg", built) == [{"path": "value.a", "old": 1},
                                     {"path": "value.nested.keep", "old": True},
                                     {"path": "value.nested.drop", "old": "x"}]


def test_a_type_change_comes_first() -> None:
    new = _new(old={"type": "OS::Heat::Value", "properties": {"value": 1}})
    built = plan.build("s", _preview(replaced=["old"]), OLD, new, {}, {})
    assert changes("old", built)[0] == {"path": "(type)", "old": "OS::Heat::None",
                                        "new": "OS::Heat::Value"}


def test_cfn_templates() -> None:
    old = {"AWSTemplateFormatVersion": "2010-09-09",
           "Parameters": {"Len": {"Type": "Number", "Default": "4"}},
           "Resources": {"r": {"Type": "OS::Heat::RandomString",
                               "Properties": {"length": {"Ref": "Len"}}}}}
    built = plan.build("s", _preview(replaced=["r"]), old, old, {"Len": "4"}, {"Len": "6"})
    assert built.resources[0].resource_type == "OS::Heat::RandomString"
    assert changes("r", built) == [{"path": "length", "old": 4, "new": 6}]


def test_json_shape_groups_names_by_kind() -> None:
    built = plan.build("s", _preview(added=[], updated=["cfg"], replaced=[], deleted=["old"],
                                     unchanged=["ref"]), OLD, OLD, {}, {})
    shaped = built.as_json()
    assert shaped["resource_changes"] == {"added": [], "updated": ["cfg"], "replaced": [],
                                          "deleted": ["old"], "unchanged": ["ref"]}
    assert [r["action"] for r in shaped["resources"]] == ["updated", "deleted"]
