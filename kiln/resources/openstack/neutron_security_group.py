"""OS::Neutron::SecurityGroup and OS::Neutron::SecurityGroupRule."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kiln.resources.base import Properties, Property, SupportStatus, Token
from kiln.resources.live_state import LiveState
from kiln.resources.openstack._neutron import NeutronResource, ref_property
from kiln.template.constraints import AllowedValues, CustomConstraint, Range
from kiln.template.definitions import ResourceDefinition

PROTOCOL_NAMES = ("ah", "dccp", "egp", "esp", "gre", "icmp", "icmpv6", "igmp",
                  "ipv6-encap", "ipv6-frag", "ipv6-icmp", "ipv6-nonxt", "ipv6-opts",
                  "ipv6-route", "ospf", "pgm", "rsvp", "sctp", "tcp", "udp", "udplite",
                  "vrrp")
PROTOCOLS = AllowedValues(allowed=(*range(256), *PROTOCOL_NAMES))
_DIRECTION = AllowedValues(allowed=("ingress", "egress"))
_ETHERTYPE = AllowedValues(allowed=("IPv4", "IPv6"))
_PORT = Range(min=0, max=65535)

#: the egress rules Neutron gives every new group (restored when a template lists none)
DEFAULT_EGRESS = ({"direction": "egress", "ethertype": "IPv4"},
                  {"direction": "egress", "ethertype": "IPv6"})

_RULE_KEYS = ("direction", "ethertype", "protocol", "port_range_min", "port_range_max",
              "remote_ip_prefix", "remote_group_id")


def _rule_key(rule: Mapping[str, Any]) -> tuple[Any, ...]:
    key = []
    for name in _RULE_KEYS:
        value = rule.get(name)
        if name in ("port_range_min", "port_range_max") and value is not None:
            value = int(value)
        if name == "protocol" and value is not None:
            value = str(value)
        key.append(value)
    return tuple(key)


def _any_address(prefix: Any) -> Any:
    """None for a prefix that means any address (Neutron shows those as null)."""
    return None if prefix in (None, "", "0.0.0.0/0", "::/0") else prefix


class SecurityGroup(NeutronResource):
    """A security group with its rules; an update adds and removes rules to match."""

    type_name = "OS::Neutron::SecurityGroup"
    support_status = SupportStatus(version="2014.1")
    entity = "security_group"
    collection = "security-groups"
    not_sent = frozenset({"value_specs", "tags", "rules"})
    live_properties = ("name", "description", "stateful")
    properties_schema = {
        "name": Property("string", "Name of the group.", update_allowed=True),
        "description": Property("string", "Description of the group.", update_allowed=True),
        "rules": Property(
            "list", "The group's rules.", default=[], update_allowed=True,
            schema=Property("map", schema={
                "direction": Property("string", "Traffic direction.", default="ingress",
                                      constraints=[_DIRECTION]),
                "ethertype": Property("string", "IP version.", default="IPv4",
                                      constraints=[_ETHERTYPE]),
                "port_range_min": Property("integer", "Lowest port.", constraints=[_PORT]),
                "port_range_max": Property("integer", "Highest port.", constraints=[_PORT]),
                "protocol": Property("string", "Protocol (name or number).",
                                     constraints=[PROTOCOLS]),
                "remote_mode": Property(
                    "string", "Whether remote_ip_prefix or remote_group_id applies.",
                    default="remote_ip_prefix",
                    constraints=[AllowedValues(allowed=("remote_ip_prefix",
                                                        "remote_group_id"))]),
                "remote_group_id": Property(
                    "string", "Remote group (name or ID); this group when unset.",
                    constraints=[CustomConstraint(name="neutron.security_group")]),
                "remote_ip_prefix": Property("string", "Remote CIDR.",
                                             constraints=[CustomConstraint(
                                                 name="net_cidr")]),
                "description": Property("string", "Description of the rule."),
            })),
        "stateful": Property("boolean", "Whether the group is stateful.",
                             update_allowed=True),
    }

    def _format(self, rule: Mapping[str, Any]) -> dict[str, Any]:
        out = dict(rule)
        out["security_group_id"] = self.resource_id
        mode = out.pop("remote_mode", None)
        if mode == "remote_group_id":
            out["remote_ip_prefix"] = None
            if not out.get("remote_group_id"):
                out["remote_group_id"] = self.resource_id
        else:
            out["remote_group_id"] = None
        for key in ("port_range_min", "port_range_max"):
            if out.get(key) is not None:
                out[key] = str(out[key])
        if out.get("description") is None:
            out.pop("description", None)
        return out

    async def _rules_now(self) -> list[dict[str, Any]]:
        answer = await self.api("GET", self.path, ok_missing=True)
        if answer is None:
            return []
        rules: list[dict[str, Any]] = answer["security_group"]["security_group_rules"]
        return rules

    async def _create_rules(self, rules: list[dict[str, Any]]) -> None:
        if rules:
            await self.api("POST", "/security-group-rules",
                           {"security_group_rules": rules})

    async def after_create(self, obj: Mapping[str, Any]) -> None:
        rules = list(self.properties.get("rules") or [])
        if not rules:
            return
        if any(r.get("direction") == "egress" for r in rules):
            for rule in await self._rules_now():
                if rule["direction"] == "egress":
                    await self.api("DELETE", f"/security-group-rules/{rule['id']}",
                                   ok_missing=True)
        await self._create_rules([self._format(r) for r in rules])
        await self.refresh()

    async def shape_live(self, obj: Mapping[str, Any], expected: Mapping[str, Any],
                         state: LiveState) -> None:
        """The rules, each in the template's form; Neutron's default egress rules count
        only when the template lists egress rules of its own (otherwise they are kept,
        as the create keeps them)."""
        if "rules" not in expected:
            return
        wanted = [await self._template_rule(r) for r in expected["rules"] or []]
        egress = any(r["direction"] == "egress" for r in wanted)
        live = [self._live_rule(r) for r in obj.get("security_group_rules") or []]
        if not egress:
            defaults = [dict(r) for r in DEFAULT_EGRESS]
            live = [r for r in live if r not in defaults]
        state.expected["rules"] = wanted
        state.actual["rules"] = live

    async def _template_rule(self, rule: Mapping[str, Any]) -> dict[str, Any]:
        out: dict[str, Any] = {"direction": rule.get("direction") or "ingress",
                               "ethertype": rule.get("ethertype") or "IPv4"}
        if rule.get("protocol") is not None:
            out["protocol"] = str(rule["protocol"])
        for key in ("port_range_min", "port_range_max"):
            if rule.get(key) is not None:
                out[key] = int(rule[key])
        if rule.get("remote_mode") == "remote_group_id":
            group = rule.get("remote_group_id")
            out["remote_mode"] = "remote_group_id"
            out["remote_group_id"] = (await self.id_or_name("security_group", str(group))
                                      if group else self.resource_id)
        elif _any_address(rule.get("remote_ip_prefix")) is not None:
            out["remote_ip_prefix"] = rule["remote_ip_prefix"]
        return out

    @staticmethod
    def _live_rule(rule: Mapping[str, Any]) -> dict[str, Any]:
        out: dict[str, Any] = {"direction": rule.get("direction"),
                               "ethertype": rule.get("ethertype")}
        if rule.get("protocol") is not None:
            out["protocol"] = str(rule["protocol"])
        for key in ("port_range_min", "port_range_max"):
            if rule.get(key) is not None:
                out[key] = int(rule[key])
        if rule.get("remote_group_id"):
            out["remote_mode"] = "remote_group_id"
            out["remote_group_id"] = rule["remote_group_id"]
        elif _any_address(rule.get("remote_ip_prefix")) is not None:
            out["remote_ip_prefix"] = rule["remote_ip_prefix"]
        return out

    async def handle_update(self, new_definition: ResourceDefinition,
                            new_properties: Properties, prop_diff: Mapping[str, Any]) -> Token:
        diff = dict(prop_diff)
        rules = diff.pop("rules", None)
        if "rules" in prop_diff:
            wanted = list(rules or [])
            if not any(r.get("direction") == "egress" for r in wanted):
                wanted.extend(dict(r) for r in DEFAULT_EGRESS)
            desired = {_rule_key(f): f for f in (self._format(r) for r in wanted)}
            current = {_rule_key(r): r for r in await self._rules_now()}
            for key, rule in current.items():
                if key not in desired:
                    await self.api("DELETE", f"/security-group-rules/{rule['id']}",
                                   ok_missing=True)
            await self._create_rules([r for k, r in desired.items() if k not in current])
        return await super().handle_update(new_definition, new_properties, diff)

    async def handle_delete(self) -> Token:
        if self.resource_id is None:
            return None
        for rule in await self._rules_now():
            await self.api("DELETE", f"/security-group-rules/{rule['id']}", ok_missing=True)
        return await super().handle_delete()


class SecurityGroupRule(NeutronResource):
    """One rule of a security group (managed apart from the group)."""

    type_name = "OS::Neutron::SecurityGroupRule"
    support_status = SupportStatus(version="7.0.0")
    entity = "security_group_rule"
    collection = "security-group-rules"
    names_itself = False
    api_names = {"security_group": ("security_group_id", "security_group"),
                 "remote_group": ("remote_group_id", "security_group")}
    properties_schema = {
        "security_group": ref_property("security_group", "The group (name or ID).",
                                       required=True),
        "description": Property("string", "Description of the rule."),
        "direction": Property("string", "Traffic direction.", default="ingress",
                              constraints=[_DIRECTION]),
        "ethertype": Property("string", "IP version.", default="IPv4",
                              constraints=[_ETHERTYPE]),
        "port_range_min": Property("integer", "Lowest port.", constraints=[_PORT]),
        "port_range_max": Property("integer", "Highest port.", constraints=[_PORT]),
        "protocol": Property("string", "Protocol (name or number).", default="tcp",
                             constraints=[PROTOCOLS]),
        "remote_group": ref_property("security_group", "Remote group (name or ID)."),
        "remote_ip_prefix": Property("string", "Remote CIDR.",
                                     constraints=[CustomConstraint(name="net_cidr")]),
    }
