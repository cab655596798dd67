"""Neutron objects of optional API extensions that Heat lists without checking for them:
metering labels and rules, networking-sfc's flow classifiers and port pairs, and the
NSX network gateways.

Heat declares no required extension for these five types, so they are offered whenever
Neutron is in the catalog; on a cloud without the extension, Neutron itself refuses the
create (404, "The resource could not be found."), and the resource fails with that
answer. Kiln does the same rather than hiding them, so a listing and a create match
Heat's on the same cloud.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kiln.errors import StackValidationFailed
from kiln.resources.base import Attribute, Properties, Property, SupportStatus, Token
from kiln.resources.common.cloud import HIDDEN
from kiln.resources.openstack._neutron import NeutronResource, ref_property
from kiln.resources.translation import Replace
from kiln.template.constraints import AllowedValues, CustomConstraint, Length, Range


class MeteringLabel(NeutronResource):
    """A metering label: traffic matching its rules is counted for billing."""

    type_name = "OS::Neutron::MeteringLabel"
    support_status = SupportStatus(version="2014.1")
    entity = "metering_label"
    collection = "metering/metering-labels"
    names_itself = True
    properties_schema = {
        "name": Property("string", "Name of the metering label."),
        "description": Property("string", "Description of the metering label."),
        "shared": Property("boolean", "Whether every project sees the label.",
                           default=False),
    }
    attributes_schema = {
        "name": Attribute("Name of the metering label.", "string"),
        "description": Attribute("Description of the metering label.", "string"),
        "shared": Attribute("Whether the label is shared.", "string"),
    }


class MeteringRule(NeutronResource):
    """A rule of a metering label: which remote prefix, in which direction."""

    type_name = "OS::Neutron::MeteringRule"
    support_status = SupportStatus(version="2014.1")
    entity = "metering_label_rule"
    collection = "metering/metering-label-rules"
    names_itself = False
    properties_schema = {
        "metering_label_id": Property("string", "ID of the label the rule belongs to.",
                                      required=True),
        "remote_ip_prefix": Property("string", "The remote IP prefix (CIDR) counted.",
                                     required=True),
        "direction": Property("string", "Whether ingress or egress traffic is counted.",
                              default="ingress",
                              constraints=[AllowedValues(allowed=("ingress", "egress"))]),
        "excluded": Property("boolean", "Whether the prefix is left out of the label's "
                             "counters (to leave one address out of a range).",
                             default=False),
    }
    attributes_schema = {
        "direction": Attribute("The direction counted.", "string"),
        "excluded": Attribute("Whether the prefix is excluded.", "string"),
        "metering_label_id": Attribute("The label's ID.", "string"),
        "remote_ip_prefix": Attribute("The remote IP prefix.", "string"),
    }


def _port_ref(description: str, *, required: bool = False) -> Property:
    return ref_property("port", description, required=required)


def _port_range(description: str) -> Property:
    return Property("integer", description, constraints=[Range(min=1, max=65535)])


class FlowClassifier(NeutronResource):
    """networking-sfc's flow classifier: the traffic a port chain steers."""

    type_name = "OS::Neutron::FlowClassifier"
    support_status = SupportStatus(status="UNSUPPORTED", version="8.0.0")
    entity = "flow_classifier"
    collection = "sfc/flow_classifiers"
    api_names = {"logical_source_port": ("logical_source_port", "port"),
                 "logical_destination_port": ("logical_destination_port", "port")}
    properties_schema = {
        "name": Property("string", "Name of the flow classifier.", update_allowed=True),
        "description": Property("string", "Description of the flow classifier.",
                                update_allowed=True),
        "protocol": Property("string", "IP protocol matched.",
                             constraints=[AllowedValues(allowed=("tcp", "udp", "icmp"))]),
        "ethertype": Property("string", "L2 ethertype matched.", default="IPv4",
                              constraints=[AllowedValues(allowed=("IPv4", "IPv6"))]),
        "source_ip_prefix": Property("string", "Source prefix matched.",
                                     constraints=[CustomConstraint(name="net_cidr")]),
        "destination_ip_prefix": Property("string", "Destination prefix matched.",
                                          constraints=[CustomConstraint(name="net_cidr")]),
        "source_port_range_min": _port_range("Lowest source port matched."),
        "source_port_range_max": _port_range("Highest source port matched."),
        "destination_port_range_min": _port_range("Lowest destination port matched."),
        "destination_port_range_max": _port_range("Highest destination port matched."),
        "logical_source_port": _port_ref("Neutron port the traffic leaves (name or ID)."),
        "logical_destination_port": _port_ref("Neutron port the traffic enters (name or "
                                              "ID)."),
        "l7_parameters": Property("map", "L7 parameters (none are supported yet).",
                                  support_status=SupportStatus(status="UNSUPPORTED")),
    }


class PortPair(NeutronResource):
    """networking-sfc's port pair: one service function's ingress and egress ports."""

    type_name = "OS::Neutron::PortPair"
    support_status = SupportStatus(status="UNSUPPORTED", version="7.0.0")
    entity = "port_pair"
    collection = "sfc/port_pairs"
    api_names = {"ingress": ("ingress", "port"), "egress": ("egress", "port")}
    properties_schema = {
        "name": Property("string", "Name of the port pair.", update_allowed=True),
        "description": Property("string", "Description of the port pair.",
                                update_allowed=True),
        "ingress": _port_ref("The ingress port (name or ID).", required=True),
        "egress": _port_ref("The egress port (name or ID).", required=True),
        "service_function_parameters": Property(
            "map", "Service function parameters (only correlation None is supported).",
            default={"correlation": None}),
    }


def _network_ref(description: str, *, required: bool = False) -> Property:
    return Property("string", description, required=required,
                    constraints=[CustomConstraint(name="neutron.network")])


class NetworkGateway(NeutronResource):
    """An NSX network gateway joining networks to an L2 segment outside the cloud.

    Connections are made with the gateway's ``connect_network`` call after it exists and
    undone before it is deleted; a change of devices makes a new gateway in place, as
    Heat does (the physical ID changes, the resource does not)."""

    type_name = "OS::Neutron::NetworkGateway"
    support_status = SupportStatus(version="2014.1")
    entity = "network_gateway"
    collection = "network-gateways"
    not_sent = frozenset({"value_specs", "tags", "connections"})
    translation_rules = (Replace(("connections", "network"), "network_id"),)
    properties_schema = {
        "name": Property("string", "Name of the gateway.", update_allowed=True),
        "devices": Property(
            "list", "The gateway's devices.", required=True, update_allowed=True,
            constraints=[Length(min=1)],
            schema=Property("map", schema={
                "id": Property("string", "The device's ID.", required=True),
                "interface_name": Property("string", "The device's interface.",
                                           required=True),
            })),
        "connections": Property(
            "list", "The networks connected through the gateway.", default=[],
            update_allowed=True,
            schema=Property("map", schema={
                "network_id": Property("string", "Deprecated: use network.",
                                       support_status=HIDDEN,
                                       constraints=[CustomConstraint(name="neutron.network")]),
                "network": _network_ref("The internal network connected.", required=True),
                "segmentation_type": Property(
                    "string", "L2 segmentation on the external side.", default="flat",
                    constraints=[AllowedValues(allowed=("flat", "vlan"))]),
                "segmentation_id": Property(
                    "integer", "The external segment's ID (needed with vlan).",
                    constraints=[Range(min=0, max=4094)]),
            })),
    }
    attributes_schema = {
        "default": Attribute("Whether the gateway is the default one.", "string"),
    }

    def validate(self) -> None:
        super().validate()
        for connection in self.properties.get("connections") or []:
            kind = connection.get("segmentation_type")
            segment = connection.get("segmentation_id")
            if kind == "vlan" and segment is None:
                raise StackValidationFailed(
                    "segmentation_id must be specified for using vlan")
            if kind == "flat" and segment:
                raise StackValidationFailed(
                    "segmentation_id cannot be specified except 0 for using flat")

    async def _connection_body(self, connection: Mapping[str, Any]) -> dict[str, Any]:
        body = {"network_id": await self.find_id("network", str(connection["network"])),
                "segmentation_type": connection.get("segmentation_type", "flat")}
        if connection.get("segmentation_id") is not None:
            body["segmentation_id"] = connection["segmentation_id"]
        return body

    async def _connect(self, connections: list[Mapping[str, Any]]) -> None:
        for connection in connections:
            await self.api("PUT", f"{self.path}/connect_network",
                           await self._connection_body(connection))

    async def _disconnect(self, connections: list[Mapping[str, Any]]) -> None:
        for connection in connections:
            try:
                body = await self._connection_body(connection)
            except Exception:  # noqa: BLE001 - a network gone since has nothing to undo
                continue
            await self.api("PUT", f"{self.path}/disconnect_network", body,
                           ok_missing=True)

    async def after_create(self, obj: Mapping[str, Any]) -> None:
        await self._connect(list(self.properties.get("connections") or []))

    async def handle_delete(self) -> Token:
        if self.resource_id is not None:
            await self._disconnect(list(self.properties.get("connections") or []))
        return await super().handle_delete()

    async def update_extra(self, diff: dict[str, Any], new_properties: Properties) -> None:
        if "devices" in diff:
            old_connections = list(self.properties.get("connections") or [])
            await self._disconnect(old_connections)
            await self.api("DELETE", self.path, ok_missing=True)
            body = await self.body_from(dict(new_properties), create=True)
            answer = await self.api("POST", self.collection_path(), {self.entity: body})
            self.resource_id = str(answer[self.entity]["id"])
            self.remember(answer[self.entity])
            await self._connect(list(new_properties.get("connections") or []))
            diff.clear()
            return
        if "connections" in diff:
            await self._disconnect(list(self.properties.get("connections") or []))
            await self._connect(list(diff.pop("connections") or []))
