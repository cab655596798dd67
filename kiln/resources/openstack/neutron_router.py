"""OS::Neutron::Router, OS::Neutron::RouterInterface and the hidden
OS::Neutron::RouterGateway."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from kiln.errors import StackValidationFailed
from kiln.resources.base import (
    Attribute,
    Peers,
    Properties,
    Property,
    SupportStatus,
    Token,
)
from kiln.resources.common.cloud import HIDDEN, OpenStackResource
from kiln.resources.live_state import LiveState
from kiln.resources.openstack import _implicit
from kiln.resources.openstack._neutron import (
    NeutronResource,
    find_id,
    ref_property,
    tags_property,
    value_specs_property,
)
from kiln.resources.translation import Add, Replace
from kiln.template.constraints import CustomConstraint
from kiln.template.definitions import ResourceDefinition


class Router(NeutronResource):
    """A router: routes between the subnets attached to it and, with
    ``external_gateway_info``, to an external network (SNAT, floating IPs)."""

    type_name = "OS::Neutron::Router"
    entity = "router"
    collection = "routers"
    translation_rules = (Add(("l3_agent_ids",), "l3_agent_id"),)
    has_status = True
    live_properties = ("name", "admin_state_up", "distributed", "ha",
                       "availability_zone_hints", "tags", "value_specs")
    not_sent = frozenset({"value_specs", "tags", "l3_agent_id", "l3_agent_ids",
                          "external_gateway_info"})
    properties_schema = {
        "name": Property("string", "Name of the router.", update_allowed=True),
        "external_gateway_info": Property(
            "map", "The external network the router routes to.", update_allowed=True,
            schema={
                "network": Property("string", "External network (name or ID).",
                                    required=True, update_allowed=True),
                "enable_snat": Property("boolean", "Whether to SNAT outgoing traffic.",
                                        update_allowed=True),
                "external_fixed_ips": Property(
                    "list", "Addresses of the gateway on the external network.",
                    update_allowed=True,
                    schema=Property("map", schema={
                        "ip_address": Property("string", "The address.",
                                               constraints=[CustomConstraint(
                                                   name="ip_addr")]),
                        "subnet": ref_property("subnet", "Subnet (name or ID)."),
                    })),
            }),
        "value_specs": value_specs_property(),
        "admin_state_up": Property("boolean", "Whether the router is up.", default=True,
                                   update_allowed=True),
        "l3_agent_id": Property("string", "Deprecated: use l3_agent_ids.",
                                update_allowed=True, support_status=HIDDEN),
        "l3_agent_ids": Property("list", "L3 agents that host the router.",
                                 update_allowed=True, schema=Property("string")),
        "distributed": Property("boolean", "Whether the router is distributed (DVR)."),
        "ha": Property("boolean", "Whether the router is highly available."),
        "availability_zone_hints": Property("list", "Availability zones for the router.",
                                            update_allowed=True),
        "tags": tags_property(),
        "tenant_id": Property("string", "Project to create the router in (admin only)."),
    }
    attributes_schema = {
        "status": Attribute("The router's status.", "string"),
        "external_gateway_info": Attribute("The router's gateway.", "map"),
        "name": Attribute("The router's name.", "string"),
        "admin_state_up": Attribute("Whether the router is up.", "string"),
        "tenant_id": Attribute("The project owning the router.", "string"),
    }

    def implicit_requirements(self, peers: Peers) -> Iterable[str]:
        """The stack's subnets on the gateway's network: the gateway takes an address
        there (Heat's rule)."""
        gateway = peers.value(self, "external_gateway_info")
        if isinstance(gateway, dict):
            return _implicit.subnets_of(peers, gateway.get("network"))
        return ()

    async def body_from(self, values: Mapping[str, Any], *,
                        create: bool) -> dict[str, Any]:
        body = await super().body_from(values, create=create)
        if "external_gateway_info" in values:
            body["external_gateway_info"] = await self._gateway(
                values.get("external_gateway_info"))
        return body

    async def shape_live(self, obj: Mapping[str, Any], expected: Mapping[str, Any],
                         state: LiveState) -> None:
        """The external gateway's network (as its ID) and SNAT, as the template set
        them."""
        gateway = expected.get("external_gateway_info")
        if not gateway:
            return
        live = obj.get("external_gateway_info") or {}
        want: dict[str, Any] = {"network": await self.id_or_name("network",
                                                                 str(gateway["network"]))}
        have: dict[str, Any] = {"network": live.get("network_id")}
        if gateway.get("enable_snat") is not None:
            want["enable_snat"] = gateway["enable_snat"]
            have["enable_snat"] = live.get("enable_snat")
        state.expected["external_gateway_info"] = want
        state.actual["external_gateway_info"] = have if live else None

    async def _gateway(self, gateway: Mapping[str, Any] | None) -> dict[str, Any]:
        if not gateway:
            return {}
        out: dict[str, Any] = {"network_id": await self.find_id("network",
                                                                gateway["network"])}
        if gateway.get("enable_snat") is not None:
            out["enable_snat"] = gateway["enable_snat"]
        fixed = gateway.get("external_fixed_ips")
        if fixed is not None:
            items = []
            for item in fixed:
                entry: dict[str, Any] = {}
                if item.get("subnet"):
                    entry["subnet_id"] = await self.find_id("subnet", item["subnet"])
                if item.get("ip_address"):
                    entry["ip_address"] = item["ip_address"]
                items.append(entry)
            out["external_fixed_ips"] = items
        return out

    def _agents(self, values: Mapping[str, Any]) -> list[str] | None:
        ids = values.get("l3_agent_ids")  # l3_agent_id is translated into it
        return list(ids) if ids else None

    async def after_create(self, obj: Mapping[str, Any]) -> None:
        agents = self._agents(self.properties)
        if agents:
            await self._replace_agents(agents)

    async def update_extra(self, diff: dict[str, Any], new_properties: Properties) -> None:
        if "l3_agent_ids" in diff:
            agents = self._agents(diff)
            diff.pop("l3_agent_ids", None)
            await self._replace_agents(agents or [])

    async def _replace_agents(self, agents: list[str]) -> None:
        hosting = await self.api("GET", f"{self.path}/l3-agents")
        for agent in (hosting or {}).get("agents", []):
            await self.api("DELETE", f"/agents/{agent['id']}/l3-routers/{self.resource_id}",
                           ok_missing=True)
        for agent_id in agents:
            await self.api("POST", f"/agents/{agent_id}/l3-routers",
                           {"router_id": self.resource_id})

    async def handle_delete(self) -> Token:
        if self.resource_id is None:
            return None
        # the gateway port goes first, as Heat clears the gateway before deleting
        await self.api("PUT", self.path, {"router": {"external_gateway_info": {}}},
                       ok_missing=True)
        return await super().handle_delete()


class RouterInterface(OpenStackResource):
    """Attaches a subnet (or a port) to a router. Its ID is
    ``<router id>:subnet_id=<subnet id>`` (or ``port_id=``), as in Heat."""

    type_name = "OS::Neutron::RouterInterface"
    translation_rules = (Replace(("port",), "port_id"), Replace(("router",), "router_id"),
                         Replace(("subnet",), "subnet_id"))
    client_name = "neutron"
    service_type = "network"
    properties_schema = {
        "router": ref_property("router", "The router (name or ID).", required=True),
        "router_id": Property("string", "Deprecated: use router.", support_status=HIDDEN,
                              constraints=[CustomConstraint(name="neutron.router")]),
        "subnet_id": Property("string", "Deprecated: use subnet.", support_status=HIDDEN,
                              constraints=[CustomConstraint(name="neutron.subnet")]),
        "subnet": ref_property("subnet", "The subnet to attach (name or ID)."),
        "port_id": Property("string", "Deprecated: use port.", support_status=HIDDEN,
                            constraints=[CustomConstraint(name="neutron.port")]),
        "port": ref_property("port", "The port to attach (name or ID)."),
    }

    def validate(self) -> None:
        super().validate()
        subnet = self.properties.get("subnet")
        port = self.properties.get("port")
        if subnet is not None and port is not None:
            raise StackValidationFailed(
                "Cannot define the following properties at the same time: subnet, port.")
        if subnet is None and port is None:
            raise StackValidationFailed(
                "At least one of the following properties must be specified: subnet, port.")

    async def _id(self, kind: str, value: str) -> str:
        return await find_id(self, kind, value)

    async def handle_create(self) -> Token:
        props = self.properties
        router = await self._id("router", props["router"])
        subnet = props.get("subnet")
        if subnet:
            key, value = "subnet_id", await self._id("subnet", subnet)
        else:
            key, value = "port_id", await self._id("port", props["port"])
        await self.api("PUT", f"/routers/{router}/add_router_interface", {key: value})
        self.resource_id = f"{router}:{key}={value}"
        return None

    async def handle_delete(self) -> Token:
        if not self.resource_id:
            return None
        tokens = self.resource_id.replace("=", ":").split(":")
        if len(tokens) == 2:
            tokens.insert(1, "subnet_id")
        router, key, value = tokens
        await self.api("PUT", f"/routers/{router}/remove_router_interface", {key: value},
                       ok_missing=True)
        return None

    async def handle_update(self, new_definition: ResourceDefinition,
                            new_properties: Properties, prop_diff: Mapping[str, Any]) -> Token:
        return None


class RouterGateway(OpenStackResource):
    """Sets a router's external gateway. Heat hides it (a Router's
    ``external_gateway_info`` does the same) but still runs the templates that name it,
    which older templates do: its ID is ``<router id>:<network id>``, every property
    change replaces it, and deleting it clears the router's gateway."""

    type_name = "OS::Neutron::RouterGateway"
    support_status = SupportStatus(
        status="HIDDEN", version="5.0.0",
        message="Use the `external_gateway_info` property in the router resource to set "
                "up the gateway.",
        previous_status=SupportStatus(status="DEPRECATED", version="2014.1"))
    translation_rules = (Replace(("network",), "network_id"),)
    client_name = "neutron"
    service_type = "network"
    properties_schema = {
        "router_id": Property("string", "ID of the router.", required=True,
                              constraints=[CustomConstraint(name="neutron.router")]),
        "network_id": Property("string", "Deprecated: use network.", support_status=HIDDEN,
                               constraints=[CustomConstraint(name="neutron.network")]),
        "network": Property("string", "External network for the gateway.",
                            constraints=[CustomConstraint(name="neutron.network")]),
    }

    def implicit_requirements(self, peers: Peers) -> Iterable[str]:
        """The stack's interfaces on the same router and its subnets on the gateway's
        network (the gateway takes an address there), as Heat's plugin waits for them."""
        router = peers.value(self, "router_id")
        if router is not None:
            for iface in peers.of_type(_implicit.ROUTER_INTERFACE):
                if _implicit.either(peers, iface, "router", "router_id") == router:
                    yield iface.name
        yield from _implicit.subnets_of(peers, _implicit.either(peers, self, "network",
                                                                "network_id"))

    async def handle_create(self) -> Token:
        router = str(self.properties["router_id"])
        network = self.properties.get("network")
        network_id = await find_id(self, "network", str(network)) if network else None
        await self.api("PUT", f"/routers/{router}",
                       {"router": {"external_gateway_info": {"network_id": network_id}}})
        self.resource_id = f"{router}:{network_id}"
        return None

    async def handle_delete(self) -> Token:
        if not self.resource_id:
            return None
        router = self.resource_id.split(":", 1)[0]
        await self.api("PUT", f"/routers/{router}", {"router": {"external_gateway_info": {}}},
                       ok_missing=True)
        return None
