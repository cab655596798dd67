"""Heat's implicit dependencies of the network and server types, through the real engine.

The plugins are the real OS::Neutron/OS::Nova classes with their cloud calls replaced
(this suite has no cloud; tests/cloud/test_seed_template.py runs the same template
against real Neutron and Nova): what is checked is the graph the engine builds from the
plugins' rules, as ``required_by`` shows it and as the create order follows it.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from kiln.engine.service import EngineService, RequestContext
from kiln.resources.base import Resource, Token
from kiln.resources.openstack.neutron_floatingip import FloatingIP, FloatingIPAssociation
from kiln.resources.openstack.neutron_net import Net
from kiln.resources.openstack.neutron_port import Port
from kiln.resources.openstack.neutron_router import Router, RouterInterface
from kiln.resources.openstack.neutron_subnet import Subnet
from kiln.resources.openstack.nova_server import Server
from kiln.resources.registry import global_registry
from tests.unit.engine.support import create, hot

STARTED: list[str] = []


def _offline(cls: type[Resource]) -> type[Resource]:
    """*cls* with no cloud behind it: creates and deletes only record themselves."""

    async def handle_create(self: Resource) -> Token:
        STARTED.append(self.name)
        self.resource_id = f"{self.name}-id"
        return None

    async def nothing(self: Resource, *args: Any) -> Any:
        return None

    async def done(self: Resource, token: Token) -> bool:
        return True

    return type(cls.__name__, (cls,), {
        "client_name": "", "handle_create": handle_create, "handle_delete": nothing,
        "check_create_complete": done, "check_delete_complete": done,
        "validate_external": nothing})


@pytest.fixture
def offline_types() -> Iterator[None]:
    registry = global_registry()
    saved = {}
    for cls in (Net, Subnet, Port, Router, RouterInterface, FloatingIP,
                FloatingIPAssociation, Server):
        saved[cls.type_name] = registry._types.get(cls.type_name)
        registry.register(cls.type_name, _offline(cls))
    STARTED.clear()
    try:
        yield
    finally:
        for name, old in saved.items():
            registry._types[name] = old  # type: ignore[assignment]


#: the seed template of a Heat user, in one stack and without any depends_on
SEED = hot({
    "net": {"type": "OS::Neutron::Net"},
    "subnet": {"type": "OS::Neutron::Subnet",
               "properties": {"network": {"get_resource": "net"}, "cidr": "10.0.0.0/24"}},
    "router": {"type": "OS::Neutron::Router",
               "properties": {"external_gateway_info": {"network": "public"}}},
    "iface": {"type": "OS::Neutron::RouterInterface",
              "properties": {"router": {"get_resource": "router"},
                             "subnet": {"get_resource": "subnet"}}},
    "port": {"type": "OS::Neutron::Port",
             "properties": {"network": {"get_resource": "net"},
                            "fixed_ips": [{"subnet": {"get_resource": "subnet"}}]}},
    "bare_port": {"type": "OS::Neutron::Port",
                  "properties": {"network": {"get_resource": "net"}}},
    "server": {"type": "OS::Nova::Server",
               "properties": {"flavor": "m1.tiny", "image": "cirros",
                              "networks": [{"port": {"get_resource": "port"}}]}},
    "fip": {"type": "OS::Neutron::FloatingIP",
            "properties": {"floating_network": "public",
                           "port_id": {"get_resource": "port"}}},
    "fip2": {"type": "OS::Neutron::FloatingIP",
             "properties": {"floating_network": "public"}},
    "assoc": {"type": "OS::Neutron::FloatingIPAssociation",
              "properties": {"floatingip_id": {"get_resource": "fip2"},
                             "port_id": {"get_resource": "bare_port"}}},
})


async def test_seed_template_without_depends_on_waits_as_heat_does(
        service: EngineService, ctx: RequestContext, offline_types: None) -> None:
    stack = await create(service, ctx, "seed", SEED)
    assert stack["stack_status"] == "CREATE_COMPLETE", stack["stack_status_reason"]
    required_by = {r["resource_name"]: sorted(r["required_by"])
                   for r in await service.list_stack_resources(ctx, stack["stack_identity"])}
    # a port waits for the subnets of its network (with or without fixed_ips); a
    # server with networks for the subnets; a floating IP for the router whose gateway
    # is its network and for the interface of its port's subnet; an association for
    # the interface reaching its port's subnet
    assert required_by["subnet"] == ["bare_port", "iface", "port", "server"]
    assert required_by["iface"] == ["assoc", "fip"]
    assert required_by["router"] == ["fip", "fip2", "iface"]
    for before, after in (("subnet", "port"), ("subnet", "bare_port"),
                          ("iface", "fip"), ("router", "fip2"), ("iface", "assoc")):
        assert STARTED.index(before) < STARTED.index(after)


async def test_unrelated_networks_add_nothing(
        service: EngineService, ctx: RequestContext, offline_types: None) -> None:
    """A port on another network, a server on a named network no subnet of the stack is
    on, a floating IP from another external network: no implicit edge."""
    template = hot({
        "net": {"type": "OS::Neutron::Net"},
        "subnet": {"type": "OS::Neutron::Subnet",
                   "properties": {"network": {"get_resource": "net"},
                                  "cidr": "10.0.0.0/24"}},
        "router": {"type": "OS::Neutron::Router",
                   "properties": {"external_gateway_info": {"network": "public"}}},
        "port": {"type": "OS::Neutron::Port", "properties": {"network": "elsewhere"}},
        "server": {"type": "OS::Nova::Server",
                   "properties": {"flavor": "m1.tiny", "image": "cirros",
                                  "networks": [{"network": "elsewhere"}]}},
        "fip": {"type": "OS::Neutron::FloatingIP",
                "properties": {"floating_network": "other-public"}},
    })
    stack = await create(service, ctx, "apart", template)
    assert stack["stack_status"] == "CREATE_COMPLETE", stack["stack_status_reason"]
    required_by = {r["resource_name"]: r["required_by"]
                   for r in await service.list_stack_resources(ctx, stack["stack_identity"])}
    assert required_by["subnet"] == [] and required_by["router"] == []


async def test_an_implicit_edge_closing_a_cycle_is_reported(
        service: EngineService, ctx: RequestContext, offline_types: None) -> None:
    """A subnet that refers to a port of its own network: the port's implicit wait for
    the subnet closes a cycle, refused at create naming both (as Heat refuses it)."""
    from kiln.errors import KilnError

    template = hot({
        "net": {"type": "OS::Neutron::Net"},
        "port": {"type": "OS::Neutron::Port",
                 "properties": {"network": {"get_resource": "net"}}},
        "subnet": {"type": "OS::Neutron::Subnet",
                   "properties": {"network": {"get_resource": "net"},
                                  "cidr": "10.0.0.0/24",
                                  "name": {"get_attr": ["port", "name"]}}},
    })
    with pytest.raises(KilnError) as info:
        await service.create_stack(ctx, "loop", template, {}, {}, {})
    assert info.value.http_status == 400
    assert "Circular Dependency Found" in info.value.message
    assert "port" in info.value.message and "subnet" in info.value.message


async def test_a_resource_added_by_an_update_waits_too(
        service: EngineService, ctx: RequestContext, offline_types: None) -> None:
    stack = await create(service, ctx, "grow", SEED)
    ident = stack["stack_identity"]
    grown = {**SEED, "resources": {**SEED["resources"], "late_port": {
        "type": "OS::Neutron::Port", "properties": {"network": {"get_resource": "net"}}}}}
    await service.update_stack(ctx, ident, grown, {}, {}, {})
    await service.wait_for_stack(stack["id"])
    shown = await service.show_stack(ctx, ident)
    assert shown["stack_status"] == "UPDATE_COMPLETE", shown["stack_status_reason"]
    required_by = {r["resource_name"]: sorted(r["required_by"])
                   for r in await service.list_stack_resources(ctx, ident)}
    assert "late_port" in required_by["subnet"]


#: the mission's first template (tests/cloud/templates/mission.yaml): deprecated
#: property names, and the servers in a group beside the subnet of their network
MISSION = hot({
    "private_net": {"type": "OS::Neutron::Net"},
    "private_subnet": {"type": "OS::Neutron::Subnet",
                       "properties": {"network_id": {"get_resource": "private_net"},
                                      "cidr": "182.168.1.1/24"}},
    "router": {"type": "OS::Neutron::Router",
               "properties": {"external_gateway_info": {"network": "public"}}},
    "router_interface": {"type": "OS::Neutron::RouterInterface",
                         "properties": {"router_id": {"get_resource": "router"},
                                        "subnet_id": {"get_resource": "private_subnet"}}},
    "servers": {"type": "OS::Heat::ResourceGroup", "properties": {"count": 2, "resource_def": {
        "type": "OS::Nova::Server",
        "properties": {"image": "cirros", "flavor": "m1.tiny",
                       "networks": [{"network": {"get_resource": "private_net"}}]}}}},
})


async def test_deprecated_names_and_a_server_group_wait_for_the_subnet(
        service: EngineService, ctx: RequestContext, offline_types: None) -> None:
    """Translated before validation, ``network_id``/``router_id``/``subnet_id`` count
    as the required names; the group waits for the subnet its members' network has,
    so no server boots on a network without a subnet."""
    stack = await create(service, ctx, "mission", MISSION)
    assert stack["stack_status"] == "CREATE_COMPLETE", stack["stack_status_reason"]
    required_by = {r["resource_name"]: sorted(r["required_by"])
                   for r in await service.list_stack_resources(ctx, stack["stack_identity"])}
    assert required_by["private_subnet"] == ["router_interface", "servers"]
    assert STARTED.index("private_subnet") < STARTED.index("0")
