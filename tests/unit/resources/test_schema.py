"""Property validation: typed values, defaults, and Heat 27's exact error texts.

Every expected message below was observed from Heat 27 (POST /stacks/preview) for the
same property value.
"""

from __future__ import annotations

from typing import Any

import pytest

from kiln.errors import StackValidationFailed
from kiln.resources.base import Property, Resource
from kiln.resources.schema import Attribute, Properties, SupportStatus
from kiln.template.constraints import AllowedValues, InvalidSchemaError, Length, Range
from tests.unit.resources.fakes import registry


def error_of(type_name: str, props: dict[str, Any]) -> str:
    with pytest.raises(StackValidationFailed) as info:
        registry().get(type_name).make_properties("r", props)
    return info.value.message


@pytest.mark.parametrize(("type_name", "props", "message"), [
    ("OS::Heat::RandomString", {"length": "abc"},
     "Property error: resources.r.properties.length: Value 'abc' is not an integer"),
    ("OS::Heat::RandomString", {"length": "3.5"},
     "Property error: resources.r.properties.length: Value '3.5' is not an integer"),
    ("OS::Heat::RandomString", {"length": [1]},
     "Property error: resources.r.properties.length: int() argument must be a string, a "
     "bytes-like object or a real number, not 'list'"),
    ("OS::Heat::RandomString", {"length": 0},
     "Property error: resources.r.properties.length: 0 is out of range (min: 1, max: 512)"),
    ("OS::Heat::RandomString", {"salt": 5.5},
     "Property error: resources.r.properties.salt: Value must be a string; got 5.5"),
    ("OS::Heat::RandomString", {"salt": {"a": 1}},
     "Property error: resources.r.properties.salt: Value must be a string; got {'a': 1}"),
    ("OS::Heat::RandomString", {"character_classes": "x"},
     "Property error: resources.r.properties.character_classes: \"'x'\" is not a list"),
    ("OS::Heat::RandomString", {"character_classes": [{"class": "foo"}]},
     'Property error: resources.r.properties.character_classes[0].class: "foo" is not an '
     'allowed value ["lettersdigits", "letters", "lowercase", "uppercase", "digits", '
     '"hexdigits", "octdigits"]'),
    ("OS::Heat::RandomString", {"character_classes": ["x"]},
     'Property error: resources.r.properties.character_classes[0]: "x" is not a map'),
    ("OS::Heat::RandomString", {"character_sequences": [{"min": 2}]},
     "Property error: resources.r.properties.character_sequences[0]: Property sequence not "
     "assigned"),
    ("OS::Heat::RandomString", {"bogus": 1},
     "Property error: resources.r.properties: Unknown Property bogus"),
    ("OS::Heat::RandomString", {"character_classes": [{"class": "digits", "bogus": 0}]},
     "Property error: resources.r.properties.character_classes[0]: Unknown Property bogus"),
    ("OS::Heat::RandomString", {"character_classes": [{"class": "digits", "min": 0}]},
     "Property error: resources.r.properties.character_classes[0].min: 0 is out of range "
     "(min: 1, max: 512)"),
    ("OS::Heat::TestResource", {"fail": "maybe"},
     'Property error: resources.r.properties.fail: "maybe" is not a valid boolean'),
    ("OS::Heat::TestResource", {"fail": 1},
     'Property error: resources.r.properties.fail: "1" is not a valid boolean'),
    ("OS::Heat::TestResource", {"fail": [1]},
     'Property error: resources.r.properties.fail: "[1]" is not a valid boolean'),
    ("OS::Heat::TestResource", {"wait_secs": "x"},
     "Property error: resources.r.properties.wait_secs: could not convert string to float: "
     "'x'"),
    ("OS::Heat::TestResource", {"wait_secs": [1]},
     "Property error: resources.r.properties.wait_secs: int() argument must be a string, a "
     "bytes-like object or a real number, not 'list'"),
    ("OS::Heat::SoftwareConfig", {"options": "x"},
     'Property error: resources.r.properties.options: "x" is not a map'),
    ("OS::Heat::SoftwareConfig", {"options": [1]},
     'Property error: resources.r.properties.options: "[1]" is not a map'),
    ("OS::Heat::SoftwareConfig", {"inputs": {"a": 1}},
     "Property error: resources.r.properties.inputs: \"{'a': 1}\" is not a list"),
    ("OS::Heat::SoftwareConfig", {"inputs": [{"type": "String"}]},
     "Property error: resources.r.properties.inputs[0]: Property name not assigned"),
    ("OS::Heat::SoftwareConfig", {"inputs": [{"name": "a", "type": "foo"}]},
     'Property error: resources.r.properties.inputs[0].type: "foo" is not an allowed value '
     '["String", "Number", "CommaDelimitedList", "Json", "Boolean"]'),
    ("OS::Heat::SoftwareConfig", {"config": {"a": 1}},
     "Property error: resources.r.properties.config: Value must be a string; got {'a': 1}"),
    ("OS::Heat::Value", {"value": 1, "type": "foo"},
     'Property error: resources.r.properties.type: "foo" is not an allowed value ["string", '
     '"number", "comma_delimited_list", "json", "boolean"]'),
    ("OS::Heat::Value", {"type": "json", "value": [1, 2]},
     'Property error: resources.r.properties.value: "[1, 2]" is not a map'),
    ("OS::Heat::Value", {"type": "comma_delimited_list", "value": "a,b"},
     "Property error: resources.r.properties.value: \"'a,b'\" is not a list"),
    ("OS::Heat::Value", {"type": "number", "value": "x"},
     "Property error: resources.r.properties.value: could not convert string to float: 'x'"),
    ("OS::Heat::Value", {"type": "boolean", "value": "yes"},
     'Property error: resources.r.properties.value: "yes" is not a valid boolean'),
    ("OS::Heat::Delay", {"actions": ["CREATE", "X"]},
     'Property error: resources.r.properties.actions: ["CREATE", "X"] is not an allowed '
     'value ["CREATE", "DELETE", "SUSPEND", "RESUME"]'),
])
def test_heat_messages(type_name: str, props: dict[str, Any], message: str) -> None:
    assert error_of(type_name, props) == message


def test_error_carries_full_path() -> None:
    with pytest.raises(StackValidationFailed) as info:
        registry().get("OS::Heat::RandomString").make_properties(
            "pw", {"character_classes": [{"class": "digits"}, {"min": "x"}]})
    assert info.value.path == ("resources", "pw", "properties", "character_classes", 1, "min")


@pytest.mark.parametrize(("props", "expected"), [
    # Heat accepts these (observed): integers from floats and booleans, numbers from text,
    # strings from integers and booleans (Python's str), any casing of true/false.
    ({"length": 3.5}, {"length": 3}),
    ({"length": True}, {"length": 1}),
    ({"salt": 5}, {"salt": "5"}),
    ({"salt": True}, {"salt": "True"}),
])
def test_accepted_conversions(props: dict[str, Any], expected: dict[str, Any]) -> None:
    values = registry().get("OS::Heat::RandomString").make_properties("r", props)
    for key, value in expected.items():
        assert values[key] == value
        assert type(values[key]) is type(value)


def test_number_and_boolean_conversions() -> None:
    props = registry().get("OS::Heat::TestResource").make_properties(
        "r", {"wait_secs": "1.5", "attr_wait_secs": "2", "fail": "TRUE",
              "update_replace": "false"})
    assert props["wait_secs"] == 1.5
    assert props["attr_wait_secs"] == 2
    assert props["fail"] is True
    assert props["update_replace"] is False


def test_defaults_and_unset_values() -> None:
    props = registry().get("OS::Heat::RandomString").make_properties("r", {})
    assert props["length"] == 32
    assert props["character_classes"] == [{"class": "lettersdigits", "min": 1}]
    assert props["character_sequences"] is None
    assert props["salt"] is None


def test_nested_defaults_are_filled() -> None:
    props = registry().get("OS::Heat::RandomString").make_properties(
        "r", {"character_classes": [{"class": "digits"}, {"min": 3}]})
    assert props["character_classes"] == [{"class": "digits", "min": 1},
                                          {"class": "lettersdigits", "min": 3}]


def test_explicit_null_is_given_not_missing() -> None:
    # Heat: a null value counts as given, so "required" is satisfied and the type's
    # empty value (or the default) is used.
    props = registry().get("OS::Heat::SoftwareConfig").make_properties(
        "r", {"inputs": [{"name": None, "type": None}]})
    assert props["inputs"] == [{"name": "", "description": None, "type": "String",
                                "default": None, "replace_on_change": False}]
    assert registry().get("OS::Heat::RandomString").make_properties(
        "r", {"length": None})["length"] == 32


def test_required_missing_at_top_level() -> None:
    assert error_of("OS::Heat::WaitCondition", {"timeout": 5}) == (
        "Property error: resources.r.properties: Property handle not assigned")


def test_schema_contradictions_are_refused() -> None:
    with pytest.raises(ValueError, match="cannot both be True"):
        Property("string", update_allowed=True, immutable=True)
    with pytest.raises(InvalidSchemaError, match="Range constraint invalid for string"):
        Property("string", constraints=[Range(1, 2)])


def test_constraints_are_applied_to_the_typed_value() -> None:
    schema = {"name": Property("string", constraints=[Length(2, 4)]),
              "size": Property("integer", constraints=[AllowedValues((1, 2))])}
    assert Properties(schema, {"name": "abc", "size": "2"})["size"] == 2
    with pytest.raises(StackValidationFailed, match=r"length \(1\) is out of range"):
        Properties(schema, {"name": "a"})


def test_schema_to_dict_shape() -> None:
    prop = Property("list", "things", default=[], required=False,
                    schema=Property("map", schema={"k": Property("string", required=True)}),
                    update_allowed=True)
    assert prop.to_dict() == {
        "type": "list", "description": "things", "default": [],
        "schema": {"*": {"type": "map", "required": False, "update_allowed": False,
                         "immutable": False,
                         "schema": {"k": {"type": "string", "required": True,
                                          "update_allowed": False, "immutable": False}}}},
        "required": False, "update_allowed": True, "immutable": False}
    assert Attribute("d", "map").to_dict() == {"description": "d", "type": "map"}
    assert Attribute("d").to_dict() == {"description": "d"}


def test_support_status_dict() -> None:
    status = SupportStatus("HIDDEN", version="5.0.0",
                           previous_status=SupportStatus("DEPRECATED", "use x", "2014.2"))
    assert status.to_dict() == {
        "status": "HIDDEN", "message": None, "version": "5.0.0",
        "previous_status": {"status": "DEPRECATED", "message": "use x", "version": "2014.2",
                            "previous_status": None}}


def test_plugin_without_schema_rejects_any_property() -> None:
    class Bare(Resource):
        type_name = "Test::Bare"

    with pytest.raises(StackValidationFailed, match="Unknown Property x"):
        Bare.make_properties("r", {"x": 1})


@pytest.mark.parametrize(("type_name", "props"), [
    # a nested map with some keys left out: the others are unset (None), not 0
    ("OS::Heat::TestResource", {"value": "v", "action_wait_secs": {"create": 2}}),
    ("OS::Heat::TestResource", {"action_wait_secs": {}}),
    ("OS::Heat::RandomString", {"length": 8, "character_classes": [{"class": "digits"}]}),
    # a free-form map keeps its nulls: they are the user's data
    ("OS::Heat::Value", {"value": {"a": None, "b": [None, 1]}}),
])
def test_stored_values_validate_back_to_the_same_values(type_name: str,
                                                       props: dict[str, Any]) -> None:
    # what a reloaded resource is compared with on the next update: any difference
    # would make an unchanged resource look changed
    plugin = registry().get(type_name)
    fresh = plugin.make_properties("r", props)
    reloaded = plugin.make_properties("r", fresh.stored())
    assert reloaded.as_dict() == fresh.as_dict()
