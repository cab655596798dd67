"""OS::Neutron::FloatingIP and OS::Neutron::FloatingIPAssociation."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from kiln.resources.base import Attribute, Peers, Properties, Property, Token
from kiln.resources.common.cloud import HIDDEN, OpenStackResource
from kiln.resources.openstack import _implicit
from kiln.resources.openstack._neutron import (
    NeutronResource,
    find_id,
    ref_property,
)
from kiln.resources.translation import Replace
from kiln.template.constraints import CustomConstraint
from kiln.template.definitions import ResourceDefinition


def _ip(description: str, *, update_allowed: bool = False) -> Property:
    return Property("string", description, update_allowed=update_allowed,
                    constraints=[CustomConstraint(name="ip_addr")])


class FloatingIP(NeutronResource):
    """An address on an external network, optionally forwarded to a port."""

    type_name = "OS::Neutron::FloatingIP"
    entity = "floatingip"
    collection = "floatingips"
    translation_rules = (Replace(("floating_network",), "floating_network_id"),)
    names_itself = False
    api_names = {"floating_network": ("floating_network_id", "network"),
                 "floating_subnet": ("subnet_id", "subnet"),
                 "port_id": ("port_id", "port")}
    live_properties = ("floating_network", "port_id", "fixed_ip_address",
                       "floating_ip_address", "dns_name", "dns_domain", "value_specs")
    properties_schema = {
        "floating_network_id": Property("string", "Deprecated: use floating_network.",
                                        support_status=HIDDEN,
                                        constraints=[CustomConstraint(
                                            name="neutron.network")]),
        "floating_network": ref_property("network", "External network (name or ID) to "
                                                    "take the address from.",
                                         required=True),
        "floating_subnet": ref_property("subnet", "Subnet of the external network."),
        "value_specs": Property("map", "Extra attributes sent to Neutron as they are.",
                                default={}),
        "port_id": ref_property("port", "Port (name or ID) the address forwards to.",
                                update_allowed=True),
        "fixed_ip_address": _ip("Which of the port's addresses to forward to.",
                                update_allowed=True),
        "floating_ip_address": _ip("The external address to take."),
        "dns_name": Property("string", "DNS name of the address.", update_allowed=True,
                             constraints=[CustomConstraint(name="rel_dns_name")]),
        "dns_domain": Property("string", "DNS domain of the address.", update_allowed=True,
                               constraints=[CustomConstraint(name="dns_domain")]),
    }
    attributes_schema = {
        "router_id": Attribute("The router forwarding the address.", "string"),
        "tenant_id": Attribute("The project owning the address.", "string"),
        "floating_network_id": Attribute("The external network.", "string"),
        "fixed_ip_address": Attribute("The port address it forwards to.", "string"),
        "floating_ip_address": Attribute("The external address.", "string"),
        "port_id": Attribute("The port it forwards to.", "string"),
    }

    def implicit_requirements(self, peers: Peers) -> Iterable[str]:
        """Heat's rules: the routers whose gateway is the floating network, and the
        router interfaces of the subnet of the port it forwards to."""
        network = _implicit.either(peers, self, "floating_network", "floating_network_id")
        yield from _implicit.routers_with_gateway(peers, network)
        yield from _implicit.interfaces_reaching(peers, self)

    async def handle_update(self, new_definition: ResourceDefinition,
                            new_properties: Properties, prop_diff: Mapping[str, Any]) -> Token:
        body: dict[str, Any] = {}
        if "port_id" in prop_diff or "fixed_ip_address" in prop_diff:
            port = new_properties.get("port_id")
            body["port_id"] = await self.find_id("port", port) if port else None
            body["fixed_ip_address"] = new_properties.get("fixed_ip_address")
        for key in ("dns_name", "dns_domain"):
            if key in prop_diff:
                body[key] = prop_diff[key]
        if body:
            answer = await self.api("PUT", self.path, {"floatingip": body})
            self.remember(answer["floatingip"])
        return None


class FloatingIPAssociation(OpenStackResource):
    """Forwards an existing floating IP to a port."""

    type_name = "OS::Neutron::FloatingIPAssociation"
    client_name = "neutron"
    service_type = "network"
    properties_schema = {
        "floatingip_id": Property("string", "The floating IP's ID.", required=True,
                                  update_allowed=True),
        "port_id": ref_property("port", "Port (name or ID) to forward to.", required=True,
                                update_allowed=True),
        "fixed_ip_address": _ip("Which of the port's addresses to forward to.",
                                update_allowed=True),
    }

    def implicit_requirements(self, peers: Peers) -> Iterable[str]:
        """The router interfaces of the subnet of its port (Heat's rule)."""
        return _implicit.interfaces_reaching(peers, self)

    async def _associate(self, fip: str, port: str, fixed: str | None) -> None:
        body: dict[str, Any] = {"port_id": await find_id(self, "port", port)}
        if fixed:
            body["fixed_ip_address"] = fixed
        await self.api("PUT", f"/floatingips/{fip}", {"floatingip": body})

    async def handle_create(self) -> Token:
        props = self.properties
        await self._associate(props["floatingip_id"], props["port_id"],
                              props.get("fixed_ip_address"))
        self.resource_id = f"{props['floatingip_id']}:{props['port_id']}"
        return None

    async def handle_update(self, new_definition: ResourceDefinition,
                            new_properties: Properties, prop_diff: Mapping[str, Any]) -> Token:
        old_fip = self.properties["floatingip_id"]
        if "floatingip_id" in prop_diff:
            await self.api("PUT", f"/floatingips/{old_fip}",
                           {"floatingip": {"port_id": None}}, ok_missing=True)
        fip = new_properties["floatingip_id"]
        await self._associate(fip, new_properties["port_id"],
                              new_properties.get("fixed_ip_address"))
        self.resource_id = f"{fip}:{new_properties['port_id']}"
        return None

    async def handle_delete(self) -> Token:
        if not self.resource_id:
            return None
        fip = self.properties["floatingip_id"]
        await self.api("PUT", f"/floatingips/{fip}", {"floatingip": {"port_id": None}},
                       ok_missing=True)
        return None
