"""Conditions, references to disabled resources, outputs, dependencies, memoisation.

Behaviour and messages observed on a real Heat 27 with the same templates."""

from __future__ import annotations

from typing import Any

import pytest

from kiln.graph import CircularDependencyException
from kiln.template.errors import InvalidTemplateReference, StackValidationFailed
from tests.unit.template.tplhelpers import FakeResolver, bind, hot

PARAMS = {"env": {"type": "string", "default": "prod"}, "n": {"type": "number",
                                                             "default": 2}}
CONDITIONS = {
    "is_prod": {"equals": [{"get_param": "env"}, "prod"]},
    "is_dev": {"not": "is_prod"},
    "big": {"and": ["is_prod", {"equals": [{"get_param": "n"}, 2]}]},
    "any": {"or": ["is_dev", False]},
    "lit": True,
}


def tmpl(**sections: Any) -> dict[str, Any]:
    return hot("2016-10-14", parameters=PARAMS, conditions=CONDITIONS, **sections)


def test_conditions_evaluate_with_parameters() -> None:
    b = bind(tmpl())
    assert dict(b.conditions) == {"is_prod": True, "is_dev": False, "big": True,
                                  "any": False, "lit": True}
    b = bind(tmpl(), params={"env": "dev"})
    assert dict(b.conditions) == {"is_prod": False, "is_dev": True, "big": False,
                                  "any": True, "lit": True}


def test_condition_definition_must_be_bool_or_function() -> None:
    b = bind(hot("2016-10-14", conditions={"c": "notbool"}))
    with pytest.raises(StackValidationFailed) as exc:
        b.validate()
    assert exc.value.message == ('Condition validation error: The definition of condition '
                                 '"c" is invalid: notbool')


def test_circular_condition() -> None:
    body = hot("2016-10-14", conditions={"c": {"not": "d"}, "d": {"not": "c"}},
               resources={"r": {"type": "X", "condition": "c"}})
    with pytest.raises(StackValidationFailed) as exc:
        bind(body).validate()
    assert exc.value.message == ('Condition validation error: Circular definition for '
                                 'condition "c"')


def test_unknown_condition_on_a_resource() -> None:
    body = hot("2016-10-14", resources={"r": {"type": "X", "condition": "nope"}})
    with pytest.raises(StackValidationFailed) as exc:
        bind(body).validate()
    assert exc.value.message == 'resources.r.condition: Invalid condition "nope"'


def test_conditions_section_must_be_a_map() -> None:
    from kiln.template import load_template

    with pytest.raises(StackValidationFailed) as exc:
        load_template(hot("2016-10-14", conditions=[1]))
    assert exc.value.message == ("Conditions validation error: Condition definitions must "
                                 "be a map. Found a list instead")


def test_disabled_resource_does_not_exist() -> None:
    body = tmpl(resources={"a": {"type": "X", "condition": "is_dev"},
                           "b": {"type": "X", "condition": "lit"},
                           "c": {"type": "X", "condition": True}})
    b = bind(body)
    assert list(b.resource_definitions()) == ["b", "c"]
    assert b.resource_definitions()["b"].condition == "lit"
    assert list(bind(body, params={"env": "dev"}).resource_definitions()) == ["a", "b", "c"]


def test_reference_to_disabled_resource_is_like_an_unknown_one() -> None:
    body = tmpl(resources={"a": {"type": "X", "condition": "is_dev"},
                           "b": {"type": "X", "properties": {"value": {"get_resource": "a"}}}})
    with pytest.raises(InvalidTemplateReference) as exc:
        bind(body).validate()
    assert exc.value.message == 'The specified reference "a" (in b.Properties.value) is ' \
                                "incorrect."
    body = tmpl(resources={"b": {"type": "X", "properties": {
        "value": {"list_join": [",", [{"get_attr": ["zz", "x"]}]]}}}})
    with pytest.raises(InvalidTemplateReference) as exc:
        bind(body).validate()
    assert exc.value.message == ('The specified reference "zz" (in '
                                 'b.Properties.value.list_join[1][0]) is incorrect.')


def test_depends_on_disabled_resource_is_dropped_unknown_is_an_error() -> None:
    body = tmpl(resources={"a": {"type": "X", "condition": "is_dev"},
                           "b": {"type": "X", "depends_on": "a"}})
    assert bind(body).dependencies() == {"b": frozenset()}
    body = tmpl(resources={"b": {"type": "X", "depends_on": ["nope"]}})
    with pytest.raises(InvalidTemplateReference) as exc:
        bind(body).validate()
    assert exc.value.message == 'The specified reference "nope" (in b) is incorrect.'


def test_outputs_each_resolve_on_their_own() -> None:
    body = tmpl(resources={"a": {"type": "X", "condition": "is_dev"}, "r": {"type": "X"}},
                outputs={"good": {"value": {"get_param": "env"}, "description": "d"},
                         "bad_param": {"value": {"get_param": "nope"}},
                         "bad_ref": {"value": {"get_resource": "a"}},
                         "off": {"value": {"get_param": "nope"}, "condition": "is_dev"},
                         "attr": {"value": {"get_attr": ["r", "x"]}}})
    b = bind(body, resolver=FakeResolver({"r": {"x": [1]}}))
    b.validate()
    outs = b.outputs()
    assert outs["good"].value == "prod" and outs["good"].description == "d"
    assert outs["bad_param"].error == "The Parameter (nope) was not provided."
    assert outs["bad_ref"].error == 'The specified reference "a" (in unknown) is incorrect.'
    assert outs["off"].value is None and outs["off"].error is None
    assert outs["attr"].value == [1]
    assert outs["attr"].description == "No description given"
    assert outs["bad_param"].to_dict() == {
        "output_key": "bad_param", "description": "No description given",
        "output_value": None, "output_error": "The Parameter (nope) was not provided."}


def test_get_attr_of_a_disabled_resource_in_an_output_fails_validation() -> None:
    body = tmpl(resources={"a": {"type": "X", "condition": "is_dev"}},
                outputs={"o1": {"value": {"get_attr": ["a", "value"]}}})
    with pytest.raises(StackValidationFailed) as exc:
        bind(body).validate()
    assert exc.value.message == ('outputs.o1.value.get_attr: The specified reference "a" '
                                 "(in unknown) is incorrect.")


# -- dependencies ---------------------------------------------------------------------------

def test_dependencies_from_functions_and_depends_on() -> None:
    body = hot("2021-04-16", resources={
        "a": {"type": "X"},
        "b": {"type": "X", "properties": {"x": {"get_resource": "a"}}},
        "c": {"type": "X", "metadata": {"m": [{"get_attr": ["b", "v", 0]}]},
              "depends_on": "a"},
        "d": {"type": "X", "properties": {"x": {"str_replace": {
            "template": "t", "params": {"t": {"get_attr": ["c"]}}}}}},
    })
    b = bind(body)
    b.validate()
    assert b.dependencies() == {"a": frozenset(), "b": {"a"}, "c": {"a", "b"}, "d": {"c"}}


def test_if_only_the_chosen_branch_makes_dependencies() -> None:
    body = hot("2016-10-14", conditions={"yes": True}, resources={
        "a": {"type": "X"}, "b": {"type": "X"},
        "c": {"type": "X", "properties": {"x": {"if": ["yes", {"get_resource": "a"},
                                                       {"get_resource": "zz"}]}}}})
    b = bind(body)
    b.validate()  # the reference to "zz" is in the branch not taken
    assert b.dependencies()["c"] == {"a"}


def test_get_resource_of_a_parameter_value() -> None:
    body = hot("2016-10-14", parameters={"p": {"type": "string", "default": "a"}},
               resources={"a": {"type": "X"},
                          "b": {"type": "X", "properties": {
                              "x": {"get_resource": {"get_param": "p"}}}}})
    assert bind(body).dependencies()["b"] == {"a"}


def test_cycles_are_reported_with_names() -> None:
    body = hot("2016-10-14", resources={
        "r": {"type": "X"},
        "s": {"type": "X", "depends_on": ["t"]},
        "t": {"type": "X", "properties": {"x": {"get_resource": "s"}}}})
    with pytest.raises(CircularDependencyException) as exc:
        bind(body).validate()
    assert exc.value.message.startswith("Circular Dependency Found: ")
    assert "s" in exc.value.message and "t" in exc.value.message
    assert "r:" not in exc.value.message


def test_cycle_message_is_heats_when_the_resolver_names_plugins() -> None:
    # Heat 27, POST /stacks with this template (3 OS::Heat::None in a depends_on ring):
    # 'Circular Dependency Found: {NoneResource "b": {NoneResource "a"}, NoneResource "c":
    # {NoneResource "b"}, NoneResource "a": {NoneResource "c"}}' -- Heat's entry order
    # follows a hash-seeded set; Kiln lists them in template order
    class Named(FakeResolver):
        def plugin_class_name(self, name: str) -> str:
            return "NoneResource"

    body = hot("2018-08-31", resources={
        "a": {"type": "OS::Heat::None", "depends_on": "c"},
        "b": {"type": "OS::Heat::None", "depends_on": "a"},
        "c": {"type": "OS::Heat::None", "depends_on": "b"}})
    with pytest.raises(CircularDependencyException) as exc:
        bind(body, resolver=Named()).validate()
    assert exc.value.message == (
        'Circular Dependency Found: {NoneResource "a": {NoneResource "c"}, '
        'NoneResource "b": {NoneResource "a"}, NoneResource "c": {NoneResource "b"}}')


def test_external_resource_may_not_depend_on_others() -> None:
    body = hot("2016-10-14", resources={"a": {"type": "X"},
                                        "b": {"type": "X", "external_id": "ext",
                                              "depends_on": "a"}})
    with pytest.raises(StackValidationFailed) as exc:
        bind(body).validate()
    assert exc.value.message == "Invalid dependency with external X resource: ext"


# -- lazy memoised resolution ------------------------------------------------------------------

def test_nodes_without_resources_are_memoised_others_are_not() -> None:
    body = hot("2021-04-16", parameters={"p": {"type": "json", "default": {"a": 1}}},
               resources={"r": {"type": "X"}},
               outputs={"pure": {"value": {"map_merge": [{"get_param": "p"}, {"b": 2}]}},
                        "live": {"value": {"get_attr": ["r", "x"]}}})
    resolver = FakeResolver({"r": {"x": 1}})
    b = bind(body, resolver=resolver)
    pure = b.template.outputs["pure"].value
    first = b.resolve(pure)
    assert first == {"a": 1, "b": 2}
    assert b.resolve(pure) is first
    live = b.template.outputs["live"].value
    assert b.resolve(live) == 1
    resolver.attrs["r"]["x"] = 2
    assert b.resolve(live) == 2


def test_resolution_does_not_change_the_template() -> None:
    body = hot("2021-04-16", resources={"r": {"type": "X", "properties": {
        "a": {"list_join": [",", ["x", "y"]]}, "b": [1, {"if": [False, 1]}]}}})
    b = bind(body)
    props = b.resource_definitions()["r"].properties
    assert b.resolve(props) == {"a": "x,y", "b": [1]}
    assert b.template.raw["resources"]["r"]["properties"]["b"] == [1, {"if": [False, 1]}]


def test_if_with_an_unknown_condition_fails_stack_validation() -> None:
    # Heat parses `if` when it builds the definitions, so this is a validation error
    # even though the property is never resolved.
    body = hot("2016-10-14", resources={"r": {"type": "X", "properties": {
        "a": {"list_join": [",", [{"if": ["nope", "1", "2"]}]]}}}})
    with pytest.raises(StackValidationFailed) as exc:
        bind(body).validate()
    assert exc.value.message == ('resources.r.properties.a.list_join[1][0].if: Invalid '
                                 'condition "nope"')


class SchemaResolver(FakeResolver):
    def has_attribute(self, name: str, attr: str) -> bool:
        return attr in ("value", "show")


def test_attribute_names_are_checked_when_the_resolver_knows_schemas() -> None:
    body = hot("2016-10-14", resources={
        "s": {"type": "OS::Heat::Value"},
        "r": {"type": "OS::Heat::Value", "properties": {"value": {"get_attr": ["s", "nope"]}}}})
    with pytest.raises(StackValidationFailed) as exc:
        bind(body, resolver=SchemaResolver()).validate()
    assert exc.value.message == ("resources.r.properties.value.get_attr: The Referenced "
                                 "Attribute (s nope) is incorrect.")
    ok = hot("2016-10-14", resources={"s": {"type": "OS::Heat::Value"}},
             outputs={"o": {"value": {"get_attr": ["s", "show"]}},
                      "all": {"value": {"get_attr": ["s"]}}})
    bind(ok, resolver=SchemaResolver()).validate()
    bad = hot("2016-10-14", resources={"s": {"type": "OS::Heat::Value"}},
              outputs={"o": {"value": {"get_attr": ["s", "nope"]}}})
    with pytest.raises(StackValidationFailed) as exc:
        bind(bad, resolver=SchemaResolver()).validate()
    assert exc.value.message == ("outputs.o.value.get_attr: The Referenced Attribute "
                                 "(s nope) is incorrect.")


def test_deep_validation_finds_what_only_create_would() -> None:
    # Heat's /validate accepts this (the delimiter is only checked when the property is
    # resolved at create); the opt-in deep validation reports it without creating.
    body = hot("2016-10-14", resources={"r": {"type": "X", "properties": {
        "value": {"list_join": [1, ["a"]]}}}})
    b = bind(body)
    b.validate()
    with pytest.raises(StackValidationFailed) as exc:
        b.validate(deep=True)
    assert exc.value.detail == '"list_join" delimiter must be a string'
    assert exc.value.path == ("resources", "r", "properties", "value")
