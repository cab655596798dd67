"""The /validate body and parameter-group rules; expected bodies are Heat 27's answers
to the same templates."""

from __future__ import annotations

from typing import Any

import pytest

from kiln import errors
from kiln.template import constraints as c
from kiln.template.environment import build_environment
from kiln.template.parameters import parse_parameters_section
from kiln.template.validation import (
    as_validate_error,
    validate_parameter_groups,
    validation_summary,
)


def summary(params: dict[str, Any], family: str = "hot", groups: Any = None,
            description: str = "No description", **env: Any) -> dict[str, Any]:
    schemas = parse_parameters_section(params, family, "2018-08-31")  # type: ignore[arg-type]
    return validation_summary(description=description, schemas=schemas,
                              parameter_groups=groups,
                              environment=build_environment(**env),
                              family=family)  # type: ignore[arg-type]


def test_every_constraint_kind_hot() -> None:
    body = summary({
        "a": {"type": "number", "default": 2, "constraints": [
            {"range": {"min": 1, "max": 5}, "description": "rng"},
            {"allowed_values": [1, 2, 3]}, {"modulo": {"step": 2, "offset": 0}}]},
        "b": {"type": "string", "hidden": True, "label": "B", "description": "bee",
              "constraints": [{"length": {"min": 1}}, {"allowed_pattern": "[a-z]*"},
                              {"custom_constraint": "nova.flavor"}]},
        "c": {"type": "comma_delimited_list", "default": "x,y"},
        "d": {"type": "json", "default": {"k": 1}},
        "e": {"type": "boolean", "default": "yes", "immutable": True, "tags": ["t1"]},
    }, groups=[{"label": "G", "description": "gd", "parameters": ["a", "b"]}])
    assert body == {
        "Description": "No description",
        "Parameters": {
            "a": {"Type": "Number", "Description": "", "NoEcho": "false", "Label": "a",
                  "Default": 2, "MinValue": 1, "MaxValue": 5, "AllowedValues": [1, 2, 3],
                  "Step": 2, "Offset": 0, "ConstraintDescription": "rng"},
            "b": {"Type": "String", "Description": "bee", "NoEcho": "true", "Label": "B",
                  "MinLength": 1, "AllowedPattern": "[a-z]*",
                  "CustomConstraint": "nova.flavor"},
            "c": {"Type": "CommaDelimitedList", "Description": "", "NoEcho": "false",
                  "Label": "c", "Default": "x,y"},
            "d": {"Type": "Json", "Description": "", "NoEcho": "false", "Label": "d",
                  "Default": {"k": 1}},
            "e": {"Type": "Boolean", "Description": "", "NoEcho": "false", "Label": "e",
                  "Default": "yes", "Tags": ["t1"]},
        },
        "ParameterGroups": [{"label": "G", "description": "gd", "parameters": ["a", "b"]}],
        "Environment": {"resource_registry": {"resources": {}}, "parameters": {},
                        "parameter_defaults": {}, "event_sinks": []},
    }


def test_cfn_constraint_descriptions_joined_and_value() -> None:
    body = summary({
        "a": {"Type": "Number", "MinValue": "1", "MaxValue": 9, "ConstraintDescription": "cd",
              "AllowedValues": [1, 2], "NoEcho": "True", "Default": 1},
        "b": {"Type": "String", "MinLength": 1, "AllowedPattern": "[a-z]+"},
    }, family="cfn", user_params={"b": "q"})
    assert body["Parameters"] == {
        "a": {"Type": "Number", "Description": "", "NoEcho": "true", "Label": "a",
              "Default": 1, "MinValue": 1, "MaxValue": 9, "AllowedValues": [1, 2],
              "ConstraintDescription": "cd cd"},
        "b": {"Type": "String", "Description": "", "NoEcho": "false", "Label": "b",
              "Value": "q", "MinLength": 1, "AllowedPattern": "[a-z]+"},
    }
    assert "ParameterGroups" not in body
    assert body["Environment"]["parameters"] == {"b": "q"}


def test_parameter_defaults_shown_as_default_and_falsy_values_hidden() -> None:
    body = summary({"a": {"type": "string", "default": "x"},
                    "n": {"type": "number", "default": "5"}},
                   environment={"parameter_defaults": {"a": "pd", "zz": 1},
                                "parameters": {"a": "v", "n": 0}})
    assert body["Parameters"]["a"]["Default"] == "pd"
    assert body["Parameters"]["a"]["Value"] == "v"
    assert "Value" not in body["Parameters"]["n"]
    assert body["Environment"]["parameter_defaults"] == {"a": "pd", "zz": 1}


def test_values_are_not_validated_but_schemas_are() -> None:
    summary({"a": {"type": "number", "constraints": [{"range": {"max": 5}}]}},
            user_params={"a": 9})
    with pytest.raises(c.InvalidSchemaError) as exc:
        summary({"a": {"type": "number", "default": 9,
                       "constraints": [{"range": {"max": 5}}]}})
    assert exc.value.message == \
        "Parameter 'a' is invalid: Invalid default 9 (9 is out of range (min: None, max: 5))"


def test_unknown_parameter() -> None:
    with pytest.raises(errors.UnknownUserParameter):
        summary({"a": {"type": "string"}}, user_params={"zz": 1})


@pytest.mark.parametrize(("groups", "message"), [
    ([{"label": "G", "parameters": ["a", "OS::stack_id", "b"]}],
     "Parameter Groups error: parameter_groups.G: The grouped parameter b does not "
     "reference a valid parameter."),
    ([{"parameters": ["a"]}, {"parameters": ["a"]}],
     "Parameter Groups error: parameter_groups.: The a parameter must be assigned to one "
     "parameter group only."),
    ({"x": 1}, "Parameter Groups error: parameter_groups: The parameter_groups should be "
               "a list."),
    ([{"label": "L"}], "Parameter Groups error: parameter_groups.L: The parameters must be "
                       "provided for each parameter group."),
    ([{"label": "L", "parameters": "a"}], "Parameter Groups error: parameter_groups.L: The "
                                          "parameters of parameter group should be a list."),
])
def test_parameter_groups(groups: Any, message: str) -> None:
    with pytest.raises(errors.StackValidationFailed) as exc:
        validate_parameter_groups(groups, ["OS::stack_id", "OS::project_id", "a"])
    assert exc.value.message == message
    wire = as_validate_error(exc.value)
    assert wire.error_type == "HTTPBadRequest" and wire.message == message


def test_validate_template_end_to_end() -> None:
    from kiln.template import load_template
    from kiln.template.validation import validate_template

    tmpl = load_template({"heat_template_version": "2018-08-31", "description": "hi",
                          "parameters": {"a": {"type": "number", "constraints": [
                              {"range": {"max": 5}}]}},
                          "parameter_groups": [{"label": "G", "parameters": ["a"]}],
                          "resources": {"r": {"type": "OS::Heat::None"}}})
    env = build_environment(user_params={"a": 9})
    body = validate_template(tmpl, env)
    assert body["Description"] == "hi"
    assert body["Parameters"]["a"] == {"Type": "Number", "Description": "",
                                       "NoEcho": "false", "Label": "a", "Value": 9,
                                       "MaxValue": 5}
    assert body["ParameterGroups"] == [{"label": "G", "parameters": ["a"]}]


def test_validate_template_errors_as_heat_reports_them() -> None:
    from kiln.template import load_template
    from kiln.template.validation import validate_template

    tmpl = load_template({"heat_template_version": "2018-08-31",
                          "parameters": {"a": {"type": "string"}},
                          "parameter_groups": [{"label": "G", "parameters": ["b"]}]})
    with pytest.raises(errors.HTTPBadRequest) as exc:
        validate_template(tmpl, build_environment())
    assert exc.value.message == ("Parameter Groups error: parameter_groups.G: The grouped "
                                 "parameter b does not reference a valid parameter.")
    with pytest.raises(errors.UnknownUserParameter):
        validate_template(tmpl, build_environment(user_params={"zz": 1}))
    tmpl = load_template({"heat_template_version": "2018-08-31", "resources": {
        "r": {"type": "OS::Heat::None", "properties": {"a": {"get_resource": "nope"}}}}})
    with pytest.raises(errors.InvalidTemplateReference) as ref:
        validate_template(tmpl, build_environment())
    assert ref.value.message == 'The specified reference "nope" (in r.Properties.a) is ' \
                                "incorrect."


def test_validate_words_a_cycle_as_heat_when_given_the_plugins() -> None:
    from kiln.template import load_template
    from kiln.template.bound import NullResolver
    from kiln.template.validation import validate_template

    class Plugins(NullResolver):
        def plugin_class_name(self, name: str) -> str:
            return "NoneResource"

    # Heat 27's POST /validate for OS::Heat::None b and a requiring each other (its
    # entry order varies per process; here it is the declaration order, b first)
    tmpl = load_template({"heat_template_version": "2018-08-31", "resources": {
        "b": {"type": "OS::Heat::None", "properties": {"x": {"get_resource": "a"}}},
        "a": {"type": "OS::Heat::None", "properties": {"x": {"get_resource": "b"}}}}})
    # (and the error keeps its own type there: CircularDependencyException, a 400)
    with pytest.raises(errors.StackValidationFailed) as exc:
        validate_template(tmpl, build_environment(), resolver=Plugins())
    assert exc.value.error_type == "CircularDependencyException"
    assert exc.value.message == ('Circular Dependency Found: {NoneResource "b": '
                                 '{NoneResource "a"}, NoneResource "a": {NoneResource "b"}}')


def test_nested_entry_as_heat_shows_it() -> None:
    from kiln.template import load_template
    from kiln.template.validation import describe_nested

    nested = load_template("heat_template_version: 2018-08-31\ndescription: nd\n"
                           "parameters:\n  a: {type: string, hidden: true}\n"
                           "  b: {type: number, default: 3}\nparameter_groups:\n"
                           "- label: g\n  parameters: [a]\n")
    inner = load_template("heat_template_version: 2018-08-31\n"
                          "parameters:\n  z: {type: string, default: zz}\n")
    inner_entry = describe_nested("inner.yaml", inner, build_environment())
    entry = describe_nested("nested.yaml", nested,
                            build_environment(user_params={"a": "fromparent"}),
                            nested={"inner": inner_entry})
    # Heat 27's NestedParameters["n"] for the same templates
    assert entry == {
        "Type": "nested.yaml", "Description": "nd",
        "Parameters": {
            "a": {"Type": "String", "Description": "", "NoEcho": "true", "Label": "a",
                  "Value": "fromparent"},
            "b": {"Type": "Number", "Description": "", "NoEcho": "false", "Label": "b",
                  "Default": 3}},
        "ParameterGroups": [{"label": "g", "parameters": ["a"]}],
        "NestedParameters": {"inner": {
            "Type": "inner.yaml", "Description": "No description",
            "Parameters": {"z": {"Type": "String", "Description": "", "NoEcho": "false",
                                 "Label": "z", "Default": "zz"}}}},
    }
