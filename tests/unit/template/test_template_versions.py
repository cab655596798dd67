"""Versions, sections and the per-version function tables (facts from Heat 27)."""

from __future__ import annotations

import pytest

from kiln.template import REGISTRY, load_template
from kiln.template.errors import (
    InvalidTemplateSection,
    InvalidTemplateVersion,
    StackValidationFailed,
    TemplateError,
)
from tests.unit.template.tplhelpers import ALIASES, ALL_HOT, IDENTITY, hot, value


@pytest.mark.parametrize("label", ALL_HOT + list(ALIASES))
def test_every_hot_version_and_alias_is_accepted(label: str) -> None:
    t = load_template(f"heat_template_version: {label}\n")
    assert t.version.family == "hot"
    assert t.version.date == ALIASES.get(label, label)
    assert t.version.name == f"heat_template_version.{ALIASES.get(label, label)}"


def test_unknown_version_lists_the_known_ones() -> None:
    with pytest.raises(InvalidTemplateVersion) as exc:
        load_template("heat_template_version: 2012-01-01\n")
    assert exc.value.message == (
        'The template version is invalid: "heat_template_version: 2012-01-01". '
        '"heat_template_version" should be one of: 2013-05-23, 2014-10-16, 2015-04-30, '
        "2015-10-15, 2016-04-08, 2016-10-14, 2017-02-24, 2017-09-01, 2018-03-02, "
        "2018-08-31, 2021-04-16, newton, ocata, pike, queens, rocky, wallaby")
    assert exc.value.http_status == 400


def test_missing_version() -> None:
    with pytest.raises(InvalidTemplateVersion) as exc:
        load_template("resources: {}\n")
    assert exc.value.message == ("The template version is invalid: Template version was "
                                 "not provided")


def test_template_versions_listing_matches_heats_api() -> None:
    hot_rows = [r for r in REGISTRY.listing() if r[1] == "hot"]
    assert [r[0] for r in hot_rows] == [f"heat_template_version.{d}" for d in ALL_HOT]
    by_name = {r[0]: r[2] for r in hot_rows}
    assert by_name["heat_template_version.2016-10-14"] == ["heat_template_version.newton"]
    assert by_name["heat_template_version.2015-10-15"] == []


def test_unknown_top_level_section() -> None:
    with pytest.raises(InvalidTemplateSection) as exc:
        load_template("heat_template_version: 2015-10-15\nfoo: bar\n")
    assert exc.value.message == "The template section is invalid: foo"
    assert exc.value.path == ("foo",)


@pytest.mark.parametrize("version,ok", [("2015-10-15", False), ("2016-04-08", False),
                                        ("2016-10-14", True), ("2021-04-16", True)])
def test_conditions_section_exists_from_2016_10_14(version: str, ok: bool) -> None:
    body = hot(version, conditions={"c": True})
    if ok:
        assert load_template(body).condition_names == ["c"]
    else:
        with pytest.raises(InvalidTemplateSection):
            load_template(body)


def test_unknown_resource_keys_are_rejected_by_version() -> None:
    res = {"r": {"type": "OS::Heat::None", "condition": True, "external_id": "x"}}
    with pytest.raises(StackValidationFailed) as exc:
        load_template(hot("2015-10-15", resources=res))
    assert exc.value.message == ("Invalid keyword(s) inside a resource definition: "
                                 "condition, external_id")
    load_template(hot("2016-10-14", resources=res))
    with pytest.raises(StackValidationFailed) as exc:
        load_template(hot("2016-10-14", resources={"r": {"type": "X", "propertis": {}}}))
    assert exc.value.message == ("Invalid keyword(s) inside a resource definition: "
                                 "propertis")
    assert exc.value.path == ("resources", "r")


def test_resource_needs_a_type() -> None:
    for snippet in ({}, {"properties": {}}, None):
        with pytest.raises(StackValidationFailed) as exc:
            load_template(hot("2016-10-14", resources={"r": snippet}))
        assert exc.value.message == "Each resource must contain a type key."


def test_resource_field_types() -> None:
    cases = [({"type": ["x"]}, "Resource r type type must be string"),
             ({"type": "X", "properties": [1]}, "Resource r properties type must be object"),
             ({"type": "X", "metadata": "m"}, "Resource r metadata type must be object"),
             ({"type": "X", "depends_on": {"a": 1}},
              "Resource r depends_on type must be list or string"),
             ({"type": "X", "depends_on": [1]}, "Resource r depends_on must be a list of "
                                                 "strings"),
             ({"type": "X", "condition": 3},
              "Resource r condition type must be string_or_boolean")]
    for snippet, message in cases:
        with pytest.raises(StackValidationFailed) as exc:
            load_template(hot("2016-10-14", resources={"r": snippet}))
        assert exc.value.message == message


def test_outputs_need_a_value_but_unknown_keys_are_ignored_as_in_heat() -> None:
    with pytest.raises(StackValidationFailed) as exc:
        load_template(hot("2016-10-14", outputs={"o": {"description": "d"}}))
    assert exc.value.message == ("Output validation error: outputs.o: Each output "
                                 "definition must contain a value key.")
    # Heat 27 accepts (and ignores) unknown keys inside an output.
    t = load_template(hot("2016-10-14", outputs={"o": {"value": 1, "foo": 2}}))
    assert list(t.outputs) == ["o"]


def test_deletion_policy_lowercase_aliases_from_2016_10_14() -> None:
    from tests.unit.template.tplhelpers import bind

    old = hot("2015-10-15", resources={"r": {"type": "X", "deletion_policy": "retain"}})
    with pytest.raises(StackValidationFailed) as exc:
        bind(old).resource_definitions()
    assert exc.value.message == 'Invalid deletion policy "retain"'
    new = hot("2016-10-14", resources={"r": {"type": "X", "deletion_policy": "retain"}})
    assert bind(new).resource_definitions()["r"].deletion_policy == "Retain"


# -- function tables --------------------------------------------------------------------

NEW_FUNCTIONS = {
    # function: (first version that has it, a call that works, its value)
    "digest": ("2015-04-30", ["md5", "a"], "0cc175b9c0f1b6a831c399e269772661"),
    "repeat": ("2015-04-30", {"template": "<x>", "for_each": {"<x>": ["a"]}}, ["a"]),
    "str_split": ("2015-10-15", [",", "a,b"], ["a", "b"]),
    "map_merge": ("2016-04-08", [{"a": 1}, {"b": 2}], {"a": 1, "b": 2}),
    "map_replace": ("2016-10-14", [{"a": 1}, {"keys": {"a": "b"}}], {"b": 1}),
    "yaql": ("2016-10-14", {"expression": "1 + 1"}, 2),
    "filter": ("2017-02-24", [[1], [1, 2]], [2]),
    "str_replace_strict": ("2017-02-24", {"template": "ab", "params": {"a": "x"}}, "xb"),
    "make_url": ("2017-09-01", {"scheme": "http", "host": "h"}, "http://h"),
    "list_concat": ("2017-09-01", [[1], [2]], [1, 2]),
    "list_concat_unique": ("2017-09-01", [[1], [1]], [1]),
    "str_replace_vstrict": ("2017-09-01", {"template": "ab", "params": {"a": "x"}}, "xb"),
    "contains": ("2017-09-01", ["a", ["a"]], True),
}


@pytest.mark.parametrize("fn", sorted(NEW_FUNCTIONS))
@pytest.mark.parametrize("version", ALL_HOT)
def test_a_function_newer_than_the_version_is_plain_data(fn: str, version: str) -> None:
    since, args, expected = NEW_FUNCTIONS[fn]
    got = value({fn: args}, version)
    if version >= since:
        assert got == expected
    else:
        # Heat passes {fn: args} through unchanged (observed on Heat 27).
        assert got == {fn: args}


def test_condition_functions_are_data_outside_conditions() -> None:
    # equals/not/and/or are only functions inside conditions (Heat 27: plain data).
    assert value({"equals": [1, 1]}, "2016-10-14") == {"equals": [1, 1]}


@pytest.mark.parametrize("fn,args", [("Ref", "x"), ("Fn::Join", [",", ["a"]]),
                                     ("Fn::GetAZs", ""), ("Fn::Base64", "x"),
                                     ("Fn::Split", [",", "a"]), ("Fn::Replace", [{}, "a"]),
                                     ("Fn::MemberListToMap", ["a", "b", []]),
                                     ("Fn::ResourceFacade", "metadata")])
@pytest.mark.parametrize("version", ALL_HOT[1:])
def test_cfn_functions_are_removed_from_hot_2014_10_16(fn: str, args: object,
                                                        version: str) -> None:
    # Heat 27 reports a removed function when it validates the resource (the template
    # loads; a create answers 400 with this text)
    body = hot(version, resources={"r": {"type": "X", "properties": {"v": {fn: args}}}})
    with pytest.raises(StackValidationFailed) as exc:
        load_template(body).bind(identity=IDENTITY).validate()
    assert exc.value.message == (
        f"resources.r.properties.v.{fn}: The template version is invalid: The function "
        f"{fn} is not supported in this version of HOT.")


@pytest.mark.parametrize("version,removed", [("2014-10-16", False), ("2015-04-30", False),
                                             ("2015-10-15", True), ("2021-04-16", True)])
def test_fn_select_removed_from_2015_10_15(version: str, removed: bool) -> None:
    body = hot(version, outputs={"o": {"value": {"Fn::Select": [0, ["a"]]}}})
    bound = load_template(body).bind(identity=IDENTITY)
    if removed:
        with pytest.raises(StackValidationFailed):
            bound.validate()
    else:
        bound.validate()


def test_non_condition_function_inside_conditions_is_invalid_in_context() -> None:
    body = hot("2016-10-14", conditions={"c": {"get_resource": "x"}})
    with pytest.raises(StackValidationFailed) as exc:
        load_template(body)
    assert exc.value.message == ('conditions.c.get_resource: The function "get_resource" '
                                 "is invalid in this context")


@pytest.mark.parametrize("version,ok", [("2016-10-14", False), ("2017-02-24", False),
                                        ("2017-09-01", True)])
def test_contains_and_yaql_in_conditions_from_2017_09_01(version: str, ok: bool) -> None:
    body = hot(version, conditions={"c": {"yaql": {"expression": "true"}}})
    if ok:
        load_template(body)
    else:
        with pytest.raises(TemplateError):
            load_template(body)


def test_available_functions_per_version() -> None:
    v = REGISTRY.get("heat_template_version", "2013-05-23")
    # HOT 2013-05-23 still accepted the CloudFormation functions (Heat's table).
    assert sorted(v.available_functions()) == sorted([
        "get_attr", "get_file", "get_param", "get_resource", "list_join",
        "resource_facade", "str_replace", "Fn::GetAZs", "Ref", "Fn::Select", "Fn::Join",
        "Fn::Split", "Fn::Replace", "Fn::Base64", "Fn::MemberListToMap",
        "Fn::ResourceFacade"])
    v = REGISTRY.get("heat_template_version", "2016-10-14")
    assert sorted(v.available_functions(conditions=True)) == [
        "and", "equals", "get_param", "not", "or"]


def test_ambiguous_versions() -> None:
    body = {"heat_template_version": "2016-10-14", "AWSTemplateFormatVersion": "2010-09-09"}
    with pytest.raises(InvalidTemplateVersion) as exc:
        load_template(body)
    assert exc.value.message == ("The template version is invalid: Ambiguous versions "
                                 "(AWSTemplateFormatVersion, heat_template_version)")


def test_malformed_sections_get_clear_errors() -> None:
    # Heat 27 leaks "'list' object has no attribute 'items'" (and an AttributeError for
    # outputs) here; Kiln words it like Heat's message for a malformed resource.
    with pytest.raises(StackValidationFailed) as exc:
        load_template(hot("2016-10-14", resources=["a"]))
    assert exc.value.message == ('"resources" must contain a map of resource maps. Found a '
                                 "[<class 'list'>] instead")
    with pytest.raises(StackValidationFailed) as exc:
        load_template(hot("2016-10-14", resources={"r": "foo"}))
    assert exc.value.message == ('"resources" must contain a map of resource maps. Found a '
                                 "[<class 'str'>] instead")
    with pytest.raises(StackValidationFailed) as exc:
        load_template(hot("2016-10-14", outputs={"o": "foo"}))
    assert exc.value.message == ("Output validation error: outputs.o: Output definitions "
                                 "must be a map. Found a str instead")
    with pytest.raises(StackValidationFailed) as exc:
        load_template(hot("2016-10-14", conditions={"c": {"equals": [1]}}))
    assert exc.value.message == ('conditions.c.equals: Arguments to "equals" must be of the '
                                 "form: [value_1, value_2]")


def test_empty_sections_are_fine() -> None:
    t = load_template("heat_template_version: 2016-10-14\nresources:\noutputs:\nconditions:\n"
                      "parameters:\n")
    assert t.resource_names == [] and t.outputs == {} and t.condition_names == []


# What Heat 27's GET /template_versions/heat_template_version.2021-04-16/functions lists.
HEAT_2021_FUNCTIONS = {
    "get_attr": "A function for resolving resource attributes.",
    "get_file": "A function for including a file inline.",
    "get_param": "A function for resolving parameter references.",
    "get_resource": "A function for resolving resource references.",
    "list_join": "A function for joining one or more lists of strings.",
    "repeat": "A function for iterating over a list of items or a dict of keys.",
    "resource_facade": "A function for retrieving data in a parent provider template.",
    "str_replace": "A function for performing string substitutions.",
    "digest": "A function for performing digest operations.",
    "str_split": "A function for splitting delimited strings into a list.",
    "map_merge": "A function for merging maps.",
    "yaql": "A function for executing a yaql expression.",
    "map_replace": "A function for performing substitutions on maps.",
    "if": "A function to return corresponding value based on condition evaluation.",
    "filter": "A function for filtering out values from lists.",
    "str_replace_strict": "A function for performing string substitutions.",
    "make_url": "A function for performing substitutions on maps.",
    "list_concat": "A function for extending lists.",
    "str_replace_vstrict": "A function for performing string substitutions.",
    "list_concat_unique": "A function for extending lists with unique items.",
    "contains": "A function for checking whether specific value is in sequence.",
}


def test_function_listing_matches_heats_api() -> None:
    v = REGISTRY.get("heat_template_version", "2021-04-16")
    listed = {n: c.api_description for n, c in v.available_functions().items()}
    assert listed == HEAT_2021_FUNCTIONS
    cond = {n: c.api_description for n, c in v.available_functions(conditions=True).items()}
    assert cond == {
        "get_param": "A function for resolving parameter references.",
        "equals": "A function for comparing whether two values are equal.",
        "not": "A function that acts as a NOT operator on a condition.",
        "and": "A function that acts as an AND operator on conditions.",
        "or": "A function that acts as an OR operator on conditions.",
        "yaql": "A function for executing a yaql expression.",
        "contains": "A function for checking whether specific value is in sequence.",
    }
    old = REGISTRY.get("heat_template_version", "2015-04-30").available_functions()
    assert old["list_join"].api_description == "A function for joining strings."
    assert old["repeat"].api_description == "A function for iterating over a list of items."
