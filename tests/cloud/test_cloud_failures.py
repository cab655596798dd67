"""A cloud's refusal fails the resource with the cloud's own message, worded as Heat's
status reason words it (the service's Python client's exception name and text), and
nothing made before is lost: the stack's delete removes every object from Nova,
Neutron and Cinder.

The expected reasons are the real Heat 27.0.1's on the same cloud (run side by side
with ``../shared/peer-cloud/heat-start.sh``'s configuration against the test cloud),
request IDs aside:

- a server Nova puts in ERROR (a flavor no host has room for): ``ResourceInError:
  resources.srv: Went to status ERROR due to "Message: No valid host was found. , Code:
  500"``;
- a port asking for a fixed IP another port holds: ``IpAddressAlreadyAllocatedClient:
  resources.p2: IP address 10.78.0.50 already allocated in subnet <id>`` and a line
  ``Neutron server returns request_ids: ['req-...']``;
- a volume over the project's gigabytes quota: ``OverLimit: resources.v2:
  VolumeSizeExceedsAvailableQuota: Requested volume or snapshot exceeds allowed
  gigabytes quota. Requested 1G, quota is 1G and 1G has been consumed. (HTTP 413)
  (Request-ID: req-...)``.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from tests.cloud.helpers import delete_and_wait, find
from tests.cloud.identity import CloudUser, keystone_options, new_user, remove_user
from tests.support.clients import wait_for_stack_status
from tests.support.cloud import Cloud
from tests.support.cloud.catalog import IMAGE
from tests.support.server import KilnProcess, start_kiln

REQ = r"req-[0-9a-f-]{36}"
#: beyond the fake virt driver's disk (600,000 GiB), within every Nova quota
NO_HOST_FLAVOR = "kiln-no-valid-host"


@pytest.fixture(scope="module")
def user(cloud: Cloud, sdk: Any) -> Iterator[CloudUser]:
    """A project of its own with a Cinder quota of 1 GiB."""
    made = new_user(cloud, sdk, "fail")
    sdk.block_storage.update_quota_set(made.project_id, gigabytes=1)
    try:
        yield made
    finally:
        remove_user(sdk, made)


@pytest.fixture(scope="module")
def heat(
    cloud: Cloud, sdk: Any, user: CloudUser, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Any]:
    proc: KilnProcess = start_kiln(
        tmp_path_factory.mktemp("failures-kiln"), options=keystone_options(cloud, sdk)
    )
    try:
        yield user.heat(proc.url)
    finally:
        proc.stop()


def _failed(heat: Any, template: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """Create *template*; it must fail. Its id and its resources by name."""
    stack_id = heat.stacks.create(stack_name=f"fail-{uuid.uuid4().hex[:8]}", template=template)[
        "stack"
    ]["id"]
    stack = wait_for_stack_status(heat, stack_id, timeout=240)
    assert stack.stack_status == "CREATE_FAILED", stack.stack_status
    return stack_id, {r.resource_name: r for r in heat.resources.list(stack_id)}


def _net(cidr: str) -> dict[str, Any]:
    return {
        "net": {"type": "OS::Neutron::Net"},
        "sub": {
            "type": "OS::Neutron::Subnet",
            "properties": {"network": {"get_resource": "net"}, "cidr": cidr},
        },
    }


def test_server_nova_puts_in_error(heat: Any, sdk: Any, user: CloudUser) -> None:
    if find(sdk.compute.find_flavor, NO_HOST_FLAVOR) is None:
        sdk.compute.create_flavor(
            name=NO_HOST_FLAVOR, ram=512, vcpus=1, disk=1_000_000, is_public=True
        )
    template = {
        "heat_template_version": "2018-08-31",
        "resources": {
            **_net("10.77.0.0/24"),
            "srv": {
                "type": "OS::Nova::Server",
                "depends_on": "sub",
                "properties": {
                    "image": IMAGE,
                    "flavor": NO_HOST_FLAVOR,
                    "networks": [{"network": {"get_resource": "net"}}],
                },
            },
        },
    }
    stack_id, res = _failed(heat, template)
    assert res["srv"].resource_status_reason == (
        'ResourceInError: resources.srv: Went to status ERROR due to "Message: No valid '
        'host was found. , Code: 500"'
    )
    server_id = res["srv"].physical_resource_id
    assert server_id and sdk.compute.get_server(server_id).status == "ERROR"
    assert {res[n].resource_status for n in ("net", "sub")} == {"CREATE_COMPLETE"}

    assert delete_and_wait(heat, stack_id, timeout=240) == "DELETE_COMPLETE"
    assert next(iter(sdk.compute.servers(uuid=server_id, all_projects=True)), None) is None
    assert not list(sdk.network.networks(project_id=user.project_id))
    assert not list(sdk.network.ports(project_id=user.project_id))


def test_port_whose_fixed_ip_is_taken(heat: Any, sdk: Any, user: CloudUser) -> None:
    fixed = [{"subnet": {"get_resource": "sub"}, "ip_address": "10.78.0.50"}]
    template = {
        "heat_template_version": "2018-08-31",
        "resources": {
            **_net("10.78.0.0/24"),
            "p1": {
                "type": "OS::Neutron::Port",
                "properties": {"network": {"get_resource": "net"}, "fixed_ips": fixed},
            },
            "p2": {
                "type": "OS::Neutron::Port",
                "depends_on": "p1",
                "properties": {"network": {"get_resource": "net"}, "fixed_ips": fixed},
            },
        },
    }
    stack_id, res = _failed(heat, template)
    subnet = res["sub"].physical_resource_id
    assert re.fullmatch(
        rf"IpAddressAlreadyAllocatedClient: resources\.p2: IP address 10\.78\.0\.50 already "
        rf"allocated in subnet {subnet}\nNeutron server returns request_ids: \['{REQ}'\]",
        res["p2"].resource_status_reason,
    ), res["p2"].resource_status_reason
    port = sdk.network.get_port(res["p1"].physical_resource_id)
    assert port.fixed_ips == [{"subnet_id": subnet, "ip_address": "10.78.0.50"}]

    assert delete_and_wait(heat, stack_id, timeout=240) == "DELETE_COMPLETE"
    assert not list(sdk.network.ports(project_id=user.project_id))
    assert not list(sdk.network.networks(project_id=user.project_id))


def test_volume_over_quota(heat: Any, sdk: Any, user: CloudUser) -> None:
    template = {
        "heat_template_version": "2018-08-31",
        "resources": {
            "v1": {"type": "OS::Cinder::Volume", "properties": {"size": 1}},
            "v2": {"type": "OS::Cinder::Volume", "depends_on": "v1", "properties": {"size": 1}},
        },
    }
    stack_id, res = _failed(heat, template)
    assert re.fullmatch(
        r"OverLimit: resources\.v2: VolumeSizeExceedsAvailableQuota: Requested volume or "
        r"snapshot exceeds allowed gigabytes quota\. Requested 1G, quota is 1G and 1G has "
        rf"been consumed\. \(HTTP 413\) \(Request-ID: {REQ}\)",
        res["v2"].resource_status_reason,
    ), res["v2"].resource_status_reason
    first = res["v1"].physical_resource_id
    assert sdk.block_storage.get_volume(first).status == "available"

    assert delete_and_wait(heat, stack_id, timeout=240) == "DELETE_COMPLETE"
    assert not list(sdk.block_storage.volumes(all_projects=True, project_id=user.project_id))
