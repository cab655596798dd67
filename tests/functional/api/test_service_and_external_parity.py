"""Two orders of checks Heat keeps, through a real ``kiln serve`` on the wire (httpx):
a resource's missing cloud service is reported before that resource's own property
errors (but after an earlier resource's), and an ``external_id`` naming a sibling is
read once, before any resource exists (a ``get_resource`` gives the sibling's name, a
``get_attr`` nothing, so that resource is created), while /validate refuses a HOT
``get_attr`` there.

The expected answers are Heat 27.0.1's to the same requests (KILN_API_COMPARE_URL runs
this module against a real Heat; its catalog, like Kiln's without a cloud, has no Nova
or Neutron)."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.functional.api.heat_target import wait_for
from tests.functional.api.test_validate_parity import NONE, RANDOM, answer, bad, cfn, hot

NOVA = ("HEAT-E99001 Service nova is not available for resource type OS::Nova::Server, "
        "reason: nova compute endpoint is not in service catalog.")
NEUTRON = ("HEAT-E99001 Service neutron is not available for resource type "
           "OS::Neutron::Net, reason: neutron network endpoint is not in service catalog.")
SERVER_WITH_TYPO = hot({"srv": {"type": "OS::Nova::Server", "properties": {
    "image": "cirros", "flavor": "m1.tiny", "bogus": 1}}})
BAD_SIBLING_FIRST = hot({"a": {"type": RANDOM, "properties": {"length": "abc"}},
                         "net": {"type": "OS::Neutron::Net"}})


@pytest.fixture(scope="module")
def api(heat_endpoint: str) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=heat_endpoint, timeout=60, follow_redirects=True) as client:
        yield client


def test_a_missing_service_comes_before_the_resource_s_own_errors(api: httpx.Client) -> None:
    missing = bad(400, "ResourceTypeUnavailable", NOVA)
    assert answer(api, "validate", {"template": SERVER_WITH_TYPO}) == missing
    assert answer(api, "create", {"template": SERVER_WITH_TYPO}) == missing


def test_an_earlier_resource_s_error_comes_first_at_create(api: httpx.Client) -> None:
    # /validate checks no values, so the service is all it finds
    assert answer(api, "validate", {"template": BAD_SIBLING_FIRST}) == bad(
        400, "ResourceTypeUnavailable", NEUTRON)
    assert answer(api, "create", {"template": BAD_SIBLING_FIRST}) == bad(
        400, "StackValidationFailed",
        "Property error: resources.a.properties.length: Value 'abc' is not an integer")


def created(api: httpx.Client, template: dict[str, Any]) -> dict[str, tuple[str, str]]:
    """Each resource's (status, physical id) once the stack's create has ended."""
    name = f"ext_{uuid.uuid4().hex[:10]}"
    resp = api.post("/stacks", json={"stack_name": name, "template": template})
    assert resp.status_code == 201, resp.text
    path = f"/stacks/{name}/{resp.json()['stack']['id']}"
    stack = wait_for(lambda: api.get(path).json()["stack"],
                     lambda s: not s["stack_status"].endswith("IN_PROGRESS"), name)
    assert stack["stack_status"] == "CREATE_COMPLETE", stack["stack_status_reason"]
    found = {r["resource_name"]: (r["resource_status"], r["physical_resource_id"])
             for r in api.get(f"{path}/resources").json()["resources"]}
    api.delete(path)
    return found


def test_an_external_id_naming_a_sibling_is_its_name(api: httpx.Client) -> None:
    template = hot({"a": {"type": RANDOM, "external_id": "abc"},
                    "b": {"type": NONE, "external_id": {"get_resource": "a"}}})
    assert answer(api, "validate", {"template": template}) == (200, None, None)
    assert created(api, template) == {"a": ("CHECK_COMPLETE", "abc"),
                                      "b": ("CHECK_COMPLETE", "a")}


def test_an_external_id_from_an_attribute_is_nothing_yet(api: httpx.Client) -> None:
    template = hot({"a": {"type": RANDOM},
                    "b": {"type": NONE, "external_id": {"get_attr": ["a", "value"]}}})
    assert answer(api, "validate", {"template": template}) == bad(
        400, "HTTPBadRequest",
        "resources.b.external_id.get_attr: The Referenced Attribute (a value) is incorrect.")
    found = created(api, template)
    assert found["b"][0] == "CREATE_COMPLETE"      # made, not adopted
    assert found["b"][1] != found["a"][1]


def test_a_cfn_attribute_as_external_id_passes_validate(api: httpx.Client) -> None:
    template = cfn({"a": {"Type": RANDOM},
                    "b": {"Type": NONE, "external_id": {"Fn::GetAtt": ["a", "value"]}}})
    assert answer(api, "validate", {"template": template}) == (200, None, None)
