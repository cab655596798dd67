"""The seed template of a Heat user (tests/cloud/templates/seed.yaml, docs/resources.md's worked
example): created, scaled from one server to three, resized, and deleted, through
kiln serve and heatclient, checked in the real Nova and Neutron."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

from tests.cloud.helpers import delete_and_wait, outputs
from tests.support.clients import wait_for_stack_status

TEMPLATES = Path(__file__).parent / "templates"


def test_seed_template_create_scale_resize_delete(cloud_heat: Any, sdk: Any) -> None:
    name = f"seed-{uuid.uuid4().hex[:8]}"
    files = {"server.yaml": (TEMPLATES / "server.yaml").read_text()}
    template = (TEMPLATES / "seed.yaml").read_text()
    cloud_heat.stacks.create(stack_name=name, template=template, files=files)
    stack = wait_for_stack_status(cloud_heat, name, timeout=300)
    assert stack.stack_status == "CREATE_COMPLETE", stack.stack_status_reason
    out = outputs(stack)
    assert len(out["floating_ips"]) == 1 and len(out["fixed_ips"]) == 1

    def members() -> list[Any]:
        ids = []
        group = cloud_heat.resources.get(stack.id, "servers").physical_resource_id
        for res in cloud_heat.resources.list(group, nested_depth=1):
            if res.resource_type == "OS::Nova::Server":
                ids.append(res.physical_resource_id)
        return [sdk.compute.get_server(i) for i in ids]

    first = members()
    assert [s.status for s in first] == ["ACTIVE"]
    assert first[0].flavor.original_name == "m1.tiny"
    fip = out["floating_ips"][0]
    port = next(sdk.network.ports(device_id=first[0].id))
    assert port.fixed_ips[0]["ip_address"] == out["fixed_ips"][0]
    assert [f.floating_ip_address for f in sdk.network.ips(port_id=port.id)] == [fip]

    # scale out: 1 -> 3 servers, the first one kept
    cloud_heat.stacks.update(stack.id, template=template, files=files,
                             parameters={"count": 3})
    stack = wait_for_stack_status(cloud_heat, stack.id, timeout=300)
    assert stack.stack_status == "UPDATE_COMPLETE", stack.stack_status_reason
    three = members()
    assert len(three) == 3 and first[0].id in {s.id for s in three}
    assert {s.status for s in three} == {"ACTIVE"}
    assert len(set(outputs(stack)["floating_ips"])) == 3

    # a flavor change resizes the same servers
    cloud_heat.stacks.update(stack.id, template=template, files=files,
                             parameters={"count": 3, "flavor": "m1.small"})
    stack = wait_for_stack_status(cloud_heat, stack.id, timeout=400)
    assert stack.stack_status == "UPDATE_COMPLETE", stack.stack_status_reason
    resized = members()
    assert {s.id for s in resized} == {s.id for s in three}
    assert {(s.status, s.flavor.original_name) for s in resized} == {("ACTIVE", "m1.small")}

    net_id = cloud_heat.resources.get(stack.id, "net").physical_resource_id
    router_id = cloud_heat.resources.get(stack.id, "router").physical_resource_id
    assert delete_and_wait(cloud_heat, stack.id, timeout=300) == "DELETE_COMPLETE"
    for server in resized:
        assert next(iter(sdk.compute.servers(uuid=server.id)), None) is None
    assert next(iter(sdk.network.networks(id=net_id)), None) is None
    assert next(iter(sdk.network.routers(id=router_id)), None) is None


def test_seed_in_one_stack_needs_no_depends_on(cloud_heat: Any, sdk: Any) -> None:
    """seed_one_stack.yaml says no depends_on: the implicit dependencies (port and
    server after the subnet, floating IP after the router's gateway and interface) make
    the create succeed, and the delete goes the other way round."""
    name = f"seed1-{uuid.uuid4().hex[:8]}"
    template = (TEMPLATES / "seed_one_stack.yaml").read_text()
    cloud_heat.stacks.create(stack_name=name, template=template)
    stack = wait_for_stack_status(cloud_heat, name, timeout=300)
    assert stack.stack_status == "CREATE_COMPLETE", stack.stack_status_reason
    required_by = {r.resource_name: sorted(r.required_by)
                   for r in cloud_heat.resources.list(stack.id)}
    assert {"port", "server"} <= set(required_by["subnet"])
    assert "fip" in required_by["iface"] and "fip" in required_by["router"]
    out = outputs(stack)
    port_id = cloud_heat.resources.get(stack.id, "port").physical_resource_id
    assert [f.floating_ip_address for f in sdk.network.ips(port_id=port_id)] == \
        [out["floating_ip"]]
    assert delete_and_wait(cloud_heat, stack.id, timeout=300) == "DELETE_COMPLETE"
    assert next(iter(sdk.network.ports(id=port_id)), None) is None
