"""EngineService's catalog calls: /validate (Heat's shallow split and Kiln's deep mode),
template versions and functions, resource types, physical-id lookup.

Expected values are Heat 27's answers to the same requests (observed on a running Heat
27.0.1; the function listings are in heat27_template_functions.json, see its note).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from kiln.engine.service import EngineService, RequestContext
from kiln.errors import KilnError
from tests.unit.engine.support import create, hot

HEAT_FUNCTIONS = json.loads(
    (Path(__file__).parent / "heat27_template_functions.json").read_text())

EMPTY_ENV = {"resource_registry": {"resources": {}}, "parameters": {},
             "parameter_defaults": {}, "event_sinks": []}


def env(**sections: Any) -> dict[str, Any]:
    return {"parameters": {}, "parameter_defaults": {}, "resource_registry": {},
            "event_sinks": [], **sections}


@pytest.fixture(scope="module")
def catalog() -> EngineService:
    """The stack-less calls need no database: a service that was never started."""
    return EngineService()


async def failure(coro: Any) -> tuple[int, str, str]:
    with pytest.raises(KilnError) as info:
        await coro
    return info.value.http_status, info.value.error_type, info.value.message


# -- template versions and functions ------------------------------------------------------

async def test_template_versions_are_heats_with_release_aliases(
        catalog: EngineService, ctx: RequestContext) -> None:
    listing = await catalog.list_template_versions(ctx)
    assert [(v["version"], v["type"], v["aliases"]) for v in listing] == [
        ("AWSTemplateFormatVersion.2010-09-09", "cfn", []),
        ("HeatTemplateFormatVersion.2012-12-12", "cfn", []),
        ("heat_template_version.2013-05-23", "hot", []),
        ("heat_template_version.2014-10-16", "hot", []),
        ("heat_template_version.2015-04-30", "hot", []),
        ("heat_template_version.2015-10-15", "hot", []),
        ("heat_template_version.2016-04-08", "hot", []),
        ("heat_template_version.2016-10-14", "hot", ["heat_template_version.newton"]),
        ("heat_template_version.2017-02-24", "hot", ["heat_template_version.ocata"]),
        ("heat_template_version.2017-09-01", "hot", ["heat_template_version.pike"]),
        ("heat_template_version.2018-03-02", "hot", ["heat_template_version.queens"]),
        ("heat_template_version.2018-08-31", "hot", ["heat_template_version.rocky"]),
        ("heat_template_version.2021-04-16", "hot", ["heat_template_version.wallaby"]),
    ]


@pytest.mark.parametrize("key", sorted(k for k in HEAT_FUNCTIONS if k != "_source"))
async def test_each_version_lists_heats_functions_in_heats_order(
        catalog: EngineService, ctx: RequestContext, key: str) -> None:
    version, _, cond = key.partition("|")
    listing = await catalog.list_template_functions(ctx, version,
                                                    with_condition_func=cond == "true")
    assert [[f["functions"], f["description"]] for f in listing] == HEAT_FUNCTIONS[key]


async def test_condition_listing_is_independent_of_earlier_requests(
        catalog: EngineService, ctx: RequestContext) -> None:
    # Heat 27 leaks the condition functions into later plain listings; Kiln does not
    await catalog.list_template_functions(ctx, "heat_template_version.2016-10-14", True)
    plain = await catalog.list_template_functions(ctx, "heat_template_version.2016-10-14")
    assert "equals" not in [f["functions"] for f in plain]


async def test_unknown_template_version_is_not_found(
        catalog: EngineService, ctx: RequestContext) -> None:
    assert await failure(catalog.list_template_functions(ctx, "heat_template_version.1999")) \
        == (404, "NotFound", "Template with version heat_template_version.1999 not found")


# -- resource types ------------------------------------------------------------------------

async def test_resource_type_filters(catalog: EngineService, ctx: RequestContext) -> None:
    assert await catalog.list_resource_types(ctx, type_name="OS::Heat::R") == [
        "OS::Heat::RandomString", "OS::Heat::ResourceChain", "OS::Heat::ResourceGroup"]
    assert await catalog.list_resource_types(ctx, support_status="DEPRECATED") == []
    described = await catalog.list_resource_types(ctx, type_name="OS::Heat::RandomString",
                                                  with_description=True)
    assert described[0]["description"].startswith("A resource which generates a random "
                                                  "string.")
    assert await failure(catalog.list_resource_types(ctx, support_status="bogus")) == (
        400, "Invalid", "Data supplied was not valid: Invalid support status and should be "
        "one of ('UNKNOWN', 'SUPPORTED', 'DEPRECATED', 'UNSUPPORTED', 'HIDDEN')")


async def test_resource_schema_never_carries_a_description(
        catalog: EngineService, ctx: RequestContext) -> None:
    # Heat's REST API does not pass with_description on to the schema call
    schema = await catalog.resource_schema(ctx, "OS::Heat::RandomString",
                                           with_description=True)
    assert "description" not in schema
    assert schema["resource_type"] == "OS::Heat::RandomString"
    assert schema["attributes"]["value"]["type"] == "string"
    assert await failure(catalog.resource_schema(ctx, "OS::Nope")) == (
        404, "EntityNotFound", "The Resource Type (OS::Nope) could not be found.")


async def test_generated_templates(catalog: EngineService, ctx: RequestContext) -> None:
    hot_t = await catalog.generate_template(ctx, "OS::Heat::RandomString", "hot")
    assert hot_t["heat_template_version"] == "2016-10-14"
    assert hot_t["resources"]["RandomString"]["type"] == "OS::Heat::RandomString"
    cfn_t = await catalog.generate_template(ctx, "OS::Heat::RandomString")
    assert cfn_t["HeatTemplateFormatVersion"] == "2012-12-12"


# -- validate: Heat's shallow checks vs. create ----------------------------------------------

SPLIT_CASES = {
    # name: (template, parameters, create's (type, message))
    "property value": (
        hot({"a": {"type": "OS::Heat::RandomString", "properties": {"length": "abc"}}}), {},
        ("StackValidationFailed",
         "Property error: resources.a.properties.length: Value 'abc' is not an integer")),
    "required property": (
        hot({"a": {"type": "OS::Heat::Value"}}), {},
        ("StackValidationFailed",
         "Property error: resources.a.properties: Property value not assigned")),
    "parameter value": (
        hot({}, parameters={"n": {"type": "number"}}), {"n": "abc"},
        ("StackValidationFailed",
         "Parameter 'n' is invalid: could not convert string to float: 'abc'")),
    "parameter constraint": (
        hot({}, parameters={"n": {"type": "number",
                                  "constraints": [{"range": {"min": 1, "max": 3}}]}}),
        {"n": 7},
        ("StackValidationFailed", "Parameter 'n' is invalid: 7 is out of range (min: 1, max: 3)")),
    "missing parameter": (
        hot({}, parameters={"n": {"type": "number"}}), {},
        ("UserParameterMissing", "The Parameter (n) was not provided.")),
}


@pytest.mark.parametrize("case", sorted(SPLIT_CASES))
async def test_validate_passes_what_only_create_rejects_and_deep_catches_it(
        service: EngineService, ctx: RequestContext, case: str) -> None:
    template, params, (etype, message) = SPLIT_CASES[case]
    body = await service.validate_template(ctx, template, env(parameters=params), {})
    assert body["Environment"]["parameters"] == params
    assert await failure(service.create_stack(ctx, "split", template,
                                              env(parameters=params), {}, {})) == (
        400, etype, message)
    assert await failure(service.validate_template(ctx, template, env(parameters=params), {},
                                                   deep=True)) == (400, etype, message)
    assert await service.list_stacks(ctx) == []


SHALLOW_ERRORS = {
    "unknown type": (hot({"a": {"type": "OS::Nope"}}),
                     "The Resource Type (OS::Nope) could not be found."),
    "unknown property": (
        hot({"a": {"type": "OS::Heat::RandomString", "properties": {"lenth": 3}}}),
        "Property error: resources.a.properties: Unknown Property lenth"),
    "function arguments": (
        hot({"a": {"type": "OS::Heat::Value", "properties": {"value": {"list_join": "x"}}}}),
        'resources.a.properties.value.list_join: Incorrect arguments to "list_join" should '
        'be: "list_join" : [ " ", [ "str1", "str2"] ...]'),
    "attribute name": (
        hot({"a": {"type": "OS::Heat::RandomString"},
             "b": {"type": "OS::Heat::Value",
                   "properties": {"value": {"get_attr": ["a", "nope"]}}}}),
        "resources.b.properties.value.get_attr: The Referenced Attribute (a nope) is "
        "incorrect."),
    "attribute name in an output": (
        hot({"a": {"type": "OS::Heat::RandomString"}},
            outputs={"o": {"value": {"get_attr": ["a", "nope"]}}}),
        "outputs.o.value.get_attr: The Referenced Attribute (a nope) is incorrect."),
    "parameter and resource with one name": (
        hot({"a": {"type": "OS::Heat::None"}},
            parameters={"a": {"type": "string", "default": "x"}}),
        "Duplicate names {'a'}"),
    "update policy key": (
        hot({"r": {"type": "OS::Heat::RandomString", "update_policy": {"rolling_update": {}}}}),
        "Property error: resources.r.update_policy: Unknown Property rolling_update"),
    "update policy value": (
        hot({"g": {"type": "OS::Heat::ResourceGroup",
                   "properties": {"resource_def": {"type": "OS::Heat::None"}},
                   "update_policy": {"rolling_update": {"max_batch_size": 0}}}}),
        "Property error: resources.g.update_policy.rolling_update.max_batch_size: 0 is out "
        "of range (min: 1, max: None)"),
    "snapshot policy": (
        hot({"r": {"type": "OS::Heat::RandomString", "deletion_policy": "Snapshot"}}),
        'resources.r.deletion_policy: "Snapshot" deletion policy not supported'),
}


@pytest.mark.parametrize("case", sorted(SHALLOW_ERRORS))
async def test_validate_rejects_what_heats_validate_rejects(
        service: EngineService, ctx: RequestContext, case: str) -> None:
    template, message = SHALLOW_ERRORS[case]
    assert await failure(service.validate_template(ctx, template, env(), {})) == (
        400, "HTTPBadRequest", message)
    assert await failure(service.validate_template(ctx, template, env(), {}, deep=True)) == (
        400, "StackValidationFailed", message)


async def test_unknown_type_at_create_is_a_stack_validation_failure(
        service: EngineService, ctx: RequestContext) -> None:
    assert await failure(service.create_stack(ctx, "t", hot({"a": {"type": "OS::Nope"}}),
                                              env(), {}, {})) == (
        400, "StackValidationFailed", "The Resource Type (OS::Nope) could not be found.")


async def test_dynamic_attributes_are_not_checked(
        service: EngineService, ctx: RequestContext) -> None:
    # Heat checks get_attr names only against fixed schemas
    template = hot({
        "n": {"type": "OS::Heat::None"},
        "g": {"type": "OS::Heat::ResourceGroup",
              "properties": {"resource_def": {"type": "OS::Heat::RandomString"}}},
        "a": {"type": "OS::Heat::RandomString"},
        "v": {"type": "OS::Heat::Value", "properties": {"value": [
            {"get_attr": ["n", "anything"]}, {"get_attr": ["g", "resource.0.value"]},
            {"get_attr": ["a", "show"]}]}}})
    body = await service.validate_template(ctx, template, env(), {}, deep=True)
    assert body["Parameters"] == {}


async def test_validate_body(service: EngineService, ctx: RequestContext) -> None:
    template = hot({}, description="d", parameters={
        "n": {"type": "number", "default": 2, "label": "N", "hidden": True,
              "constraints": [{"range": {"min": 1, "max": 5}, "description": "1-5"}]}},
        parameter_groups=[{"label": "g", "parameters": ["n"]}])
    assert await service.validate_template(ctx, template, env(parameters={"n": 3}), {}) == {
        "Description": "d",
        "Parameters": {"n": {"Type": "Number", "Description": "", "NoEcho": "true",
                             "Label": "N", "Default": 2, "Value": 3, "MinValue": 1,
                             "MaxValue": 5, "ConstraintDescription": "1-5"}},
        "ParameterGroups": [{"label": "g", "parameters": ["n"]}],
        "Environment": {**EMPTY_ENV, "parameters": {"n": 3}},
    }


async def test_ignore_errors_accepts_only_heats_codes(
        service: EngineService, ctx: RequestContext) -> None:
    template = hot({})
    body = await service.validate_template(ctx, template, env(), {},
                                           ignorable_errors=["99001"])
    assert body["Environment"] == EMPTY_ENV
    assert await failure(service.validate_template(ctx, template, env(), {},
                                                   ignorable_errors=["123"])) == (
        400, "HTTPBadRequest", "Invalid codes in ignore_errors : ['123']")


PROVIDER = """heat_template_version: 2018-08-31
description: the provider
parameter_groups:
- label: g1
  parameters: [name]
parameters:
  name:
    type: string
    description: a name
    constraints: [{length: {min: 1}, description: not empty}]
  ref: {type: string, default: r}
  num: {type: number, default: 3, hidden: true}
resources:
  inner: {type: inner.yaml}
"""
INNER = "heat_template_version: 2018-08-31\nparameters:\n  deep: {type: string, default: d}\n"


async def test_show_nested_descends_into_providers_and_groups(
        service: EngineService, ctx: RequestContext) -> None:
    """The same request's body from Heat 27, compared whole."""
    template = hot({
        "v": {"type": "OS::Heat::Value", "properties": {"value": 1}},
        "p": {"type": "prov.yaml",
              "properties": {"name": {"get_param": "top"}, "ref": {"get_resource": "v"}}},
        "q": {"type": "My::Thing"},
        "g": {"type": "OS::Heat::ResourceGroup",
              "properties": {"count": 2, "resource_def": {
                  "type": "prov.yaml", "properties": {"name": "x%index%"}}}}},
        parameters={"top": {"type": "string", "default": "t"}})
    files = {"prov.yaml": PROVIDER, "inner.yaml": INNER}
    body = await service.validate_template(
        ctx, template, env(resource_registry={"My::Thing": "inner.yaml"}), files,
        show_nested=True)

    def param(name: str, **extra: Any) -> dict[str, Any]:
        return {"Type": "String", "Description": "", "NoEcho": "false", "Label": name,
                **extra}

    inner = {"Type": "inner.yaml", "Description": "No description",
             "Parameters": {"deep": param("deep", Default="d")}}

    def provider(name_value: str, **ref: Any) -> dict[str, Any]:
        return {
            "Type": "prov.yaml", "Description": "the provider",
            "Parameters": {
                "name": param("name", Description="a name", Value=name_value, MinLength=1,
                              ConstraintDescription="not empty"),
                "ref": param("ref", Default="r", **ref),
                "num": {"Type": "Number", "Description": "", "NoEcho": "true",
                        "Label": "num", "Default": 3}},
            "ParameterGroups": [{"label": "g1", "parameters": ["name"]}],
            "NestedParameters": {"inner": inner}}

    assert body == {
        "Description": "No description",
        "Parameters": {"top": param("top", Default="t")},
        "NestedParameters": {
            "q": {**inner, "Type": "My::Thing"},
            "p": provider("t", Value="v"),
            "g": {"Type": "OS::Heat::ResourceGroup", "Description": "No description",
                  "Parameters": {}, "NestedParameters": {"0": provider("x0")}}},
        "Environment": {**EMPTY_ENV, "resource_registry": {
            "resources": {}, "My::Thing": "inner.yaml", "prov.yaml": "prov.yaml"}},
    }


async def test_deep_validation_looks_inside_nested_stacks(
        service: EngineService, ctx: RequestContext) -> None:
    bad_inner = ("heat_template_version: 2018-08-31\nresources:\n"
                 "  r: {type: OS::Heat::RandomString, properties: {length: abc}}\n")
    template = hot({"p": {"type": "prov.yaml"}})
    files = {"prov.yaml": bad_inner}
    # Heat's /validate does not look inside (its create does)
    assert (await service.validate_template(ctx, template, env(), files))["Parameters"] == {}
    assert await failure(service.validate_template(ctx, template, env(), files,
                                                   deep=True)) == (
        400, "StackValidationFailed",
        "resources.p<prov.yaml>.resources.r.properties.length: Value 'abc' is not an integer")
    group = hot({"g": {"type": "OS::Heat::ResourceGroup", "properties": {
        "resource_def": {"type": "OS::Nope"}}}})
    assert (await service.validate_template(ctx, group, env(), {}))["Parameters"] == {}
    assert await failure(service.validate_template(ctx, group, env(), {}, deep=True)) == (
        400, "StackValidationFailed", "The Resource Type (OS::Nope) could not be found.")


async def test_deep_validation_checks_values_beside_references(
        service: EngineService, ctx: RequestContext) -> None:
    template = hot({
        "a": {"type": "OS::Heat::RandomString"},
        "b": {"type": "OS::Heat::RandomString",
              "properties": {"salt": {"get_attr": ["a", "value"]}, "length": "abc"}}})
    assert await failure(service.validate_template(ctx, template, env(), {}, deep=True)) == (
        400, "StackValidationFailed",
        "Property error: resources.b.properties.length: Value 'abc' is not an integer")
    fine = hot({
        "a": {"type": "OS::Heat::RandomString"},
        "b": {"type": "OS::Heat::Value", "properties": {"value": {"get_attr": ["a", "value"]}}}})
    assert (await service.validate_template(ctx, fine, env(), {}, deep=True))[
        "Description"] == "No description"


# -- physical resources -------------------------------------------------------------------

async def test_find_physical_resource(service: EngineService, ctx: RequestContext) -> None:
    stack = await create(service, ctx, "phys", hot({"r": {"type": "OS::Heat::RandomString"}}))
    ident = stack["stack_identity"]
    (res,) = await service.list_stack_resources(ctx, ident)
    found = await service.find_physical_resource(ctx, res["physical_resource_id"])
    assert found == {"stack_name": "phys", "stack_id": ident["stack_id"], "tenant": "demo",
                     "path": "/resources/r"}
    other = RequestContext(project_id="other", is_admin=False, roles=("member",))
    assert await failure(service.find_physical_resource(other, res["physical_resource_id"])) \
        == (404, "EntityNotFound",
            f"The Resource ({res['physical_resource_id']}) could not be found.")


async def test_create_rejects_an_unknown_attribute_name_before_starting(
        service: EngineService, ctx: RequestContext) -> None:
    template = hot({"a": {"type": "OS::Heat::RandomString"},
                    "b": {"type": "OS::Heat::Value",
                          "properties": {"value": {"get_attr": ["a", "nope"]}}}})
    assert await failure(service.create_stack(ctx, "attr", template, env(), {}, {})) == (
        400, "StackValidationFailed",
        "resources.b.properties.value.get_attr: The Referenced Attribute (a nope) is "
        "incorrect.")
    assert await service.list_stacks(ctx) == []
