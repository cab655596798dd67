"""Parameter declarations, types, coercion, precedence and Heat's messages.

Expected texts are Heat 27's (checked against a live Heat's /validate and preview).
"""

from __future__ import annotations

from typing import Any

import pytest

from kiln import errors
from kiln.template import constraints as c
from kiln.template.definitions import StackIdentity
from kiln.template.environment import Environment
from kiln.template.parameters import (
    ParameterValues,
    bind_parameters,
    check_immutable,
    parse_parameters_section,
    stack_arn,
)

IDENT = StackIdentity(stack_name="st", stack_id="1234", project_id="proj")


def hot(params: dict[str, Any], version: str = "2021-04-16") -> Any:
    return parse_parameters_section(params, "hot", version)


def bind(schemas: Any, user: dict[str, Any] | None = None, env: Any = None,
         family: str = "hot") -> ParameterValues:
    return bind_parameters(schemas, user, env, IDENT, family=family)  # type: ignore[arg-type]


def error(schemas: Any, user: dict[str, Any] | None = None, env: Any = None,
          family: str = "hot") -> errors.KilnError:
    with pytest.raises(errors.KilnError) as exc:
        bind(schemas, user, env, family)
    return exc.value


class TestTypes:
    def test_number_int_or_float(self) -> None:
        s = hot({"n": {"type": "number"}, "f": {"type": "number"}})
        v = bind(s, {"n": "42", "f": "1.5"})
        assert v["n"] == 42 and isinstance(v["n"], int)
        assert v["f"] == 1.5

    def test_number_invalid(self) -> None:
        e = error(hot({"n": {"type": "number"}}), {"n": "x"})
        assert e.message == "Parameter 'n' is invalid: could not convert string to float: 'x'"
        assert e.error_type == "StackValidationFailed"
        assert e.path == ("parameters", "n")

    def test_boolean_spellings(self) -> None:
        s = hot({"b": {"type": "boolean"}, "c": {"type": "boolean", "default": "off"}})
        v = bind(s, {"b": "Yes"})
        assert v["b"] is True and v["c"] is False
        e = error(s, {"b": "maybe"})
        assert e.message.startswith(
            "Parameter 'b' is invalid: Unrecognized value 'maybe', acceptable values are:")

    def test_comma_delimited_list(self) -> None:
        s = hot({"l": {"type": "comma_delimited_list"}, "e": {"type": "comma_delimited_list",
                                                             "default": ""}})
        v = bind(s, {"l": "a,b, c"})
        assert v["l"] == ["a", "b", " c"]
        assert v["e"] == []
        assert bind(s, {"l": [1, "x"]})["l"] == ["1", "x"]

    def test_json(self) -> None:
        s = hot({"j": {"type": "json"}})
        assert bind(s, {"j": '{"a": [1, 2]}'})["j"] == {"a": [1, 2]}
        assert bind(s, {"j": {"k": "v"}})["j"] == {"k": "v"}
        assert bind(s, {"j": [1]})["j"] == [1]
        e = error(s, {"j": "{bad"})
        assert e.message.startswith("Parameter 'j' is invalid: Value must be valid JSON: ")

    def test_string_from_number(self) -> None:
        assert bind(hot({"s": {"type": "string"}}), {"s": 5})["s"] == "5"

    def test_unknown_type(self) -> None:
        with pytest.raises(c.InvalidSchemaError) as exc:
            hot({"x": {"type": "integer"}})
        assert exc.value.message == "Invalid type (integer)"
        assert exc.value.path == ("parameters", "x")


class TestDeclarations:
    def test_fields(self) -> None:
        s = hot({"p": {"type": "string", "label": "L", "description": "D", "hidden": True,
                       "immutable": True, "tags": ["a"], "default": "x"}})["p"]
        assert (s.label, s.description, s.hidden, s.immutable, s.tags, s.default) == \
            ("L", "D", True, True, ("a",), "x")

    def test_unknown_key(self) -> None:
        with pytest.raises(c.InvalidSchemaError) as exc:
            hot({"a": {"type": "number", "foo": 1}})
        assert exc.value.message == "Invalid key 'foo' for parameter (a)"

    def test_tags_only_from_2018_03_02(self) -> None:
        with pytest.raises(c.InvalidSchemaError, match="Invalid key 'tags'"):
            hot({"a": {"type": "string", "tags": ["x"]}}, "2017-09-01")
        with pytest.raises(c.InvalidSchemaError,
                           match="Tags property should be a list for parameter: a"):
            hot({"a": {"type": "string", "tags": "x"}}, "2018-03-02")

    def test_modulo_only_from_2017_02_24(self) -> None:
        with pytest.raises(c.InvalidSchemaError) as exc:
            hot({"a": {"type": "number", "constraints": [{"modulo": {"step": 2,
                                                                     "offset": 1}}]}},
                "2016-10-14")
        assert exc.value.message == "No constraint expressed"
        s = hot({"a": {"type": "number", "constraints": [{"modulo": {"step": 2,
                                                                     "offset": 1}}]}},
                "2017-02-24")
        assert error(s, {"a": 4}).message == \
            "Parameter 'a' is invalid: 4 is not a multiple of 2 with an offset of 1"

    def test_missing_type(self) -> None:
        with pytest.raises(c.InvalidSchemaError,
                           match="Missing parameter type for parameter: a"):
            hot({"a": {"default": 1}})

    def test_constraints_must_be_list_of_mappings(self) -> None:
        with pytest.raises(c.InvalidSchemaError) as exc:
            hot({"a": {"type": "string", "constraints": {"length": {"min": 1}}}})
        assert exc.value.message == \
            "Invalid parameter constraints for parameter a, expected a list"
        with pytest.raises(c.InvalidSchemaError,
                           match="Invalid key 'lenght' for parameter constraints"):
            hot({"a": {"type": "string", "constraints": [{"lenght": {"min": 1}}]}})
        with pytest.raises(c.InvalidSchemaError,
                           match="Invalid key 'low' for range constraint"):
            hot({"a": {"type": "number", "constraints": [{"range": {"low": 1}}]}})

    def test_string_bounds_are_numbers(self) -> None:
        s = hot({"a": {"type": "string", "constraints": [{"length": {"min": "2"}}]}})
        assert error(s, {"a": "x"}).message == \
            "Parameter 'a' is invalid: length (1) is out of range (min: 2, max: None)"


class TestConstraintsOnValues:
    def test_description_override(self) -> None:
        s = hot({"a": {"type": "number", "constraints": [
            {"range": {"min": 1, "max": 5}, "description": "one to five"}]}})
        assert error(s, {"a": 9}).message == "Parameter 'a' is invalid: one to five"

    def test_allowed_values_number_compare(self) -> None:
        s = hot({"a": {"type": "number", "constraints": [{"allowed_values": [1, 2]}]}})
        assert bind(s, {"a": "2"})["a"] == 2
        assert error(s, {"a": "3"}).message == \
            'Parameter \'a\' is invalid: "3" is not an allowed value [1, 2]'

    def test_list_length_and_allowed(self) -> None:
        s = hot({"l": {"type": "comma_delimited_list", "constraints": [
            {"length": {"max": 2}}, {"allowed_values": ["a", "b", "c"]}]}})
        assert bind(s, {"l": "a,b"})["l"] == ["a", "b"]
        assert error(s, {"l": "a,b,c"}).message == \
            "Parameter 'l' is invalid: length (3) is out of range (min: None, max: 2)"
        assert error(s, {"l": "a,z"}).message == \
            'Parameter \'l\' is invalid: ["a", "z"] is not an allowed value ["a", "b", "c"]'

    def test_json_length_counts_keys(self) -> None:
        s = hot({"j": {"type": "json", "constraints": [{"length": {"min": 2}}]}})
        assert error(s, {"j": {"a": 1}}).message == \
            "Parameter 'j' is invalid: length (1) is out of range (min: 2, max: None)"

    def test_pattern(self) -> None:
        s = hot({"a": {"type": "string", "constraints": [{"allowed_pattern": "[a-z]+"}]}})
        assert error(s, {"a": "ab1"}).message == \
            "Parameter 'a' is invalid: \"ab1\" does not match pattern \"[a-z]+\""

    def test_constraint_wrong_for_type(self) -> None:
        s = hot({"a": {"type": "number", "constraints": [{"allowed_pattern": "x"}]}})
        e = error(s, {"a": 1})
        assert e.message == "Parameter 'a' is invalid: AllowedPattern constraint invalid " \
                            "for number"
        assert e.error_type == "InvalidSchemaError"

    def test_bad_default(self) -> None:
        s = hot({"a": {"type": "number", "default": 9,
                       "constraints": [{"range": {"max": 5}}]}})
        e = error(s)
        assert e.message == ("Parameter 'a' is invalid: Invalid default 9 (9 is out of "
                             "range (min: None, max: 5))")
        assert e.error_type == "InvalidSchemaError"

    def test_default_not_checked_against_custom_constraint(self) -> None:
        s = hot({"a": {"type": "string", "default": "x",
                       "constraints": [{"custom_constraint": "no.such"}]}})
        with pytest.raises(errors.StackValidationFailed) as exc:
            bind(s)
        assert exc.value.message == \
            "Parameter 'a' is invalid: \"x\" does not validate no.such (constraint not found)"
        # but without value validation (what /validate does) the schema is fine
        bind_parameters(s, None, None, IDENT, validate=False)

    def test_custom_constraint_registry(self) -> None:
        c.register_custom_constraint("test.upper", lambda v, ctx: v.isupper())
        try:
            s = hot({"a": {"type": "string", "constraints": [
                {"custom_constraint": "test.upper", "description": "shout"}]}})
            assert bind(s, {"a": "OK"})["a"] == "OK"
            assert error(s, {"a": "no"}).message == "Parameter 'a' is invalid: shout"
        finally:
            c.unregister_custom_constraint("test.upper")


class TestPrecedence:
    S = {"a": {"type": "string", "default": "template"}}

    def test_caller_over_env_over_defaults(self) -> None:
        s = hot(self.S)
        env = Environment({"parameters": {"a": "env"}, "parameter_defaults": {"a": "pd"}})
        assert bind(s, {"a": "caller"}, env)["a"] == "caller"
        assert bind(s, None, env)["a"] == "env"
        env = Environment({"parameter_defaults": {"a": "pd"}})
        assert bind(s, None, env)["a"] == "pd"
        assert bind(s)["a"] == "template"

    def test_parameter_defaults_for_undeclared_names_ignored(self) -> None:
        env = Environment({"parameter_defaults": {"zz": 1}})
        assert "zz" not in bind(hot(self.S), None, env)

    def test_unknown_user_parameter(self) -> None:
        e = error(hot(self.S), {"zz": 1})
        assert e.message == "The Parameter (zz) was not defined in template."
        assert e.error_type == "UnknownUserParameter"
        env = Environment({"parameters": {"yy": 1}})
        assert error(hot(self.S), None, env).message == \
            "The Parameter (yy) was not defined in template."

    def test_missing(self) -> None:
        e = error(hot({"a": {"type": "number"}}))
        assert e.message == "The Parameter (a) was not provided."
        assert e.error_type == "UserParameterMissing"

    def test_missing_satisfied_by_parameter_defaults(self) -> None:
        env = Environment({"parameter_defaults": {"a": "3"}})
        assert bind(hot({"a": {"type": "number"}}), None, env)["a"] == 3

    def test_parameter_default_is_validated(self) -> None:
        env = Environment({"parameter_defaults": {"a": 9}})
        s = hot({"a": {"type": "number", "constraints": [{"range": {"max": 5}}]}})
        assert error(s, None, env).message == \
            "Parameter 'a' is invalid: 9 is out of range (min: None, max: 5)"


class TestPseudoAndDisplay:
    def test_hot_pseudo(self) -> None:
        v = bind(hot({}))
        assert v["OS::stack_name"] == "st"
        assert v["OS::stack_id"] == "1234"
        assert v["OS::project_id"] == "proj"
        assert "OS::region" not in v

    def test_cfn_pseudo(self) -> None:
        v = bind(parse_parameters_section({}, "cfn"), family="cfn")
        assert v["AWS::StackName"] == "st"
        assert v["AWS::StackId"] == "arn:openstack:heat::proj:stacks/st/1234"
        assert v["AWS::Region"] == "ap-southeast-1"

    def test_arn_quotes(self) -> None:
        assert stack_arn(StackIdentity("a b", "i/d", "p")) == \
            "arn:openstack:heat::p:stacks/a%20b/i%2Fd"

    def test_hidden_display(self) -> None:
        s = hot({"pw": {"type": "string", "hidden": True}, "l": {
            "type": "comma_delimited_list"}, "j": {"type": "json"}})
        v = bind(s, {"pw": "secret", "l": ["a", "b"], "j": {"k": 1}})
        assert v.hidden == frozenset({"pw"})
        shown = v.display_map()
        assert shown["pw"] == "******"
        assert shown["l"] == "a,b"
        assert shown["j"] == '{"k": 1}'
        assert v["pw"] == "secret"


class TestCfnDeclarations:
    def test_fields_and_constraints(self) -> None:
        s = parse_parameters_section({"a": {
            "Type": "Number", "MinValue": "1", "MaxValue": 9, "AllowedValues": [1, 2],
            "ConstraintDescription": "cd", "NoEcho": "True", "Default": 1,
            "Description": "D", "Label": "L"}}, "cfn")["a"]
        assert s.hidden is True
        assert [type(x).__name__ for x in s.constraints] == ["Range", "AllowedValues"]
        assert s.constraints[0].to_dict() == {"description": "cd",
                                              "range": {"min": 1, "max": 9}}

    def test_cfn_messages_use_constraint_description(self) -> None:
        s = parse_parameters_section({"a": {"Type": "String", "MinLength": 2,
                                            "ConstraintDescription": "too short"}}, "cfn")
        assert error(s, {"a": "x"}, family="cfn").message == \
            "Parameter 'a' is invalid: too short"

    def test_list_types(self) -> None:
        s = parse_parameters_section({"a": {"Type": "CommaDelimitedList"}}, "cfn")
        assert bind(s, {"a": "x,y"}, family="cfn")["a"] == ["x", "y"]
        with pytest.raises(c.InvalidSchemaError) as exc:
            parse_parameters_section({"a": {"Type": "List<AWS::EC2::Subnet::Id>"}}, "cfn")
        assert exc.value.message == "Invalid type (List<AWS::EC2::Subnet::Id>)"

    def test_hot_keys_rejected(self) -> None:
        with pytest.raises(c.InvalidSchemaError, match="Invalid key 'type' for parameter"):
            parse_parameters_section({"a": {"Type": "String", "type": "x"}}, "cfn")


def test_immutable() -> None:
    s = hot({"a": {"type": "string", "immutable": True}, "b": {"type": "string"}})
    old = bind(s, {"a": "1", "b": "1"})
    new = bind(s, {"a": "1", "b": "2"})
    check_immutable(old, new, {"b": "2"})
    new = bind(s, {"a": "2", "b": "2"})
    with pytest.raises(errors.ImmutableParameterModified) as exc:
        check_immutable(old, new, {"a": "2"})
    assert exc.value.message == \
        "The following parameters are immutable and may not be updated: a"


def test_all_parameter_schemas_include_provider_templates() -> None:
    from kiln.template.parameters import all_parameter_schemas

    own = hot({"a": {"type": "string"}})
    files = {"nested.yaml": "heat_template_version: 2018-08-31\nparameters:\n"
                            "  a: {type: number}\n  inner: {type: json}\n",
             "env.yaml": "parameters:\n  a: 1\n",
             "script.sh": "#!/bin/sh\necho hi\n"}
    merged = all_parameter_schemas(own, files)
    assert set(merged) == {"a", "inner"}
    assert merged["a"].type == "string"  # the stack's own declaration wins
    assert merged["inner"].value_type == "map"


def test_schema_check_is_redone_for_a_new_default() -> None:
    s = hot({"a": {"type": "number", "default": 1,
                   "constraints": [{"range": {"max": 5}}]}})["a"]
    s.check_schema()
    with pytest.raises(c.InvalidSchemaError, match="Invalid default 9"):
        s.with_default(9).check_schema()


def test_immutable_compares_the_raw_input_with_the_old_typed_value() -> None:
    # Heat 27: re-sending b="1" for a number parameter whose old value is 1 is refused
    s = hot({"a": {"type": "string", "immutable": True},
             "b": {"type": "number", "immutable": True, "default": 1}})
    old = bind(s, {"a": "x"})
    new = bind(s, {"a": "x", "b": "1"})
    with pytest.raises(errors.ImmutableParameterModified) as exc:
        check_immutable(old, new, {"a": "x", "b": "1"})
    assert exc.value.message == \
        "The following parameters are immutable and may not be updated: b"
    new = bind(s, {"a": "z", "b": 2})
    with pytest.raises(errors.ImmutableParameterModified, match=r"updated: a, b$"):
        check_immutable(old, new, {"a": "z", "b": 2})


def test_membership_does_not_need_a_value() -> None:
    v = bind_parameters(hot({"a": {"type": "string"}}), None, None, IDENT, validate=False)
    assert "a" in v and "zz" not in v
    with pytest.raises(errors.UserParameterMissing):
        v["a"]
