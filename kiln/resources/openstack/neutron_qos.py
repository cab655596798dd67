"""OS::Neutron::QoSPolicy and its rules (bandwidth limit, DSCP marking, minimum
bandwidth, minimum packet rate).

A rule lives under its policy (``/qos/policies/<policy>/<kind>_rules/<id>``), so the
policy's ID is kept in ``data`` for the update and delete calls. The types need
Neutron's ``qos`` extensions (the ``qos`` service plugin); a cloud without them lists
none of them and refuses them with Heat's "Required extension qos in neutron service is
not available.".
"""

from __future__ import annotations

from typing import Any

from kiln.resources.base import Attribute, Property, SupportStatus
from kiln.resources.openstack._neutron import NeutronResource, ref_property
from kiln.template.constraints import AllowedValues, Range


class QoSPolicy(NeutronResource):
    """A QoS policy: the rules attached to it apply to the ports and networks that
    name it."""

    type_name = "OS::Neutron::QoSPolicy"
    support_status = SupportStatus(version="6.0.0")
    entity = "policy"
    collection = "qos/policies"
    required_extension = ("qos",)
    properties_schema = {
        "name": Property("string", "Name of the policy (default: the physical name).",
                         update_allowed=True),
        "description": Property("string", "Description of the policy.",
                                update_allowed=True),
        "shared": Property("boolean", "Whether other projects may use the policy.",
                           default=False, update_allowed=True),
        "tenant_id": Property("string", "Project owning the policy (admin only)."),
    }
    attributes_schema = {
        "rules": Attribute("The policy's rules.", "list"),
    }


def _direction(choices: tuple[str, ...]) -> Property:
    return Property("string", "Traffic direction the rule applies to.", default="egress",
                    update_allowed=True, constraints=[AllowedValues(allowed=choices)])


def _rate(description: str, *, required: bool = False, default: int | None = None
          ) -> Property:
    return Property("integer", description, required=required, default=default,
                    update_allowed=True, constraints=[Range(min=0)])


def _rule_schema(**rule: Property) -> dict[str, Property]:
    return {
        "policy": ref_property("qos_policy", "The policy the rule belongs to (name or ID).",
                               required=True),
        **rule,
        "tenant_id": Property("string", "Project owning the rule (admin only)."),
    }


class QoSRule(NeutronResource):
    """A rule of a QoS policy (``entity`` names its kind, e.g. ``dscp_marking_rule``)."""

    not_sent = frozenset({"policy"})
    names_itself = False

    def collection_path(self) -> str:
        return f"/qos/policies/{self.data.get('policy', '')}/{self.entity}s"

    async def create_body(self) -> dict[str, Any]:
        self.data["policy"] = await self.find_id("qos_policy", self.properties["policy"])
        return await self.body_from(dict(self.properties), create=True)


class QoSBandwidthLimitRule(QoSRule):
    """Caps a port's bandwidth (and burst)."""

    type_name = "OS::Neutron::QoSBandwidthLimitRule"
    support_status = SupportStatus(version="6.0.0")
    entity = "bandwidth_limit_rule"
    required_extension = ("qos",)
    properties_schema = _rule_schema(
        max_kbps=_rate("Maximum bandwidth in kbps.", required=True),
        max_burst_kbps=_rate("Maximum burst in kilobits.", default=0),
        direction=_direction(("egress", "ingress")),
    )


#: the DSCP marks Neutron accepts
DSCP_MARKS = (0, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30, 32, 34, 36, 38, 40, 46, 48,
              56)


class QoSDscpMarkingRule(QoSRule):
    """Marks a port's packets with a DSCP value."""

    type_name = "OS::Neutron::QoSDscpMarkingRule"
    support_status = SupportStatus(version="7.0.0")
    entity = "dscp_marking_rule"
    required_extension = ("qos",)
    properties_schema = _rule_schema(
        dscp_mark=Property("integer", "The DSCP mark.", required=True, update_allowed=True,
                           constraints=[AllowedValues(allowed=DSCP_MARKS)]),
    )


class QoSMinimumBandwidthRule(QoSRule):
    """Guarantees a port a minimum bandwidth."""

    type_name = "OS::Neutron::QoSMinimumBandwidthRule"
    support_status = SupportStatus(version="14.0.0")
    entity = "minimum_bandwidth_rule"
    required_extension = ("qos-bw-minimum-ingress",)
    properties_schema = _rule_schema(
        min_kbps=_rate("Minimum bandwidth in kbps.", required=True),
        direction=_direction(("egress", "ingress")),
    )


class QoSMinimumPacketRateRule(QoSRule):
    """Guarantees a port a minimum packet rate."""

    type_name = "OS::Neutron::QoSMinimumPacketRateRule"
    support_status = SupportStatus(version="19.0.0")
    entity = "minimum_packet_rate_rule"
    required_extension = ("qos-pps-minimum",)
    properties_schema = _rule_schema(
        min_kpps=_rate("Minimum packet rate in kpps.", required=True),
        direction=_direction(("any", "egress", "ingress")),
    )

