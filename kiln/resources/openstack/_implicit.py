"""Heat's implicit dependencies of the network types, as rules over a stack's peers.

Neutron does things no property says: a port gets its address from *some* subnet of its
network, a router's gateway takes an address on the external network, a floating IP can
only forward to a port whose subnet a router connects to the external network. Heat's
plugins therefore wait for those resources (``add_dependencies``); these helpers are the
same rules, comparing property values as they resolve while the graph is built (a
resource not yet created is referred to by its name on both sides, so ``network:
{get_resource: net}`` matches wherever it is written).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from kiln.resources.base import Peers, Resource

SUBNET = "OS::Neutron::Subnet"
PORT = "OS::Neutron::Port"
ROUTER = "OS::Neutron::Router"
ROUTER_INTERFACE = "OS::Neutron::RouterInterface"


def either(peers: Peers, resource: Resource, *keys: str) -> Any:
    """The first of *keys* (a property and its deprecated twin) that has a value."""
    for key in keys:
        value = peers.value(resource, key)
        if value is not None:
            return value
    return None


def subnet_network(peers: Peers, subnet: Resource) -> Any:
    return either(peers, subnet, "network", "network_id")


def subnets_of(peers: Peers, network: Any) -> Iterator[str]:
    """The subnets of the stack on *network* (a port or a gateway there waits for all
    of them: which one gives the address is Neutron's choice)."""
    if network is None:
        return
    for subnet in peers.of_type(SUBNET):
        if subnet_network(peers, subnet) == network:
            yield subnet.name


def _port_on_subnet(peers: Peers, port: Resource, subnet: Any) -> bool:
    """Whether *port* has (or will have) an address on *subnet*: by its fixed_ips, or,
    without any, because the subnet is one of the stack's on the port's network."""
    fixed = peers.value(port, "fixed_ips")
    if fixed:
        return any(isinstance(item, dict) and
                   (item.get("subnet") or item.get("subnet_id")) == subnet
                   for item in fixed)
    network = either(peers, port, "network", "network_id")
    return network is not None and any(
        s.reference_id() == subnet and subnet_network(peers, s) == network
        for s in peers.of_type(SUBNET))


def interfaces_reaching(peers: Peers, resource: Resource) -> Iterator[str]:
    """The router interfaces attaching the subnet of a port *resource* already waits
    for: a floating IP forwarded to that port needs the route to exist first."""
    required = peers.requirements(resource.name)
    ports = [p for p in peers.of_type(PORT) if p.name in required]
    if not ports:
        return
    for iface in peers.of_type(ROUTER_INTERFACE):
        subnet = either(peers, iface, "subnet", "subnet_id")
        if subnet is not None and any(_port_on_subnet(peers, p, subnet) for p in ports):
            yield iface.name


def routers_with_gateway(peers: Peers, network: Any) -> Iterator[str]:
    """The routers whose external gateway is *network*."""
    if network is None:
        return
    for router in peers.of_type(ROUTER):
        gateway = peers.value(router, "external_gateway_info")
        if isinstance(gateway, dict) and gateway.get("network") == network:
            yield router.name
