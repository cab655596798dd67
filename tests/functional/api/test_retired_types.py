"""Types of retired services (LBaaS v1 and v2, Sahara, Senlin, Monasca, Designate's
Domain/Record, Magnum's Bay, Aodh's CombinationAlarm, Vitrage) and Neutron's
RouterGateway: Heat 27 hides them from its type list but runs the templates that name
them, each retired one as a placeholder that creates nothing and answers every attribute
with nothing. Through a real ``kiln serve`` on the wire (httpx); KILN_API_COMPARE_URL
runs the same against a real Heat 27.0.1, whose answers these are."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import httpx
import pytest

from kiln.resources.openstack.retired import RETIRED
from tests.functional.api.heat_target import wait_for
from tests.functional.api.test_validate_parity import answer, hot

OLD = hot({
    "pool": {"type": "OS::Neutron::Pool",
             "properties": {"protocol": "HTTP", "lb_method": "ROUND_ROBIN",
                            "subnet": "gone", "vip": {"protocol_port": 80}}},
    "member": {"type": "OS::Neutron::PoolMember",
               "properties": {"pool_id": {"get_resource": "pool"}, "address": "10.0.0.5",
                              "protocol_port": 80}},
    "lb": {"type": "OS::Neutron::LBaaS::LoadBalancer",
           "properties": {"vip_subnet": "gone"}},
    "cluster": {"type": "OS::Sahara::Cluster", "properties": {"name": "c", "bogus": 1}},
    "senlin": {"type": "OS::Senlin::Cluster", "properties": {"profile": "p"}},
}, outputs={"vip": {"value": {"get_attr": ["pool", "vip", "address"]}},
            "cluster": {"value": {"get_attr": ["cluster", "info"]}}})


@pytest.fixture(scope="module")
def api(heat_endpoint: str) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=heat_endpoint, timeout=60, follow_redirects=True) as client:
        yield client


def test_retired_types_validate_create_nothing_and_are_not_listed(api: httpx.Client) -> None:
    assert answer(api, "validate", {"template": OLD}) == (200, None, None)
    name = f"retired_{uuid.uuid4().hex[:10]}"
    resp = api.post("/stacks", json={"stack_name": name, "template": OLD})
    assert resp.status_code == 201, resp.text
    path = f"/stacks/{name}/{resp.json()['stack']['id']}"
    stack = wait_for(lambda: api.get(path).json()["stack"],
                     lambda s: not s["stack_status"].endswith("IN_PROGRESS"), name)
    try:
        assert stack["stack_status"] == "CREATE_COMPLETE", stack["stack_status_reason"]
        outputs = {o["output_key"]: o.get("output_value") for o in stack["outputs"]}
        assert outputs == {"vip": None, "cluster": None}
        resources = api.get(f"{path}/resources").json()["resources"]
        assert {r["resource_name"]: r["resource_status"] for r in resources} == dict.fromkeys(
            ("pool", "member", "lb", "cluster", "senlin"), "CREATE_COMPLETE")
    finally:
        api.delete(path)
    listed = set(api.get("/resource_types").json()["resource_types"])
    assert not listed & (set(RETIRED) | {"OS::Neutron::RouterGateway"})


def test_a_hidden_type_of_a_missing_service_says_the_service_is_missing(
        api: httpx.Client) -> None:
    template = hot({"model": {"type": "OS::Magnum::BayModel",
                              "properties": {"image": "fedora", "keypair": "k"}}})
    assert answer(api, "validate", {"template": template}) == (
        400, "ResourceTypeUnavailable",
        "HEAT-E99001 Service magnum is not available for resource type "
        "OS::Magnum::BayModel, reason: magnum container-infra endpoint is not in service "
        "catalog.")
