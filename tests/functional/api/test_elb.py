"""AWS::ElasticLoadBalancing::LoadBalancer through a real ``kiln serve`` on the wire
(httpx); KILN_API_COMPARE_URL runs the same against a real Heat 27.0.1, whose answers
the schema and the validation are. No cloud: the nested stack's server, wait condition
and alarm are mapped to OS::Heat::None by the environment, which the nested stack
inherits, so the create runs everywhere (the cloud-free peer Heat has no CloudWatch)."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.functional.api.heat_target import COMPARE_URL, wait_for
from tests.functional.api.test_validate_parity import answer, hot
from tests.support.server import KilnProcess, start_kiln

TYPE = "AWS::ElasticLoadBalancing::LoadBalancer"
HEAT_SCHEMA = json.loads(
    (Path(__file__).parents[2] / "unit" / "resources" / "heat27" / "elb_schema.json")
    .read_text())

LB = {"type": TYPE, "properties": {
    "AvailabilityZones": [],
    "Listeners": [{"LoadBalancerPort": 80, "InstancePort": 8080, "Protocol": "HTTP"}]}}
NO_CLOUD = {"resource_registry": {"AWS::EC2::Instance": "OS::Heat::None",
                                  "AWS::CloudFormation::WaitCondition": "OS::Heat::None",
                                  "AWS::CloudWatch::Alarm": "OS::Heat::None"}}


@pytest.fixture(scope="module")
def api(heat_endpoint: str) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=heat_endpoint, timeout=60, follow_redirects=True) as client:
        yield client


def test_the_schema_is_heats(api: httpx.Client) -> None:
    resp = api.get(f"/resource_types/{TYPE}")
    assert resp.status_code == 200, resp.text
    assert resp.json() == HEAT_SCHEMA
    assert TYPE in api.get("/resource_types").json()["resource_types"]


def test_validate_needs_no_cloud(api: httpx.Client) -> None:
    assert answer(api, "validate", {"template": hot({"lb": LB})}) == (200, None, None)
    # Heat's validation looks at the template only: values are checked at create
    odd = {"type": TYPE, "properties": {**LB["properties"], "HealthCheck": {
        "HealthyThreshold": 3, "Interval": 5, "Target": "HTTP:80/", "Timeout": 10,
        "UnhealthyThreshold": 5}}}
    assert answer(api, "validate", {"template": hot({"lb": odd})}) == (200, None, None)
    # a property Heat declares but does not implement is refused
    subnets = {"type": TYPE, "properties": {**LB["properties"], "Subnets": ["s"]}}
    assert answer(api, "validate", {"template": hot({"lb": subnets})}) == (
        400, "HTTPBadRequest",
        "Property error: resources.lb.properties: Property Subnets not implemented yet")


def _settled(api: httpx.Client, path: str, name: str) -> dict[str, Any]:
    stack: dict[str, Any] = wait_for(lambda: api.get(path).json()["stack"],
                                     lambda s: not s["stack_status"].endswith("IN_PROGRESS"),
                                     name)
    return stack


def test_create_runs_the_nested_stack_and_delete_removes_it(api: httpx.Client) -> None:
    template = hot({"lb": LB}, parameters={"LBTimeout": {"type": "string", "default": "30"}},
                   outputs={"dns": {"value": {"get_attr": ["lb", "DNSName"]}},
                            "zone": {"value": {"get_attr": ["lb", "CanonicalHostedZoneName"]}},
                            "ref": {"value": {"get_resource": "lb"}}})
    name = f"elb_{uuid.uuid4().hex[:10]}"
    resp = api.post("/stacks", json={"stack_name": name, "template": template,
                                     "environment": NO_CLOUD})
    assert resp.status_code == 201, resp.text
    path = f"/stacks/{name}/{resp.json()['stack']['id']}"
    try:
        stack = _settled(api, path, name)
        assert stack["stack_status"] == "CREATE_COMPLETE", stack["stack_status_reason"]
        outputs = {o["output_key"]: o.get("output_value") for o in stack["outputs"]}
        assert outputs == {"dns": None, "zone": "", "ref": "lb"}
        child_id = api.get(f"{path}/resources/lb").json()["resource"]["physical_resource_id"]
        child = api.get(f"/stacks/{child_id}").json()["stack"]
        # the parent's LBTimeout reached the child; it has no KeyName (the parent has none)
        assert child["parameters"]["LBTimeout"] == "30"
        assert "KeyName" not in child["parameters"]
        child_path = f"/stacks/{child['stack_name']}/{child_id}"
        members = {r["resource_name"]: r["resource_type"]
                   for r in api.get(f"{child_path}/resources").json()["resources"]}
        assert {"LB_instance", "WaitHandle", "WaitCondition", "CfnLBUser",
                "CfnLBAccessKey", "latency_watcher"} <= set(members)
        meta = api.get(f"{child_path}/resources/LB_instance/metadata").json()["metadata"]
        files = meta["AWS::CloudFormation::Init"]["config"]["files"]
        assert files["/etc/haproxy/haproxy.cfg"]["content"] == ""  # no Instances
    finally:
        assert api.delete(path).status_code == 204
    gone = _settled(api, path, name)
    assert gone["stack_status"] == "DELETE_COMPLETE", gone["stack_status_reason"]
    # the nested stack went with it (Heat still shows it by id, deleted; Kiln forgets it)
    after = api.get(f"/stacks/{child_id}")
    assert after.status_code == 404 or (
        after.json()["stack"]["stack_status"] == "DELETE_COMPLETE"), after.text


def test_create_without_nova_is_refused_as_heat_refuses_it(api: httpx.Client) -> None:
    """The nested stack's server needs Nova: the create is refused before anything is
    stored, naming the nested stack. (The alarm is mapped away only because the
    cloud-free peer Heat has no CloudWatch, which it would report first.)"""
    no_alarm = {"resource_registry": {"AWS::CloudWatch::Alarm": "OS::Heat::None"}}
    assert answer(api, "create", {"template": hot({"lb": LB}), "environment": no_alarm}) == (
        400, "StackValidationFailed",
        "ResourceTypeUnavailable: resources.lb<nested_stack>: HEAT-E99001 Service nova is "
        "not available for resource type AWS::EC2::Instance, reason: nova compute endpoint "
        "is not in service catalog.")


CUSTOM = """
AWSTemplateFormatVersion: "2010-09-09"
Parameters:
  KeyName: {Type: String}
  SecurityGroups: {Type: CommaDelimitedList, Default: ""}
Resources:
  LB_instance:
    Type: OS::Heat::None
    Metadata:
      AWS::CloudFormation::Init:
        config:
          files:
            /etc/haproxy/haproxy.cfg: {content: ""}
Outputs:
  PublicIp:
    Value: {"Fn::Join": [",", {Ref: SecurityGroups}]}
"""


@pytest.fixture(scope="module")
def custom_kiln(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KilnProcess]:
    work = tmp_path_factory.mktemp("elb")
    (work / "lb.yaml").write_text(CUSTOM)
    proc = start_kiln(work, options={"DEFAULT": {"loadbalancer_template": work / "lb.yaml"}})
    yield proc
    assert proc.stop() == 0, proc.logs()


@pytest.mark.skipif(bool(COMPARE_URL), reason="starts a kiln serve of its own")
def test_the_operator_replaces_the_template(custom_kiln: KilnProcess) -> None:
    template = hot({"lb": {"type": TYPE, "properties": {**LB["properties"],
                                                       "SecurityGroups": ["a", "b"]}}},
                   outputs={"dns": {"value": {"get_attr": ["lb", "DNSName"]}}})
    with httpx.Client(base_url=custom_kiln.endpoint("demo"), timeout=60) as api:
        name = f"elb_{uuid.uuid4().hex[:10]}"
        resp = api.post("/stacks", json={"stack_name": name, "template": template})
        assert resp.status_code == 201, resp.text
        path = f"/stacks/{name}/{resp.json()['stack']['id']}"
        stack = _settled(api, path, name)
        assert stack["stack_status"] == "CREATE_COMPLETE", stack["stack_status_reason"]
        # the operator's template ran: its output, from the groups passed to it
        assert stack["outputs"][0]["output_value"] == "a,b"
        # SecurityGroups is updated in place: the nested stack gets the new groups
        template["resources"]["lb"]["properties"]["SecurityGroups"] = ["c"]
        assert api.put(path, json={"template": template}).status_code == 202
        stack = wait_for(lambda: api.get(path).json()["stack"],
                         lambda s: s["stack_status"] in ("UPDATE_COMPLETE", "UPDATE_FAILED"),
                         name)
        assert stack["stack_status"] == "UPDATE_COMPLETE", stack["stack_status_reason"]
        assert stack["outputs"][0]["output_value"] == "c"
        assert api.delete(path).status_code == 204
        assert _settled(api, path, name)["stack_status"] == "DELETE_COMPLETE"


def test_a_missing_operator_template_is_refused(tmp_path: Path) -> None:
    if COMPARE_URL:
        pytest.skip("starts a kiln serve of its own")
    proc = start_kiln(tmp_path, options={"DEFAULT": {
        "loadbalancer_template": tmp_path / "absent.yaml"}})
    try:
        with httpx.Client(base_url=proc.endpoint("demo"), timeout=60) as api:
            assert answer(api, "create", {"template": hot({"lb": LB})}) == (
                400, "StackValidationFailed", "Custom LoadBalancer template can not be found")
    finally:
        assert proc.stop() == 0, proc.logs()
