"""OS::Neutron::Port: a port on a network (the address a server's NIC gets)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from kiln.resources.base import Attribute, Peers, Property, Token
from kiln.resources.common.cloud import HIDDEN
from kiln.resources.live_state import LiveState
from kiln.resources.openstack import _implicit
from kiln.resources.openstack._neutron import (
    NeutronResource,
    ref_property,
    tags_property,
    value_specs_property,
)
from kiln.resources.schema import SupportStatus
from kiln.resources.translation import Replace
from kiln.template.constraints import AllowedValues, CustomConstraint

VNIC_TYPES = ("normal", "direct", "macvtap", "direct-physical", "baremetal",
              "virtio-forwarder", "smart-nic")


class Port(NeutronResource):
    """A port: fixed IPs on a network, security groups and address pairs; a server
    attaches to it through its ``networks: [{port: ...}]``."""

    type_name = "OS::Neutron::Port"
    entity = "port"
    collection = "ports"
    translation_rules = (Replace(("network",), "network_id"),
                         Replace(("fixed_ips", "subnet"), "subnet_id"))
    has_status = True
    api_names = {"network": ("network_id", "network"),
                 "qos_policy": ("qos_policy_id", "qos_policy")}
    not_sent = frozenset({"value_specs", "tags", "no_fixed_ips", "replacement_policy",
                          "fixed_ips", "security_groups", "allowed_address_pairs"})
    live_properties = ("name", "network", "device_id", "device_owner", "security_groups",
                       "dns_name", "admin_state_up", "mac_address", "allowed_address_pairs",
                       "binding:vnic_type", "port_security_enabled", "qos_policy",
                       "propagate_uplink_status", "tags", "value_specs")
    properties_schema = {
        "name": Property("string", "Name of the port.", update_allowed=True),
        "network_id": Property("string", "Deprecated: use network.", support_status=HIDDEN,
                               constraints=[CustomConstraint(name="neutron.network")]),
        "network": ref_property("network", "The network (name or ID) of the port.",
                                required=True),
        "device_id": Property("string", "ID of the device using the port.", default="",
                              update_allowed=True),
        "device_owner": Property("string", "Kind of device using the port.", default="",
                                 update_allowed=True),
        "fixed_ips": Property(
            "list", "Addresses the port gets: a subnet, an address, or both.",
            update_allowed=True,
            schema=Property("map", schema={
                "subnet_id": Property("string", "Deprecated: use subnet.",
                                      support_status=HIDDEN,
                                      constraints=[CustomConstraint(name="neutron.subnet")]),
                "subnet": ref_property("subnet", "Subnet (name or ID) of the address."),
                "ip_address": Property("string", "The address.",
                                       constraints=[CustomConstraint(name="ip_addr")]),
            })),
        "security_groups": Property("list", "Security groups (names or IDs).",
                                    update_allowed=True),
        "replacement_policy": Property(
            "string", "Deprecated: whether an update may replace the port.",
            default="AUTO", update_allowed=True, support_status=HIDDEN,
            constraints=[AllowedValues(allowed=("REPLACE_ALWAYS", "AUTO"))]),
        "dns_name": Property("string", "DNS name of the port.", update_allowed=True,
                             constraints=[CustomConstraint(name="dns_name")],
                             support_status=SupportStatus(version="7.0.0")),
        "tags": tags_property(),
        "value_specs": value_specs_property(),
        "admin_state_up": Property("boolean", "Whether the port is up.", default=True,
                                   update_allowed=True),
        "mac_address": Property("string", "MAC address of the port (Neutron lets only "
                                          "admins change it).",
                                constraints=[CustomConstraint(name="mac_addr")],
                                update_allowed=True),
        "allowed_address_pairs": Property(
            "list", "Other addresses the port may send from.", update_allowed=True,
            schema=Property("map", schema={
                "mac_address": Property("string", "MAC address of the pair.",
                                        constraints=[CustomConstraint(name="mac_addr")]),
                "ip_address": Property("string", "Address or CIDR of the pair.",
                                       required=True,
                                       constraints=[CustomConstraint(name="ip_or_cidr")]),
            })),
        "binding:vnic_type": Property("string", "The vNIC type to bind.", default="normal",
                                      update_allowed=True,
                                      constraints=[AllowedValues(allowed=VNIC_TYPES)]),
        "port_security_enabled": Property("boolean", "Whether port security is on.",
                                          update_allowed=True),
        "qos_policy": ref_property("qos_policy", "QoS policy (name or ID) for the port.",
                                   update_allowed=True),
        "propagate_uplink_status": Property("boolean", "Whether the uplink status is "
                                                       "propagated to the VF.",
                                            update_allowed=True),
        "no_fixed_ips": Property("boolean", "Give the port no address at all.",
                                 default=False, update_allowed=True),
    }
    attributes_schema = {
        "admin_state_up": Attribute("Whether the port is up.", "string"),
        "device_id": Attribute("ID of the device using the port.", "string"),
        "device_owner": Attribute("Kind of device using the port.", "string"),
        "fixed_ips": Attribute("The port's addresses.", "list"),
        "mac_address": Attribute("The port's MAC address.", "string"),
        "name": Attribute("The port's name.", "string"),
        "network_id": Attribute("The port's network.", "string"),
        "security_groups": Attribute("The port's security groups.", "list"),
        "status": Attribute("The port's status.", "string"),
        "tenant_id": Attribute("The project owning the port.", "string"),
        "allowed_address_pairs": Attribute("Other addresses the port may send from.",
                                           "list"),
        "subnets": Attribute("The subnets of the port's addresses.", "list"),
        "port_security_enabled": Attribute("Whether port security is on.", "boolean"),
        "qos_policy_id": Attribute("The port's QoS policy.", "string"),
        "dns_assignment": Attribute("The port's DNS assignment.", "map"),
        "network": Attribute("The port's network, in full.", "map"),
        "propagate_uplink_status": Attribute("Whether the uplink status is propagated.",
                                             "boolean"),
    }

    def implicit_requirements(self, peers: Peers) -> Iterable[str]:
        """Every subnet of the stack on the port's network (Heat's rule)."""
        network = _implicit.either(peers, self, "network", "network_id")
        return _implicit.subnets_of(peers, network)

    async def body_from(self, values: Mapping[str, Any], *,
                        create: bool) -> dict[str, Any]:
        body = await super().body_from(values, create=create)
        if values.get("no_fixed_ips"):
            body["fixed_ips"] = []
        elif "fixed_ips" in values:
            fixed = values.get("fixed_ips")
            if fixed:
                body["fixed_ips"] = [await self._fixed_ip(item) for item in fixed]
            elif not create:
                body["fixed_ips"] = []
        if "allowed_address_pairs" in values:
            pairs = values.get("allowed_address_pairs") or []
            body["allowed_address_pairs"] = [
                {k: v for k, v in pair.items() if v is not None} for pair in pairs]
        if "security_groups" in values:
            groups = values.get("security_groups")
            if groups is not None:
                body["security_groups"] = [await self.find_id("security_group", g)
                                           for g in groups]
            elif not create:
                body["security_groups"] = [await self.find_id("security_group", "default")]
        return body

    async def _fixed_ip(self, item: Mapping[str, Any]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        subnet = item.get("subnet")
        if subnet:
            out["subnet_id"] = await self.find_id("subnet", subnet)
        if item.get("ip_address"):
            out["ip_address"] = item["ip_address"]
        return out

    async def shape_live(self, obj: Mapping[str, Any], expected: Mapping[str, Any],
                         state: LiveState) -> None:
        """Security groups compared as the IDs their names give; address pairs by the
        keys the template gave (Neutron fills in the port's MAC); fixed IPs as
        :func:`live_fixed_ips` says."""
        fixed = expected.get("fixed_ips")
        if fixed and not expected.get("no_fixed_ips"):
            wanted: list[dict[str, Any]] = []
            for item in fixed:
                entry: dict[str, Any] = {}
                subnet = item.get("subnet") or item.get("subnet_id")
                if subnet:
                    entry["subnet"] = await self.id_or_name("subnet", str(subnet))
                if item.get("ip_address"):
                    entry["ip_address"] = item["ip_address"]
                wanted.append(entry)
            state.expected["fixed_ips"], state.actual["fixed_ips"] = live_fixed_ips(
                wanted, obj.get("fixed_ips") or [])
        if "security_groups" in state.expected:
            state.expected["security_groups"] = sorted(
                [await self.id_or_name("security_group", str(g))
                 for g in state.expected["security_groups"] or []])
            state.actual["security_groups"] = sorted(state.actual["security_groups"] or [])
        if "allowed_address_pairs" in state.expected:
            wanted = [{k: v for k, v in dict(p).items() if v is not None}
                      for p in state.expected["allowed_address_pairs"] or []]
            with_mac = any("mac_address" in p for p in wanted)
            state.expected["allowed_address_pairs"] = wanted
            state.actual["allowed_address_pairs"] = [
                {k: v for k, v in dict(p).items()
                 if k == "ip_address" or (with_mac and k == "mac_address")}
                for p in state.actual["allowed_address_pairs"] or []]

    def resolve_attribute(self, name: str) -> Any:
        shown = self.shown()
        if name == "subnets":
            return [ip.get("subnet_id") for ip in shown.get("fixed_ips") or []]
        if name == "network":
            return {"id": shown.get("network_id")} if shown else None
        return shown.get(name)

    async def handle_delete(self) -> Token:
        return await super().handle_delete()


def live_fixed_ips(wanted: Sequence[Mapping[str, Any]], live: Sequence[Mapping[str, Any]],
                   ) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(expected, actual) ``fixed_ips`` of a port. Neutron shows each address as
    ``{subnet_id, ip_address}`` (Heat's parse_live_resource_data reads them back as
    ``{subnet, ip_address}``). Each template item (subnet as an ID) takes the address
    that has everything it gave, items with an address first; it then shows only the
    keys it gave, so an item naming just a subnet is in sync with whatever address
    Neutron chose there. An item the port no longer has is missing (REMOVE), an address
    no item took is extra (ADD); an empty item takes any one address."""
    left = [{"subnet": ip.get("subnet_id"), "ip_address": ip.get("ip_address")}
            for ip in live]
    expected = [dict(item) for item in wanted if item]
    found: dict[int, dict[str, Any]] = {}
    order = sorted(range(len(expected)), key=lambda i: "ip_address" not in expected[i])
    for index in order:
        item = expected[index]
        match = next((ip for ip in left if all(ip.get(k) == v for k, v in item.items())),
                     None)
        if match is not None:
            left.remove(match)
            found[index] = {k: match[k] for k in item}
    del left[:len(wanted) - len(expected)]   # the empty items' addresses
    actual = [found[i] for i in range(len(expected)) if i in found]
    actual += [{k: v for k, v in ip.items() if v is not None} for ip in left]
    return expected, actual

