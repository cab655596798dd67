"""Template validation, template versions/functions and resource types, through
python-heatclient's Python API and the `openstack orchestration ...` commands.

Expected values are what Heat 27 answers (set KILN_API_COMPARE_URL to run these tests
against a real Heat; the deep-validation test is Kiln's own and is skipped there).
"""

from __future__ import annotations

import uuid
from typing import Any

import httpx
import pytest
from heatclient import exc as heat_exc

from tests.functional.api.heat_target import COMPARE_URL
from tests.support.clients import OpenStackCLI

TEMPLATE = """heat_template_version: 2018-08-31
description: catalog test
parameters:
  size:
    type: number
    default: 2
    label: Size
    description: how many
    constraints:
      - range: {min: 1, max: 5}
        description: one to five
resources:
  member:
    type: prov.yaml
    properties:
      name: {get_param: size}
"""
PROVIDER = """heat_template_version: 2018-08-31
description: the provider
parameters:
  name:
    type: string
    description: a name
resources:
  r:
    type: OS::Heat::RandomString
"""
# passes Heat's /validate, fails its create: the value is only checked at create
BAD_LENGTH: dict[str, Any] = {
    "heat_template_version": "2018-08-31",
    "resources": {"a": {"type": "OS::Heat::RandomString", "properties": {"length": "abc"}}},
}
BAD_LENGTH_ERROR = "Property error: resources.a.properties.length: Value 'abc' is not an integer"


@pytest.fixture(scope="module")
def cli(heat_endpoint: str, tmp_path_factory: pytest.TempPathFactory) -> OpenStackCLI:
    workdir = tmp_path_factory.mktemp("catalog")
    (workdir / "t.yaml").write_text(TEMPLATE)
    (workdir / "prov.yaml").write_text(PROVIDER)
    (workdir / "bad.yaml").write_text(
        "heat_template_version: 2018-08-31\nresources:\n  a: {type: OS::Nope}\n")
    return OpenStackCLI(heat_endpoint, cwd=workdir)


def unique(prefix: str) -> str:
    return f"catalog_{prefix}_{uuid.uuid4().hex[:8]}"


# -- validate ------------------------------------------------------------------------------

def test_cli_validate_show_nested_reports_the_provider_parameters(cli: OpenStackCLI) -> None:
    body = cli.json("orchestration", "template", "validate", "-t", "t.yaml", "--show-nested")
    assert body["Description"] == "catalog test"
    assert body["Parameters"] == {"size": {
        "Type": "Number", "Description": "how many", "NoEcho": "false", "Label": "Size",
        "Default": 2, "MinValue": 1, "MaxValue": 5, "ConstraintDescription": "one to five"}}
    (member,) = body["NestedParameters"].values()
    # the client sends the provider as a file:// URL in files and names the type by it
    assert member["Type"].startswith("file://") and member["Type"].endswith("/prov.yaml")
    assert member["Description"] == "the provider"
    # the parent's number arrives as the string parameter's value
    assert member["Parameters"] == {"name": {
        "Type": "String", "Description": "a name", "NoEcho": "false", "Label": "name",
        "Value": "2"}}
    registry = body["Environment"]["resource_registry"]
    assert registry == {"resources": {}, member["Type"]: member["Type"]}


def test_cli_validate_without_show_nested_and_with_an_unknown_type(
        cli: OpenStackCLI) -> None:
    body = cli.json("orchestration", "template", "validate", "-t", "t.yaml")
    assert "NestedParameters" not in body
    bad = cli.run("orchestration", "template", "validate", "-t", "bad.yaml", check=False)
    assert bad.returncode == 1
    assert "ERROR: The Resource Type (OS::Nope) could not be found." in bad.stderr


def test_validate_passes_what_create_rejects(hc: Any) -> None:
    body = hc.stacks.validate(template=BAD_LENGTH)
    assert body == {"Description": "No description", "Parameters": {}, "Environment": {
        "resource_registry": {"resources": {}}, "parameters": {}, "parameter_defaults": {},
        "event_sinks": []}}
    with pytest.raises(heat_exc.HTTPBadRequest) as info:
        hc.stacks.create(stack_name=unique("split"), template=BAD_LENGTH)
    assert BAD_LENGTH_ERROR in str(info.value)


def test_validate_parameter_values_are_not_checked(hc: Any) -> None:
    template = {"heat_template_version": "2018-08-31",
                "parameters": {"n": {"type": "number",
                                     "constraints": [{"range": {"min": 1, "max": 3}}]}},
                "resources": {}}
    body = hc.stacks.validate(template=template, parameters={"n": 7})
    assert body["Parameters"]["n"] == {"Type": "Number", "Description": "", "NoEcho": "false",
                                       "Label": "n", "Value": 7, "MinValue": 1,
                                       "MaxValue": 3}
    with pytest.raises(heat_exc.HTTPBadRequest) as info:
        hc.stacks.create(stack_name=unique("param"), template=template, parameters={"n": 7})
    assert "Parameter 'n' is invalid: 7 is out of range (min: 1, max: 3)" in str(info.value)


def test_validate_errors_have_heats_types(heat_endpoint: str) -> None:
    with httpx.Client(base_url=heat_endpoint, timeout=30) as client:
        unknown = client.post("/validate", json={"template": {
            "heat_template_version": "2018-08-31", "resources": {"a": {"type": "OS::Nope"}}}})
        create = client.post("/stacks", json={"stack_name": unique("nope"), "template": {
            "heat_template_version": "2018-08-31", "resources": {"a": {"type": "OS::Nope"}}}})
        attr = client.post("/validate", json={"template": {
            "heat_template_version": "2018-08-31",
            "resources": {"a": {"type": "OS::Heat::RandomString"}},
            "outputs": {"o": {"value": {"get_attr": ["a", "nope"]}}}}})
    message = "The Resource Type (OS::Nope) could not be found."
    assert (unknown.status_code, unknown.json()["error"]["type"],
            unknown.json()["error"]["message"]) == (400, "HTTPBadRequest", message)
    assert (create.status_code, create.json()["error"]["type"],
            create.json()["error"]["message"]) == (400, "StackValidationFailed", message)
    assert (attr.status_code, attr.json()["error"]["message"]) == (
        400, "outputs.o.value.get_attr: The Referenced Attribute (a nope) is incorrect.")


@pytest.mark.skipif(bool(COMPARE_URL), reason="deep validation is Kiln's own")
def test_deep_validation_catches_the_create_time_error(heat_endpoint: str) -> None:
    with httpx.Client(base_url=heat_endpoint, timeout=30) as client:
        shallow = client.post("/validate", json={"template": BAD_LENGTH})
        deep = client.post("/validate", params={"deep": "true"},
                           json={"template": BAD_LENGTH})
        invalid = client.post("/validate", params={"deep": "maybe"},
                              json={"template": BAD_LENGTH})
    assert shallow.status_code == 200
    assert deep.status_code == 400
    assert deep.json()["error"] == {"type": "StackValidationFailed", "traceback": None,
                                    "message": BAD_LENGTH_ERROR}
    assert invalid.status_code == 400


# -- template versions and functions --------------------------------------------------------

def test_cli_template_versions(cli: OpenStackCLI) -> None:
    rows = cli.json("orchestration", "template", "version", "list")
    assert rows[:3] == [
        {"Version": "AWSTemplateFormatVersion.2010-09-09", "Type": "cfn", "Aliases": []},
        {"Version": "HeatTemplateFormatVersion.2012-12-12", "Type": "cfn", "Aliases": []},
        {"Version": "heat_template_version.2013-05-23", "Type": "hot", "Aliases": []}]
    assert {"Version": "heat_template_version.2021-04-16", "Type": "hot",
            "Aliases": ["heat_template_version.wallaby"]} in rows
    assert len(rows) == 13


def test_cli_template_functions_with_conditions(cli: OpenStackCLI) -> None:
    rows = cli.json("orchestration", "template", "function", "list",
                    "heat_template_version.newton", "--with_conditions")
    assert [r["Functions"] for r in rows] == [
        "get_attr", "get_file", "get_param", "get_resource", "list_join", "repeat",
        "resource_facade", "str_replace", "digest", "str_split", "map_merge", "yaql",
        "map_replace", "if", "equals", "not", "and", "or"]
    assert rows[5]["Description"] == \
        "A function for iterating over a list of items or a dict of keys."


def test_template_functions_through_heatclient(hc: Any) -> None:
    functions = hc.template_versions.get("heat_template_version.2015-04-30")
    assert [(f.functions, f.description) for f in functions][:6] == [
        ("get_attr", "A function for resolving resource attributes."),
        ("get_file", "A function for including a file inline."),
        ("get_param", "A function for resolving parameter references."),
        ("get_resource", "A function for resolving resource references."),
        ("list_join", "A function for joining strings."),
        ("repeat", "A function for iterating over a list of items.")]
    with pytest.raises(heat_exc.HTTPNotFound):
        hc.template_versions.get("heat_template_version.1999-01-01")


# -- resource types ------------------------------------------------------------------------

def test_cli_resource_type_list_and_show(cli: OpenStackCLI) -> None:
    rows = cli.json("orchestration", "resource", "type", "list", "--filter",
                    "name=OS::Heat::R")
    assert rows == [{"Resource Type": "OS::Heat::RandomString"},
                    {"Resource Type": "OS::Heat::ResourceChain"},
                    {"Resource Type": "OS::Heat::ResourceGroup"}]
    schema = cli.json("orchestration", "resource", "type", "show", "OS::Heat::None")
    assert schema == {
        "resource_type": "OS::Heat::None", "properties": {},
        "attributes": {"show": {"description": "Detailed information about resource.",
                                "type": "map"}},
        "support_status": {"status": "SUPPORTED", "message": None, "version": "5.0.0",
                           "previous_status": None}}


def test_cli_resource_type_template(cli: OpenStackCLI) -> None:
    template = cli.json("orchestration", "resource", "type", "show", "OS::Heat::None",
                        "--template-type", "hot")
    assert template == {
        "heat_template_version": "2016-10-14",
        "description": "Initial template of NoneResource",
        "parameters": {},
        "resources": {"NoneResource": {"type": "OS::Heat::None", "properties": {}}},
        "outputs": {
            "show": {"value": {"get_attr": ["NoneResource", "show"]},
                     "description": "Detailed information about resource."},
            "OS::stack_id": {"value": {"get_resource": "NoneResource"}}}}


def test_resource_types_through_heatclient(hc: Any) -> None:
    described = hc.resource_types.list(filters={"name": "OS::Heat::RandomString"},
                                       with_description=True)
    assert [t.resource_type for t in described] == ["OS::Heat::RandomString"]
    assert described[0].description.startswith("A resource which generates a random string.")
    assert hc.resource_types.list(filters={"support_status": "DEPRECATED"}) == []
    schema = hc.resource_types.get("OS::Heat::RandomString", with_description=True)
    assert "description" not in schema  # Heat's API drops the flag for this call
    assert schema["properties"]["length"]["default"] == 32
    cfn = hc.resource_types.generate_template("OS::Heat::RandomString")
    assert cfn["HeatTemplateFormatVersion"] == "2012-12-12"
    assert cfn["Resources"]["RandomString"]["Type"] == "OS::Heat::RandomString"
    with pytest.raises(heat_exc.HTTPNotFound):
        hc.resource_types.get("OS::Nope")
    with pytest.raises(heat_exc.HTTPBadRequest) as info:
        hc.resource_types.list(filters={"support_status": "bogus"})
    assert "Invalid support status" in str(info.value)

