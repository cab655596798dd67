"""The AWS::EC2 types against real Neutron, Nova and Cinder (templates/ec2.yaml): a VPC
whose subnet is routed through a route table with the external gateway, a security
group, an instance on a network interface with an elastic IP and two volumes; then a
resize and new ingress rules in place; then everything gone."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

from tests.cloud.helpers import delete_and_wait, find, outputs
from tests.support.clients import wait_for_stack_status

TEMPLATE = (Path(__file__).parent / "templates" / "ec2.yaml").read_text()


def test_ec2_vpc_instance_eip_volumes(cloud_heat: Any, sdk: Any) -> None:
    name = f"ec2-{uuid.uuid4().hex[:8]}"
    cloud_heat.stacks.create(stack_name=name, template=TEMPLATE)
    stack = wait_for_stack_status(cloud_heat, name, timeout=400)
    assert stack.stack_status == "CREATE_COMPLETE", stack.stack_status_reason
    ids = {r.resource_name: r.physical_resource_id
           for r in cloud_heat.resources.list(stack.id)}
    out = outputs(stack)

    # the VPC: a network and a router named alike; the subnet routed by the table,
    # whose router has the external network as gateway
    net = sdk.network.get_network(ids["vpc"])
    vpc_router = next(sdk.network.routers(name=net.name))
    table = sdk.network.get_router(ids["table"])
    external = next(sdk.network.networks(is_router_external=True))
    assert table.external_gateway_info["network_id"] == external.id
    table_ports = list(sdk.network.ports(device_id=table.id,
                                         device_owner="network:router_interface"))
    assert [p.fixed_ips[0]["subnet_id"] for p in table_ports] == [ids["subnet"]]
    assert not list(sdk.network.ports(device_id=vpc_router.id,
                                      device_owner="network:router_interface"))

    # the instance on the interface, with its tags, the group and the elastic IP
    server = sdk.compute.get_server(ids["instance"])
    assert server.status == "ACTIVE" and server.metadata == {"role": "web"}
    port = sdk.network.get_port(ids["nic"])
    assert port.device_id == server.id
    assert port.security_group_ids == [ids["group"]]
    assert out["NicIp"] == out["PrivateIp"] == port.fixed_ips[0]["ip_address"]
    fip = sdk.network.get_ip(cloud_heat.resources.get(stack.id, "eip")
                             .physical_resource_id)
    assert (fip.floating_ip_address, fip.port_id) == (out["PublicIp"], port.id)
    assert out["Zone"] == "nova"
    rules = [(r.protocol, r.port_range_min, r.remote_ip_prefix)
             for r in sdk.network.security_group_rules(security_group_id=ids["group"],
                                                       direction="ingress")]
    assert rules == [("tcp", 22, "0.0.0.0/0")]

    # the spare instance: a port made for it on the subnet, in the group, with its EIP
    spare_ports = list(sdk.network.ports(device_id=ids["spare"]))
    assert [(p.fixed_ips[0]["subnet_id"], p.security_group_ids) for p in spare_ports] == \
        [(ids["subnet"], [ids["group"]])]
    spare_fip = sdk.network.get_ip(cloud_heat.resources.get(stack.id, "spare_ip")
                                   .physical_resource_id)
    assert spare_fip.port_id == spare_ports[0].id

    # both volumes attached to it, the tagged one with its metadata
    for volume in ("data", "logs"):
        found = sdk.block_storage.get_volume(ids[volume])
        assert found.status == "in-use"
        assert [a["server_id"] for a in found.attachments] == [server.id]
    assert sdk.block_storage.get_volume(ids["data"]).metadata == {"purpose": "data"}

    # a new InstanceType resizes the same instance; new ingress rules in place
    cloud_heat.stacks.update(stack.id, template=TEMPLATE, parameters={
        "InstanceType": "m1.small", "SshCidr": "10.0.0.0/8"})
    stack = wait_for_stack_status(cloud_heat, stack.id, timeout=400)
    assert stack.stack_status == "UPDATE_COMPLETE", stack.stack_status_reason
    assert cloud_heat.resources.get(stack.id, "instance").physical_resource_id == server.id
    resized = sdk.compute.get_server(server.id)
    assert (resized.status, resized.flavor.original_name) == ("ACTIVE", "m1.small")
    assert cloud_heat.resources.get(stack.id, "group").physical_resource_id == ids["group"]
    rules = [(r.protocol, r.port_range_min, r.remote_ip_prefix)
             for r in sdk.network.security_group_rules(security_group_id=ids["group"],
                                                       direction="ingress")]
    assert rules == [("tcp", 22, "10.0.0.0/8")]

    assert delete_and_wait(cloud_heat, stack.id, timeout=400) == "DELETE_COMPLETE"
    assert find(sdk.compute.find_server, server.id) is None
    assert find(sdk.network.find_network, ids["vpc"]) is None
    assert find(sdk.network.find_router, ids["table"]) is None
    assert find(sdk.network.find_router, vpc_router.id) is None
    assert find(sdk.network.find_security_group, ids["group"]) is None
    assert find(sdk.network.find_ip, fip.id) is None
    assert find(sdk.network.find_ip, spare_fip.id) is None
    assert find(sdk.network.find_port, spare_ports[0].id) is None
    for volume in ("data", "logs"):
        assert find(sdk.block_storage.find_volume, ids[volume]) is None
