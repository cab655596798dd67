"""Neutron resource types through kiln serve and heatclient, checked in the real Neutron."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
import yaml

from tests.cloud.helpers import delete_and_wait, find, outputs
from tests.support.clients import wait_for_stack_status

NETWORK_TEMPLATE = """
heat_template_version: 2018-08-31
parameters:
  cidr: {type: string, default: 10.31.0.0/24}
  net_name: {type: string, default: kiln-net}
resources:
  net:
    type: OS::Neutron::Net
    properties: {name: {get_param: net_name}, tags: [kiln, test]}
  subnet:
    type: OS::Neutron::Subnet
    properties:
      network: {get_resource: net}
      cidr: {get_param: cidr}
      dns_nameservers: [10.31.0.2]
      allocation_pools: [{start: 10.31.0.10, end: 10.31.0.99}]
  sg:
    type: OS::Neutron::SecurityGroup
    properties:
      rules:
        - {protocol: tcp, port_range_min: 22, port_range_max: 22}
        - {protocol: icmp, remote_ip_prefix: 10.0.0.0/8}
  port:
    type: OS::Neutron::Port
    properties:
      network: {get_resource: net}
      fixed_ips: [{subnet: {get_resource: subnet}, ip_address: 10.31.0.50}]
      security_groups: [{get_resource: sg}]
  router:
    type: OS::Neutron::Router
    properties:
      external_gateway_info: {network: public}
  iface:
    type: OS::Neutron::RouterInterface
    properties: {router: {get_resource: router}, subnet: {get_resource: subnet}}
  fip:
    type: OS::Neutron::FloatingIP
    depends_on: iface
    properties: {floating_network: public, port_id: {get_resource: port}}
outputs:
  port_ip: {value: {get_attr: [port, fixed_ips, 0, ip_address]}}
  fip: {value: {get_attr: [fip, floating_ip_address]}}
  net_name: {value: {get_attr: [net, name]}}
"""


def test_network_stack_is_created_updated_and_deleted_in_neutron(cloud_heat: Any,
                                                                   sdk: Any) -> None:
    name = f"net-{uuid.uuid4().hex[:8]}"
    net_name = f"kiln-{name}"
    cloud_heat.stacks.create(stack_name=name, template=NETWORK_TEMPLATE,
                             parameters={"net_name": net_name})
    stack = wait_for_stack_status(cloud_heat, name, timeout=120)
    assert stack.stack_status == "CREATE_COMPLETE", stack.stack_status_reason

    net = find(sdk.network.find_network, net_name)
    assert net is not None and sorted(net.tags) == ["kiln", "test"]
    subnets = list(sdk.network.subnets(network_id=net.id))
    assert [s.cidr for s in subnets] == ["10.31.0.0/24"]
    assert subnets[0].dns_nameservers == ["10.31.0.2"]
    ports = [p for p in sdk.network.ports(network_id=net.id)
             if p.fixed_ips and p.fixed_ips[0]["ip_address"] == "10.31.0.50"]
    assert len(ports) == 1
    out = outputs(stack)
    assert out["port_ip"] == "10.31.0.50"
    assert out["net_name"] == net_name
    fips = list(sdk.network.ips(port_id=ports[0].id))
    assert [f.floating_ip_address for f in fips] == [out["fip"]]
    group_id = ports[0].security_group_ids[0]
    rules = sdk.network.get_security_group(group_id).security_group_rules
    assert {(r["protocol"], r["port_range_min"]) for r in rules
            if r["direction"] == "ingress"} == {("tcp", 22), ("icmp", None)}

    # in-place update: the network's name and the rules change, the objects stay
    template = yaml.safe_load(NETWORK_TEMPLATE)
    template["resources"]["sg"]["properties"]["rules"] = [
        {"protocol": "tcp", "port_range_min": 80, "port_range_max": 80}]
    cloud_heat.stacks.update(name, template=template,
                             parameters={"net_name": net_name + "-2"})
    stack = wait_for_stack_status(cloud_heat, name, timeout=120)
    assert stack.stack_status == "UPDATE_COMPLETE", stack.stack_status_reason
    assert sdk.network.get_network(net.id).name == net_name + "-2"
    rules = sdk.network.get_security_group(group_id).security_group_rules
    assert {(r["protocol"], r["port_range_min"]) for r in rules
            if r["direction"] == "ingress"} == {("tcp", 80)}

    assert delete_and_wait(cloud_heat, stack.id) == "DELETE_COMPLETE"
    assert find(sdk.network.find_network, net.id) is None
    assert find(sdk.network.find_security_group, group_id) is None
    assert list(sdk.network.ips(port_id=ports[0].id)) == []


def test_a_missing_network_is_a_400_naming_the_property(cloud_heat: Any) -> None:
    """Heat 27's answer, recorded against the same cloud."""
    from heatclient import exc

    template = {"heat_template_version": "2018-08-31", "resources": {"port": {
        "type": "OS::Neutron::Port", "properties": {"network": "no-such-net"}}}}
    with pytest.raises(exc.HTTPBadRequest) as caught:
        cloud_heat.stacks.create(stack_name=f"bad-{uuid.uuid4().hex[:8]}",
                                 template=template)
    assert ("Property error: resources.port.properties.network: Error validating value "
            "'no-such-net': Unable to find network with name or id 'no-such-net'"
            ) in str(caught.value)


def test_an_object_deleted_behind_kilns_back_counts_as_deleted(cloud_heat: Any,
                                                                 sdk: Any) -> None:
    name = f"gone-{uuid.uuid4().hex[:8]}"
    template = {"heat_template_version": "2018-08-31",
                "resources": {"net": {"type": "OS::Neutron::Net"}}}
    cloud_heat.stacks.create(stack_name=name, template=template)
    stack = wait_for_stack_status(cloud_heat, name, timeout=60)
    assert stack.stack_status == "CREATE_COMPLETE", stack.stack_status_reason
    net_id = cloud_heat.resources.get(name, "net").physical_resource_id
    sdk.network.delete_network(net_id)
    cloud_heat.actions.check(name)
    stack = wait_for_stack_status(cloud_heat, name, timeout=60)
    assert stack.stack_status == "CHECK_FAILED"
    assert net_id in cloud_heat.resources.get(name, "net").resource_status_reason
    assert delete_and_wait(cloud_heat, stack.id) == "DELETE_COMPLETE"


def test_the_listing_shows_the_types_of_the_services_in_the_catalog(cloud_heat: Any) -> None:
    listed = cloud_heat.resource_types.list()
    names = {t.resource_type for t in listed}
    assert {"OS::Nova::Server", "OS::Neutron::Net", "OS::Cinder::Volume",
            "OS::Heat::None"} <= names
    assert not [n for n in names if n.startswith("OS::Octavia::")]   # no load-balancer
    schema = cloud_heat.resource_types.get("OS::Neutron::Subnet")
    assert schema["properties"]["network"]["required"] is True
    assert schema["properties"]["cidr"]["constraints"] == [
        {"custom_constraint": "net_cidr"}]
