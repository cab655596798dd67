"""Template versions, functions, resource types, validate, software configs/deployments,
build info and services through python-heatclient (expected values are Heat's)."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from heatclient import exc as heat_exc

from tests.support.server import HTTP_TIMEOUT

HOT = {"heat_template_version": "2018-08-31",
       "description": "validate me",
       "parameters": {"size": {"type": "number", "default": 3, "label": "Size",
                               "description": "how many"}},
       "resources": {"x": {"type": "OS::Heat::None"}}}


def test_template_versions_list_both_families(hc: Any) -> None:
    versions = {v.version: v.type for v in hc.template_versions.list()}
    assert versions["heat_template_version.2018-08-31"] == "hot"
    assert versions["heat_template_version.2021-04-16"] == "hot"
    assert versions["AWSTemplateFormatVersion.2010-09-09"] == "cfn"
    assert versions["HeatTemplateFormatVersion.2012-12-12"] == "cfn"


def test_template_functions_with_and_without_conditions(hc: Any) -> None:
    plain = {f.functions for f in hc.template_versions.get("heat_template_version.2018-08-31")}
    assert {"get_attr", "get_param", "list_join", "str_replace", "yaql"} <= plain
    with_cond = {f.functions for f in hc.template_versions.get(
        "heat_template_version.2018-08-31", with_condition_func=True)}
    assert {"equals", "not", "and", "or"} <= with_cond
    assert plain <= with_cond


def test_unknown_template_version_is_404(hc: Any) -> None:
    with pytest.raises(heat_exc.HTTPNotFound):
        hc.template_versions.get("heat_template_version.1999-01-01")


def test_resource_types(hc: Any) -> None:
    names = hc.resource_types.list()
    assert "OS::Heat::None" in [t.resource_type for t in names]
    one = hc.resource_types.list(filters={"name": "OS::Heat::RandomString"})
    assert [t.resource_type for t in one] == ["OS::Heat::RandomString"]
    described = hc.resource_types.list(filters={"name": "OS::Heat::None"},
                                       with_description=True)
    assert described[0].resource_type == "OS::Heat::None"
    assert described[0].description.startswith("Enables easily disabling certain resources")


def test_resource_type_schema_and_template(hc: Any) -> None:
    schema = hc.resource_types.get("OS::Heat::None")
    assert schema["resource_type"] == "OS::Heat::None"
    assert schema["properties"] == {}
    assert schema["support_status"]["status"] == "SUPPORTED"
    hot = hc.resource_types.generate_template("OS::Heat::None", template_type="hot")
    assert hot["resources"] == {"NoneResource": {"type": "OS::Heat::None", "properties": {}}}
    cfn = hc.resource_types.generate_template("OS::Heat::None", template_type="cfn")
    assert cfn["HeatTemplateFormatVersion"] == "2012-12-12"
    assert cfn["Resources"] == {"NoneResource": {"Type": "OS::Heat::None", "Properties": {}}}


def test_unknown_resource_type_is_404(hc: Any) -> None:
    with pytest.raises(heat_exc.HTTPNotFound) as info:
        hc.resource_types.get("OS::Nope::Nothing")
    assert "The Resource Type (OS::Nope::Nothing) could not be found." in str(info.value)


def test_validate_reports_parameters(hc: Any) -> None:
    result = hc.stacks.validate(template=HOT)
    assert result["Description"] == "validate me"
    assert result["Parameters"]["size"] == {
        "Type": "Number", "Default": 3, "Label": "Size", "Description": "how many",
        "NoEcho": "false"}


def test_validate_rejects_a_bad_template(heat_endpoint: str) -> None:
    bad = {"heat_template_version": "2018-08-31",
           "resources": {"x": {"type": "OS::Heat::None", "depends_on": ["missing"]}}}
    resp = httpx.post(heat_endpoint + "/validate", json={"template": bad}, timeout=HTTP_TIMEOUT)
    assert resp.status_code == 400
    assert resp.json()["error"]["type"] in ("StackValidationFailed", "HTTPBadRequest",
                                            "InvalidTemplateReference")


def test_software_config_crud(hc: Any) -> None:
    created = hc.software_configs.create(
        name="api_sc", group="script", config="echo hi", inputs=[{"name": "foo"}],
        outputs=[{"name": "bar"}], options={"a": 1})
    try:
        assert created.name == "api_sc"
        assert created.group == "script"
        assert created.config == "echo hi"
        assert created.inputs == [{"name": "foo", "type": "String"}]
        assert created.outputs == [{"name": "bar", "type": "String", "error_output": False}]
        assert created.options == {"a": 1}
        shown = hc.software_configs.get(created.id)
        assert shown.config == "echo hi"
        listed = {c.id: c for c in hc.software_configs.list()}
        assert listed[created.id].name == "api_sc"
        assert not hasattr(listed[created.id], "config")
    finally:
        hc.software_configs.delete(created.id)
    with pytest.raises(heat_exc.HTTPNotFound):
        hc.software_configs.get(created.id)


def test_software_deployment_crud(hc: Any) -> None:
    config = hc.software_configs.create(name="api_sd_cfg", group="script", config="true")
    try:
        sd = hc.software_deployments.create(
            config_id=config.id, server_id="api-server-1", input_values={"foo": "x"},
            action="CREATE", status="IN_PROGRESS")
        assert sd.server_id == "api-server-1"
        assert sd.config_id == config.id
        assert sd.status == "IN_PROGRESS"
        updated = hc.software_deployments.update(sd.id, status="COMPLETE",
                                                 output_values={"bar": "baz"})
        assert updated.status == "COMPLETE"
        assert updated.output_values == {"bar": "baz"}
        listed = hc.software_deployments.list(server_id="api-server-1")
        assert [d.id for d in listed] == [sd.id]
        assert hc.software_deployments.get(sd.id).status == "COMPLETE"
        hc.software_deployments.delete(sd.id)
        with pytest.raises(heat_exc.HTTPNotFound):
            hc.software_deployments.get(sd.id)
    finally:
        hc.software_configs.delete(config.id)


def test_build_info(hc: Any) -> None:
    info = hc.build_info.build_info()
    assert set(info) == {"api", "engine"}
    assert set(info["api"]) == {"revision"}


def test_services_lists_the_engine(hc: Any) -> None:
    services = hc.services.list()
    assert services
    assert services[0].binary.endswith("-engine")
    assert services[0].status == "up"
