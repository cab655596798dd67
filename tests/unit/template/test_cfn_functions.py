"""CloudFormation functions, Mappings and Conditions in both CFN dialects.

Expected values are what Heat 27 produced for the same template (a stack created on a
live Heat, outputs read back) or its error texts for the same bad input (preview).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

import pytest

from kiln import errors
from kiln.template import StackIdentity, load_template
from kiln.template.bound import BoundTemplate

IDENT = StackIdentity(stack_name="t2cfn1", stack_id="66da58fb", project_id="admin")


class World:
    """Resources that exist with fixed ids and attributes."""

    def reference(self, name: str) -> Any:
        return f"{name}-physical"

    def attribute(self, name: str, attr: str, path: Sequence[Any]) -> Any:
        return {"value": "x"}.get(attr)

    def all_attributes(self, name: str) -> Mapping[str, Any]:
        return {"value": "x"}

    def resource_type(self, name: str) -> str:
        return "OS::Heat::Value"

    def facade(self, kind: str) -> Any:
        return {"metadata": {"m": 1}, "deletion_policy": "Retain",
                "update_policy": {"u": 2}}[kind]

    def availability_zones(self) -> list[str]:
        return ["az1", "az2"]


FULL = {
    "AWSTemplateFormatVersion": "2010-09-09",
    "Parameters": {"P": {"Type": "String", "Default": "pv"},
                   "L": {"Type": "CommaDelimitedList", "Default": "a,b,c"}},
    "Mappings": {"M": {"k1": {"v1": "found", "n": [1, 2]}}},
    "Conditions": {
        "IsPv": {"Fn::Equals": [{"Ref": "P"}, "pv"]},
        "NotPv": {"Fn::Not": ["IsPv"]},
        "Both": {"Fn::And": ["IsPv", {"Fn::Equals": [1, 1]}]},
        "Either": {"Fn::Or": [{"Fn::Equals": [1, 2]}, "NotPv"]},
    },
    "Resources": {"V": {"Type": "OS::Heat::Value", "Properties": {"value": "x"}}},
    "Outputs": {
        "ref_param": {"Value": {"Ref": "P"}},
        "ref_list": {"Value": {"Ref": "L"}},
        "ref_stackname": {"Value": {"Ref": "AWS::StackName"}},
        "ref_region": {"Value": {"Ref": "AWS::Region"}},
        "ref_stackid": {"Value": {"Ref": "AWS::StackId"}},
        "ref_res": {"Value": {"Ref": "V"}},
        "getatt": {"Value": {"Fn::GetAtt": ["V", "value"]}},
        "join": {"Value": {"Fn::Join": [",", ["a", "b", {"Ref": "P"}]]}},
        "join_none": {"Value": {"Fn::Join": ["-", ["a", None]]}},
        "sel_list": {"Value": {"Fn::Select": ["1", ["a", "b"]]}},
        "sel_oob": {"Value": {"Fn::Select": [5, ["a", "b"]]}},
        "sel_map": {"Value": {"Fn::Select": ["k", {"k": "v"}]}},
        "sel_map_missing": {"Value": {"Fn::Select": ["z", {"k": "v"}]}},
        "sel_json": {"Value": {"Fn::Select": [0, '["j0", "j1"]']}},
        "sel_empty": {"Value": {"Fn::Select": [0, ""]}},
        "split": {"Value": {"Fn::Split": [",", "a,b,,c"]}},
        "replace": {"Value": {"Fn::Replace": [{"$a": "A", "%b%": "B", "$ab": "X"},
                                              "$a $ab %b%"]}},
        "b64": {"Value": {"Fn::Base64": "plain"}},
        "findinmap": {"Value": {"Fn::FindInMap": ["M", "k1", "v1"]}},
        "findinmap_list": {"Value": {"Fn::FindInMap": ["M", "k1", "n"]}},
        "getazs": {"Value": {"Fn::GetAZs": ""}},
        "mltm": {"Value": {"Fn::MemberListToMap": [
            "Name", "Value", [".member.0.Name=key", ".member.0.Value=door",
                              ".member.1.Name=k2", ".member.1.Value=v=2",
                              ".member.2.Name=lonely"]]}},
        "facade": {"Value": {"Fn::ResourceFacade": "DeletionPolicy"}},
        "if_t": {"Value": {"Fn::If": ["IsPv", "yes", "no"]}},
        "if_f": {"Value": {"Fn::If": ["NotPv", "yes", "no"]}},
        "both": {"Value": {"Fn::If": ["Both", "b1", "b0"]}},
        "either": {"Value": {"Fn::If": ["Either", "e1", "e0"]}},
        "cond_out": {"Value": "shown", "Condition": "NotPv"},
    },
}


def bound(template: Mapping[str, Any], **params: Any) -> BoundTemplate:
    return load_template(json.dumps(template)).bind(
        user_params=params, identity=IDENT, resolver=World())


def test_every_function_as_heat_resolves_it() -> None:
    outs = {n: o.value for n, o in bound(FULL).outputs().items()}
    assert outs == {
        "b64": "plain", "both": "b1", "cond_out": None, "either": "e0",
        "findinmap": "found", "findinmap_list": [1, 2], "getatt": "x",
        "getazs": ["az1", "az2"], "if_f": "no", "if_t": "yes", "join": "a,b,pv",
        "join_none": "a-", "mltm": {"key": "door", "k2": "v=2"},
        "ref_list": ["a", "b", "c"], "ref_param": "pv", "ref_region": "ap-southeast-1",
        "ref_res": "V-physical",
        "ref_stackid": "arn:openstack:heat::admin:stacks/t2cfn1/66da58fb",
        "ref_stackname": "t2cfn1", "replace": "A X B", "sel_empty": "",
        "sel_json": "j0", "sel_list": "b", "sel_map": "v", "sel_map_missing": "",
        "sel_oob": "", "split": ["a", "b", "", "c"], "facade": "Retain",
    }


def test_conditions_follow_parameters() -> None:
    b = bound(FULL, P="other")
    assert dict(b.conditions) == {"IsPv": False, "NotPv": True, "Both": False,
                                  "Either": True}
    assert b.outputs()["cond_out"].value == "shown"


def test_ref_dependencies_only_for_resources() -> None:
    t = {"AWSTemplateFormatVersion": "2010-09-09",
         "Parameters": {"P": {"Type": "String", "Default": "x"}},
         "Resources": {
             "A": {"Type": "OS::Heat::None"},
             "B": {"Type": "OS::Heat::None", "Properties": {
                 "a": {"Ref": "A"}, "p": {"Ref": "P"}, "s": {"Ref": "AWS::StackName"}}},
             "C": {"Type": "OS::Heat::None",
                   "Properties": {"g": {"Fn::GetAtt": ["B", "x"]}}}}}
    deps = bound(t).dependencies()
    assert deps["B"] == {"A"}
    assert deps["C"] == {"B"}


def output_error(value: Any, **extra: Any) -> str | None:
    t = {"AWSTemplateFormatVersion": "2010-09-09",
         "Parameters": {"P": {"Type": "String", "Default": "pv"}},
         "Mappings": {"M": {"k": {"v": 1}}},
         "Resources": {"V": {"Type": "OS::Heat::Value"}},
         "Outputs": {"o": {"Value": value}}, **extra}
    return bound(t).outputs()["o"].error


@pytest.mark.parametrize(("value", "message"), [
    ({"Ref": "Nope"}, 'The specified reference "Nope" (in unknown) is incorrect.'),
    ({"Fn::Select": ["x", ["a"]]}, 'Index to "Fn::Select" must be an integer'),
    ({"Fn::Select": [1, {"a": 1}]}, 'Index to "Fn::Select" must be a string'),
    ({"Fn::Select": [0, "[bad"]}, '"Fn::Select": Expecting value: line 1 column 2 (char 1)'),
    ({"Fn::Split": [",", 5]}, "String to split must be string; got <class 'int'>"),
    ({"Fn::Base64": 5}, '"Fn::Base64" argument must be a string'),
    ({"Fn::FindInMap": ["M", "k", "zz"]}, "'zz'"),
    ({"Fn::FindInMap": ["Q", "k", "zz"]}, "'Q'"),
    ({"Fn::Join": [",", "notalist"]}, '"Fn::Join" must operate on a list'),
])
def test_resolution_errors(value: Any, message: str) -> None:
    assert output_error(value) == message


def load_error(template: Mapping[str, Any]) -> str:
    with pytest.raises(errors.KilnError) as exc:
        load_template(json.dumps(template))
    return exc.value.message


def in_resource(value: Any) -> dict[str, Any]:
    return {"AWSTemplateFormatVersion": "2010-09-09",
            "Resources": {"V": {"Type": "OS::Heat::Value",
                                "Properties": {"value": value}}}}


@pytest.mark.parametrize(("value", "message"), [
    ({"Fn::GetAtt": ["V"]}, 'Resources.V.Properties.value.Fn::GetAtt: Arguments to '
                            '"Fn::GetAtt" must be of the form [resource_name, attribute]'),
    ({"Fn::Select": [1]}, 'Resources.V.Properties.value.Fn::Select: Arguments to '
                          '"Fn::Select" must be of the form [index, collection]'),
    ({"Fn::Split": ","}, 'Resources.V.Properties.value.Fn::Split: Incorrect arguments to '
                         '"Fn::Split" should be: "Fn::Split" : [ ",", "str1,str2"]]'),
    ({"Fn::Replace": {"a": 1}},
     'Resources.V.Properties.value.Fn::Replace: Incorrect arguments to "Fn::Replace" '
     'should be: {"Fn::Replace": [ {"$var1": "foo", "%var2%": "bar"}, '
     '"$var1 is %var2%"]}'),
    ({"Fn::Replace": ["x", "a"]},
     'Resources.V.Properties.value.Fn::Replace: "Fn::Replace" parameters must be a mapping'),
    ({"Fn::FindInMap": ["M", "k"]}, "Resources.V.Properties.value.Fn::FindInMap: "
                                    "'not enough values to unpack (expected 3, got 2)'"),
    ({"Fn::MemberListToMap": ["a", 1, []]},
     "Resources.V.Properties.value.Fn::MemberListToMap: Fn::MemberListToMap Value Name "
     "must be a string"),
    ({"Fn::ResourceFacade": "Bogus"},
     'Resources.V.Properties.value.Fn::ResourceFacade: Incorrect arguments to '
     '"Fn::ResourceFacade" should be one of: Metadata, DeletionPolicy, UpdatePolicy'),
])
def test_shape_errors_at_load(value: Any, message: str) -> None:
    assert load_error(in_resource(value)) == message


def test_member_list_to_map_wrong_arity_message() -> None:
    assert load_error(in_resource({"Fn::MemberListToMap": ["a", "b"]})) == (
        "Resources.V.Properties.value.Fn::MemberListToMap: Wrong Arguments try: \"\n"
        "            {'Fn::MemberListToMap': ['Name', 'Value',\n"
        "                                     ['.member.0.Name=key',\n"
        "                                      '.member.0.Value=door']]}\n"
        "            \"")


def test_condition_section_rules() -> None:
    base = {"AWSTemplateFormatVersion": "2010-09-09", "Resources": {}}
    assert load_error({**base, "Conditions": {"c": {"Fn::Not": "x"}}}) == \
        'Conditions.c.Fn::Not: Arguments to "Fn::Not" must be of the form: [condition]'
    assert load_error({**base, "Conditions": {"c": {"Fn::Join": [",", ["a"]]}}}) == \
        'Conditions.c.Fn::Join: The function "Fn::Join" is invalid in this context'
    assert load_error({**base, "Conditions": {"c": True, "d": {"Fn::Or": ["c"]}}}) == \
        'Conditions.d.Fn::Or: The minimum number of condition arguments to "Fn::Or" is 2.'


def test_heat_2012_ignores_a_resource_condition() -> None:
    # observed on Heat 27: a 2012-12-12 template has no conditions, and a resource's
    # Condition key is ignored, so the resource still exists (stack preview lists it)
    tmpl = {"HeatTemplateFormatVersion": "2012-12-12",
            "Resources": {"R": {"Type": "OS::Heat::None", "Condition": "C"}}}
    assert list(bound(tmpl).resource_definitions()) == ["R"]


def test_find_in_map_and_ref_inside_conditions() -> None:
    t = {"AWSTemplateFormatVersion": "2010-09-09",
         "Parameters": {"P": {"Type": "String", "Default": "a"}},
         "Mappings": {"M": {"a": {"b": True}}},
         "Conditions": {"c": {"Fn::FindInMap": ["M", {"Ref": "P"}, "b"]}},
         "Resources": {"V": {"Type": "OS::Heat::Value", "Condition": "c",
                             "Properties": {"value": {"Fn::If": ["c", "y", "n"]}}}}}
    b = bound(t)
    assert b.conditions["c"] is True
    defn = b.resource_definitions()["V"]
    assert b.resolve(defn.properties) == {"value": "y"}


def test_equals_is_plain_data_outside_conditions() -> None:
    b = bound(in_resource({"Fn::Equals": [1, 1]}))
    assert b.resolve(b.resource_definitions()["V"].properties) == \
        {"value": {"Fn::Equals": [1, 1]}}


class TestHeat20121212:
    def test_no_fn_if_and_no_conditions(self) -> None:
        t = {"HeatTemplateFormatVersion": "2012-12-12",
             "Resources": {"V": {"Type": "OS::Heat::Value",
                                 "Properties": {"value": {"Fn::If": ["a", 1, 2]}}}}}
        b = bound(t)
        assert b.resolve(b.resource_definitions()["V"].properties) == \
            {"value": {"Fn::If": ["a", 1, 2]}}
        with pytest.raises(errors.KilnError, match="The template section is invalid: "
                                                   "Conditions"):
            load_template(json.dumps({"HeatTemplateFormatVersion": "2012-12-12",
                                      "Conditions": {}, "Resources": {}}))

    def test_same_functions_otherwise(self) -> None:
        t = {"HeatTemplateFormatVersion": "2012-12-12",
             "Parameters": {"P": {"Type": "String", "Default": "pv"}},
             "Resources": {"V": {"Type": "OS::Heat::Value"}},
             "Outputs": {"o": {"Value": {"Fn::Join": ["-", [
                 {"Ref": "P"}, {"Fn::Select": [0, {"Fn::Split": [",", "q,r"]}]},
                 {"Fn::Replace": [{"%x%": "X"}, "%x%"]}, {"Ref": "V"}]]}}}}
        assert bound(t).outputs()["o"].value == "pv-q-X-V-physical"


class TestHot20130523:
    def test_cfn_functions_accepted(self) -> None:
        t = {"heat_template_version": "2013-05-23",
             "parameters": {"p": {"type": "string", "default": "x"}},
             "resources": {"V": {"type": "OS::Heat::Value"}},
             "outputs": {"o": {"value": [
                 {"Ref": "p"}, {"Ref": "OS::stack_name"}, {"Fn::Join": ["-", ["a", "b"]]},
                 {"Fn::Select": [0, ["q"]]}, {"Fn::GetAtt": ["V", "value"]},
                 {"Fn::FindInMap": ["a", "b", "c"]}]}}}
        # Heat 27: Fn::GetAtt and Fn::FindInMap are not HOT 2013-05-23 functions
        assert bound(t).outputs()["o"].value == [
            "x", "t2cfn1", "a-b", "q", {"Fn::GetAtt": ["V", "value"]},
            {"Fn::FindInMap": ["a", "b", "c"]}]

    def test_removed_from_2014_10_16(self) -> None:
        # Heat 27 reports a removed function when it validates a resource that exists,
        # not when it parses the template: POST /stacks answers 400 with this text for
        # an OS::Heat::Value, but creates the stack when the resource is an
        # OS::Heat::None or its condition is false (its POST /validate still checks
        # the None)
        def template(rtype: str, **extra: Any) -> dict[str, Any]:
            return {"heat_template_version": extra.pop("version", "2014-10-16"),
                    "resources": {"V": {"type": rtype, **extra,
                                        "properties": {"value": {"Ref": "x"}}}}}

        msg = ("resources.V.properties.value.Ref: The template version is invalid: The "
               "function Ref is not supported in this version of HOT.")
        value = load_template(json.dumps(template("OS::Heat::Value"))).bind()
        with pytest.raises(errors.StackValidationFailed) as exc:
            value.resource_definitions()
        assert exc.value.message == msg
        placeholder = load_template(json.dumps(template("OS::Heat::None"))).bind()
        placeholder.resource_definitions()
        placeholder.validate(placeholders=False)  # what a create checks
        with pytest.raises(errors.StackValidationFailed) as exc:
            placeholder.validate()  # what POST /validate checks
        assert exc.value.message == msg
        disabled = template("OS::Heat::Value", version="2018-08-31", condition="never")
        disabled["conditions"] = {"never": False}
        load_template(json.dumps(disabled)).bind().validate()


def test_unknown_resource_keys_are_ignored() -> None:
    # Heat 27 previews this template without complaint (CFN resource keys are not checked)
    t = {"AWSTemplateFormatVersion": "2010-09-09",
         "Resources": {"V": {"Type": "OS::Heat::Value", "Bogus": 1}}}
    assert bound(t).enabled_resource_names() == ["V"]


def test_ref_to_a_disabled_resource() -> None:
    # Heat 27: the stack is created; Ref to the disabled resource is an output error,
    # while Fn::GetAtt to it fails validation.
    t = {"AWSTemplateFormatVersion": "2010-09-09",
         "Conditions": {"Off": {"Fn::Equals": [1, 2]}},
         "Resources": {"D": {"Type": "OS::Heat::Value", "Condition": "Off"},
                       "E": {"Type": "OS::Heat::Value"}},
         "Outputs": {"ref_disabled": {"Value": {"Ref": "D"}},
                     "if_ref": {"Value": {"Fn::If": ["Off", {"Ref": "D"}, "alt"]}},
                     "ref_e": {"Value": {"Ref": "E"}}}}
    b = bound(t)
    b.validate()
    outs = b.outputs()
    assert outs["ref_disabled"].error == \
        'The specified reference "D" (in unknown) is incorrect.'
    assert outs["if_ref"].value == "alt"
    assert outs["ref_e"].value == "E-physical"
    assert b.dependencies() == {"E": frozenset()}
    t["Outputs"]["bad"] = {"Value": {"Fn::GetAtt": ["D", "value"]}}
    with pytest.raises(errors.StackValidationFailed) as exc:
        bound(t).validate()
    assert exc.value.message == ('Outputs.bad.Value.Fn::GetAtt: The specified reference '
                                 '"D" (in unknown) is incorrect.')


def test_condition_that_is_not_a_boolean() -> None:
    # Heat 27 (preview): "Condition validation error: The definition of condition "c"
    # is invalid: t2y" for a Ref to the stack name used as a condition
    t = {"AWSTemplateFormatVersion": "2010-09-09",
         "Conditions": {"c": {"Ref": "AWS::StackName"}},
         "Resources": {"V": {"Type": "OS::Heat::Value", "Condition": "c"}}}
    b = load_template(json.dumps(t)).bind(identity=StackIdentity("t2y", "i", "p"))
    with pytest.raises(errors.StackValidationFailed) as exc:
        b.validate()
    assert exc.value.message == ('Condition validation error: The definition of '
                                 'condition "c" is invalid: t2y')


def test_function_tables_as_heat_lists_them() -> None:
    # GET /template_versions/<v>/functions on Heat 27 (names, order, descriptions)
    from kiln.template import REGISTRY

    aws = REGISTRY.get("AWSTemplateFormatVersion", "2010-09-09")
    listing = [(n, c.api_description) for n, c in aws.available_functions().items()]
    assert listing == [
        ("Fn::FindInMap", "A function for resolving keys in the template mappings."),
        ("Fn::GetAZs", "A function for retrieving the availability zones."),
        ("Ref", "A function for resolving parameters or resource references."),
        ("Fn::GetAtt", "A function for resolving resource attributes."),
        ("Fn::Select", "A function for selecting an item from a list or map."),
        ("Fn::Join", "A function for joining strings."),
        ("Fn::Split", "A function for splitting strings."),
        ("Fn::Replace", "A function for performing string substitutions."),
        ("Fn::Base64", "A placeholder function for converting to base64."),
        ("Fn::MemberListToMap",
         "A function to convert lists with enumerated keys and values to mapping."),
        ("Fn::ResourceFacade",
         "A function for retrieving data in a parent provider template."),
        ("Fn::If",
         "A function to return corresponding value based on condition evaluation."),
    ]
    cond = aws.available_functions(conditions=True)
    assert {n: c.api_description for n, c in cond.items()} == {
        "Fn::Equals": "A function for comparing whether two values are equal.",
        "Ref": "A function for resolving parameter references.",
        "Fn::FindInMap": "A function for resolving keys in the template mappings.",
        "Fn::Not": "A function that acts as a NOT operator on a condition.",
        "Fn::And": "A function that acts as an AND operator on conditions.",
        "Fn::Or": "A function that acts as an OR operator on conditions.",
    }
    heat = REGISTRY.get("HeatTemplateFormatVersion", "2012-12-12")
    assert list(heat.available_functions()) == [
        "Fn::FindInMap", "Fn::GetAZs", "Ref", "Fn::GetAtt", "Fn::Select", "Fn::Join",
        "Fn::Split", "Fn::Replace", "Fn::Base64", "Fn::MemberListToMap",
        "Fn::ResourceFacade"]
    assert heat.available_functions(conditions=True) == {}
