"""OS::Neutron::Subnet: an IP range on a network."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kiln.errors import StackValidationFailed
from kiln.resources.base import Attribute, Property
from kiln.resources.common.cloud import HIDDEN
from kiln.resources.live_state import LiveState
from kiln.resources.openstack._neutron import (
    NeutronResource,
    ref_property,
    tags_property,
    value_specs_property,
)
from kiln.resources.translation import Replace
from kiln.template.constraints import AllowedValues, CustomConstraint, Range

_IPV6_MODES = AllowedValues(allowed=("dhcpv6-stateful", "dhcpv6-stateless", "slaac"))


def _ip(description: str) -> Property:
    return Property("string", description, required=True,
                    constraints=[CustomConstraint(name="ip_addr")])


class Subnet(NeutronResource):
    """A subnet: addresses (a CIDR, or a prefix from a subnet pool) for a network's
    ports, with optional gateway, DHCP, DNS servers and static routes."""

    type_name = "OS::Neutron::Subnet"
    entity = "subnet"
    collection = "subnets"
    translation_rules = (Replace(("network",), "network_id"),)
    api_names = {"network": ("network_id", "network"),
                 "subnetpool": ("subnetpool_id", "subnetpool"),
                 "segment": ("segment_id", "segment")}
    live_properties = ("name", "network", "cidr", "ip_version", "dns_nameservers",
                       "gateway_ip", "enable_dhcp", "allocation_pools", "host_routes",
                       "ipv6_ra_mode", "ipv6_address_mode", "subnetpool", "segment", "tags",
                       "value_specs")
    properties_schema = {
        "network_id": Property("string", "Deprecated: use network.", support_status=HIDDEN,
                               constraints=[CustomConstraint(name="neutron.network")]),
        "network": ref_property("network", "The network (name or ID) the subnet is on.",
                                required=True),
        "subnetpool": ref_property("subnetpool", "Subnet pool (name or ID) to take the "
                                                 "CIDR from, instead of cidr."),
        "prefixlen": Property("integer", "Prefix length of a CIDR taken from subnetpool.",
                              constraints=[Range(min=0)]),
        "cidr": Property("string", "The subnet's CIDR (or use subnetpool).",
                         constraints=[CustomConstraint(name="net_cidr")]),
        "value_specs": value_specs_property(),
        "name": Property("string", "Name of the subnet.", update_allowed=True),
        "ip_version": Property("integer", "IP version.", default=4,
                               constraints=[AllowedValues(allowed=(4, 6))]),
        "dns_nameservers": Property("list", "DNS servers handed out by DHCP.", default=[],
                                    update_allowed=True),
        "gateway_ip": Property("string", "Gateway address; empty for no gateway, "
                                         "unset for the first address.",
                               update_allowed=True),
        "enable_dhcp": Property("boolean", "Whether DHCP serves the subnet.", default=True,
                                update_allowed=True),
        "allocation_pools": Property(
            "list", "Address ranges handed out to ports.", update_allowed=True,
            schema=Property("map", schema={"start": _ip("First address of the range."),
                                           "end": _ip("Last address of the range.")})),
        "tenant_id": Property("string", "Project to create the subnet in (admin only)."),
        "host_routes": Property(
            "list", "Static routes handed out by DHCP.", update_allowed=True,
            schema=Property("map", schema={
                "destination": Property("string", "Destination CIDR.", required=True,
                                        constraints=[CustomConstraint(name="net_cidr")]),
                "nexthop": _ip("Next hop address.")})),
        "ipv6_ra_mode": Property("string", "IPv6 router advertisement mode.",
                                 constraints=[_IPV6_MODES]),
        "ipv6_address_mode": Property("string", "IPv6 address mode.",
                                      constraints=[_IPV6_MODES]),
        "segment": ref_property("segment", "Segment (name or ID) of a routed network.",
                                update_allowed=True),
        "tags": tags_property(),
    }
    attributes_schema = {
        "name": Attribute("The subnet's name.", "string"),
        "network_id": Attribute("The network the subnet is on.", "string"),
        "tenant_id": Attribute("The project owning the subnet.", "string"),
        "allocation_pools": Attribute("Address ranges handed out to ports.", "list"),
        "gateway_ip": Attribute("The gateway address.", "string"),
        "host_routes": Attribute("Static routes handed out by DHCP.", "list"),
        "ip_version": Attribute("IP version.", "string"),
        "cidr": Attribute("The subnet's CIDR.", "string"),
        "dns_nameservers": Attribute("DNS servers handed out by DHCP.", "list"),
        "enable_dhcp": Attribute("Whether DHCP serves the subnet.", "string"),
    }

    def validate(self) -> None:
        super().validate()
        props = self.properties
        if not props.get("cidr") and not props.get("subnetpool"):
            raise StackValidationFailed(
                "At least one of the following properties must be specified: "
                "subnetpool, cidr.")
        if props.get("cidr") and props.get("subnetpool"):
            raise StackValidationFailed(
                'Cannot define the following properties at the same time: '
                'subnetpool, cidr.')
        if props.get("prefixlen") is not None and props.get("cidr"):
            raise StackValidationFailed(
                'Cannot define the following properties at the same time: '
                'prefixlen, cidr.')

    async def shape_live(self, obj: Mapping[str, Any], expected: Mapping[str, Any],
                         state: LiveState) -> None:
        if state.expected.get("gateway_ip") == "":
            state.expected["gateway_ip"] = None  # "no gateway", as Neutron shows it

    async def body_from(self, values: Any, *, create: bool) -> dict[str, Any]:
        body = await super().body_from(values, create=create)
        if body.get("gateway_ip") == "":
            body["gateway_ip"] = None  # Heat's spelling of "no gateway"
        if not create:
            # Heat's update: a removed gateway_ip is sent as null (no gateway), removed
            # allocation_pools as [] (none), rather than leaving the old values
            if "gateway_ip" in values and values["gateway_ip"] is None:
                body["gateway_ip"] = None
            if "allocation_pools" in values and values["allocation_pools"] is None:
                body["allocation_pools"] = []
        return body
