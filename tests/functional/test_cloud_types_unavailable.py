"""Without a cloud, Kiln answers for OpenStack resource types as Heat 27 does when the
catalog lacks their service (the expected bodies were recorded from Heat 27 with a
catalog holding only Heat itself): they are not listed, and create, validate and
``resource_types/<type>`` are a 400 ResourceTypeUnavailable naming the service."""

from __future__ import annotations

from typing import Any

import httpx

from tests.support.server import HTTP_TIMEOUT, KilnProcess

SERVER = {"heat_template_version": "2018-08-31", "resources": {"s": {
    "type": "OS::Nova::Server", "properties": {"flavor": "f", "image": "i"}}}}
LB = {"heat_template_version": "2018-08-31", "resources": {"s": {
    "type": "OS::Octavia::LoadBalancer", "properties": {}}}}


def _error(response: httpx.Response) -> dict[str, Any]:
    assert response.status_code == 400, response.text
    error: dict[str, Any] = response.json()["error"]
    assert error["type"] == "ResourceTypeUnavailable"
    return error


def test_cloud_types_are_unavailable_without_a_cloud(kiln_server: KilnProcess) -> None:
    base = kiln_server.endpoint("demo")
    listed = httpx.get(f"{base}/resource_types", timeout=HTTP_TIMEOUT).json()["resource_types"]
    assert "OS::Heat::None" in listed
    assert not [t for t in listed if t.startswith(("OS::Nova::", "OS::Neutron::",
                                                   "OS::Cinder::", "OS::Octavia::"))]

    created = httpx.post(f"{base}/stacks", json={"stack_name": "s1", "template": SERVER},
                         timeout=HTTP_TIMEOUT)
    assert _error(created)["message"] == (
        "HEAT-E99001 Service nova is not available for resource type OS::Nova::Server, "
        "reason: nova compute endpoint is not in service catalog.")
    validated = httpx.post(f"{base}/validate", json={"template": LB}, timeout=HTTP_TIMEOUT)
    assert _error(validated)["message"] == (
        "HEAT-E99001 Service octavia is not available for resource type "
        "OS::Octavia::LoadBalancer, reason: octavia load-balancer endpoint is not in "
        "service catalog.")
    shown = httpx.get(f"{base}/resource_types/OS::Nova::Server", timeout=HTTP_TIMEOUT)
    assert _error(shown)["message"] == (
        "HEAT-E99001 Service nova is not available for resource type OS::Nova::Server, "
        "reason: Service endpoint not in service catalog.")
