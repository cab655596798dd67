"""OS::Neutron::Net and OS::Neutron::ProviderNet: a Neutron network."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kiln.resources.base import Attribute, Properties, Property, SupportStatus
from kiln.resources.openstack._neutron import (
    NeutronResource,
    ref_property,
    tags_property,
    value_specs_property,
)
from kiln.template.constraints import AllowedValues, CustomConstraint

_NET_ATTRIBUTES = {
    "status": Attribute("The network's status.", "string"),
    "name": Attribute("The network's name.", "string"),
    "subnets": Attribute("IDs of the network's subnets.", "list"),
    "admin_state_up": Attribute("Whether the network is administratively up.", "string"),
    "tenant_id": Attribute("The project owning the network.", "string"),
    "port_security_enabled": Attribute("Whether port security is on by default.",
                                       "boolean"),
    "mtu": Attribute("Largest packet (bytes) the network carries.", "integer"),
    "qos_policy_id": Attribute("The QoS policy attached to the network.", "string"),
    "l2_adjacency": Attribute("True when the whole network is one L2 domain.", "boolean"),
    "segments": Attribute("The network's segments.", "list"),
}


class Net(NeutronResource):
    """A tenant network: an isolated layer-2 domain, private unless shared."""

    type_name = "OS::Neutron::Net"
    entity = "network"
    collection = "networks"
    has_status = True
    api_names = {"qos_policy": ("qos_policy_id", "qos_policy")}
    not_sent = frozenset({"value_specs", "tags", "dhcp_agent_ids"})
    live_properties = ("name", "admin_state_up", "shared", "port_security_enabled",
                       "qos_policy", "dns_domain", "availability_zone_hints", "tags",
                       "value_specs")
    properties_schema = {
        "name": Property("string", "Name of the network (default: the physical name).",
                         update_allowed=True),
        "value_specs": value_specs_property(),
        "admin_state_up": Property("boolean", "Whether the network is up.", default=True,
                                   update_allowed=True),
        "tenant_id": Property("string", "Project to create the network in (admin only)."),
        "shared": Property("boolean", "Whether other projects may use the network.",
                           default=False, update_allowed=True),
        "dhcp_agent_ids": Property("list", "DHCP agents that serve the network.",
                                   update_allowed=True),
        "port_security_enabled": Property("boolean", "Default port security of its ports.",
                                          update_allowed=True,
                                          support_status=SupportStatus(version="5.0.0")),
        "qos_policy": ref_property("qos_policy", "QoS policy (name or ID) for the network.",
                                   update_allowed=True),
        "dns_domain": Property("string", "DNS domain of the network.", update_allowed=True,
                               constraints=[CustomConstraint(name="dns_domain")],
                               support_status=SupportStatus(version="7.0.0")),
        "availability_zone_hints": Property("list", "Availability zones for the network.",
                                            support_status=SupportStatus(version="19.0.0")),
        "tags": tags_property(),
    }
    attributes_schema = _NET_ATTRIBUTES

    async def after_create(self, obj: Mapping[str, Any]) -> None:
        agents = self.properties.get("dhcp_agent_ids")
        if agents:
            await self.replace_dhcp_agents(list(agents))

    async def update_extra(self, diff: dict[str, Any], new_properties: Properties) -> None:
        if "dhcp_agent_ids" in diff:
            await self.replace_dhcp_agents(list(diff.pop("dhcp_agent_ids") or []))

    async def replace_dhcp_agents(self, wanted: list[str]) -> None:
        """Schedule the network on exactly the *wanted* DHCP agents."""
        hosting = await self.api("GET", f"{self.path}/dhcp-agents")
        current = {a["id"] for a in (hosting or {}).get("agents", [])}
        for agent in set(wanted) - current:
            await self.api("POST", f"/agents/{agent}/dhcp-networks",
                           {"network_id": self.resource_id})
        for agent in current - set(wanted):
            await self.api("DELETE", f"/agents/{agent}/dhcp-networks/{self.resource_id}",
                           ok_missing=True)


class ProviderNet(NeutronResource):
    """A network mapped onto the physical network (admin only): a flat or VLAN network,
    possibly external for floating IPs."""

    type_name = "OS::Neutron::ProviderNet"
    support_status = SupportStatus(version="2014.1")
    entity = "network"
    collection = "networks"
    has_status = True
    api_names = {"network_type": ("provider:network_type", None),
                 "physical_network": ("provider:physical_network", None),
                 "segmentation_id": ("provider:segmentation_id", None),
                 "router_external": ("router:external", None)}
    live_properties = ("name", "network_type", "physical_network", "segmentation_id",
                       "admin_state_up", "shared", "port_security_enabled",
                       "router_external", "dns_domain", "tags")
    properties_schema = {
        "name": Property("string", "Name of the network.", update_allowed=True),
        "network_type": Property("string", "How the network is carried.", required=True,
                                 update_allowed=True,
                                 constraints=[AllowedValues(
                                     allowed=("local", "vlan", "vxlan", "gre", "geneve",
                                              "flat"))]),
        "physical_network": Property("string", "Physical network it is mapped onto.",
                                     update_allowed=True),
        "segmentation_id": Property("string", "VLAN or tunnel ID.", update_allowed=True),
        "admin_state_up": Property("boolean", "Whether the network is up.", default=True,
                                   update_allowed=True),
        "shared": Property("boolean", "Whether other projects may use the network.",
                           default=True, update_allowed=True),
        "port_security_enabled": Property("boolean", "Default port security of its ports.",
                                          update_allowed=True),
        "router_external": Property("boolean", "Whether it is an external network.",
                                    default=False, update_allowed=True),
        "tags": tags_property(),
        "dns_domain": Property("string", "DNS domain of the network.", update_allowed=True,
                               constraints=[CustomConstraint(name="dns_domain")]),
        "availability_zone_hints": Property("list", "Availability zones for the network.",
                                            update_allowed=True),
        "tenant_id": Property("string", "Project to create the network in."),
    }
    attributes_schema = {
        "status": _NET_ATTRIBUTES["status"],
        "subnets": _NET_ATTRIBUTES["subnets"],
        "segments": _NET_ATTRIBUTES["segments"],
    }
