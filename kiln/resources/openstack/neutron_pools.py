"""OS::Neutron::AddressScope, SubnetPool, RBACPolicy and Segment: Neutron objects made
with one POST each, behind the extension Heat requires for each."""

from __future__ import annotations

from typing import Any

from kiln.errors import StackValidationFailed
from kiln.resources.base import Property, SupportStatus
from kiln.resources.common.cloud import custom
from kiln.resources.openstack._neutron import NeutronResource, ref_property, tags_property
from kiln.template.constraints import AllowedValues, Length, Range


def _owner(description: str = "Project owning the object (admin only).",
           **kwargs: Any) -> Property:
    return Property("string", description, **kwargs)


class AddressScope(NeutronResource):
    """An address scope: subnet pools in one scope never overlap, and routing between
    scopes is not done."""

    type_name = "OS::Neutron::AddressScope"
    support_status = SupportStatus(version="6.0.0")
    entity = "address_scope"
    collection = "address-scopes"
    required_extension = ("address-scope",)
    properties_schema = {
        "name": Property("string", "Name of the scope (default: the physical name).",
                         update_allowed=True),
        "shared": Property("boolean", "Whether other projects may use the scope.",
                           default=False, update_allowed=True),
        "tenant_id": _owner(constraints=custom("keystone.project")),
        "ip_version": Property("integer", "IP version of the scope.", default=4,
                               constraints=[AllowedValues(allowed=(4, 6))]),
    }


def _prefix_length(description: str) -> Property:
    return Property("integer", description, update_allowed=True,
                    constraints=[Range(min=0)])


class SubnetPool(NeutronResource):
    """A pool of prefixes subnets are carved from. Its prefixes may only grow."""

    type_name = "OS::Neutron::SubnetPool"
    support_status = SupportStatus(version="6.0.0")
    entity = "subnetpool"
    collection = "subnetpools"
    required_extension = ("subnet_allocation",)
    api_names = {"address_scope": ("address_scope_id", "address_scope")}
    properties_schema = {
        "name": Property("string", "Name of the pool (default: the physical name).",
                         update_allowed=True),
        "prefixes": Property("list", "CIDRs the pool hands subnets out of.", required=True,
                             update_allowed=True, constraints=[Length(min=1)],
                             schema=Property("string", constraints=custom("net_cidr"))),
        "address_scope": ref_property("address_scope", "Address scope of the pool (name or "
                                                       "ID).", update_allowed=True),
        "default_quota": Property("integer", "Prefix space a project may take from the "
                                             "pool.", update_allowed=True,
                                  constraints=[Range(min=0)]),
        "default_prefixlen": _prefix_length("Prefix length of a subnet that asks for none."),
        "min_prefixlen": _prefix_length("Smallest prefix length a subnet may have."),
        "max_prefixlen": _prefix_length("Largest prefix length a subnet may have."),
        "is_default": Property("boolean", "Whether it is the default pool.", default=False,
                               update_allowed=True),
        "tenant_id": _owner(),
        "shared": Property("boolean", "Whether other projects may use the pool.",
                           default=False),
        "tags": tags_property(),
    }

    def validate(self) -> None:
        super().validate()
        p = self.properties
        low, default, high = (p.get("min_prefixlen"), p.get("default_prefixlen"),
                              p.get("max_prefixlen"))
        wrong = (("max_prefixlen", high, "min_prefixlen", low, low, high),
                 ("max_prefixlen", high, "default_prefixlen", default, default, high),
                 ("min_prefixlen", low, "default_prefixlen", default, low, default))
        for key1, value1, key2, value2, bigger, smaller in wrong:
            if bigger and smaller and bigger > smaller:
                raise StackValidationFailed(
                    f"Illegal prefix bounds: {key1}={value1}, {key2}={value2}.")

    async def update_extra(self, diff: dict[str, Any], new_properties: Any) -> None:
        if "prefixes" in diff:
            old = sorted(self.properties.get("prefixes") or [])
            new = sorted(diff["prefixes"] or [])
            if not _covers(new, old):
                raise StackValidationFailed(
                    f"Property prefixes updated value {new} should be superset of existing "
                    f"value {old}.")
        if "address_scope" in diff and diff["address_scope"] is None:
            # body_from drops None values: clearing the scope is sent as an extra field
            del diff["address_scope"]
            diff["value_specs"] = {"address_scope_id": None}


def _covers(new: list[str], old: list[str]) -> bool:
    """Whether every old prefix lies within one of the new ones."""
    from ipaddress import ip_network

    wider = [ip_network(n, strict=False) for n in new]
    for prefix in old:
        net = ip_network(prefix, strict=False)
        if not any(w.version == net.version and net.subnet_of(w)  # type: ignore[arg-type]
                   for w in wider):
            return False
    return True


#: the actions Neutron allows on each kind of object an RBAC policy can share
RBAC_ACTIONS = {"network": ("access_as_shared", "access_as_external"),
                "qos_policy": ("access_as_shared",),
                "security_group": ("access_as_shared",),
                "address_scope": ("access_as_shared",),
                "subnetpool": ("access_as_shared",)}


class RBACPolicy(NeutronResource):
    """Shares a network, QoS policy, security group, address scope or subnet pool with
    another project."""

    type_name = "OS::Neutron::RBACPolicy"
    support_status = SupportStatus(version="6.0.0")
    entity = "rbac_policy"
    collection = "rbac-policies"
    required_extension = ("rbac-policies",)
    names_itself = False
    properties_schema = {
        "object_type": Property("string", "Kind of object shared.", required=True,
                                constraints=[AllowedValues(allowed=tuple(RBAC_ACTIONS))]),
        "target_tenant": Property("string", "Project the object is shared with.",
                                  required=True, update_allowed=True),
        "action": Property("string", "What the project may do with it.", required=True,
                           constraints=[AllowedValues(allowed=("access_as_shared",
                                                               "access_as_external"))]),
        "object_id": Property("string", "The object (name or ID).", required=True),
        "tenant_id": _owner(),
    }

    def validate(self) -> None:
        super().validate()
        action, kind = self.properties["action"], self.properties["object_type"]
        if action not in RBAC_ACTIONS[kind]:
            raise StackValidationFailed(
                f"Property error: resources.{self.name}.properties.action: Invalid action "
                f'"{action}" for object type {kind}. Valid actions: '
                f"{', '.join(RBAC_ACTIONS[kind])}",
                path=("resources", self.name, "properties", "action"))

    async def create_body(self) -> dict[str, Any]:
        body = await super().create_body()
        body["object_id"] = await self.find_id(body["object_type"], body["object_id"])
        return body


class Segment(NeutronResource):
    """A segment of a routed provider network."""

    type_name = "OS::Neutron::Segment"
    support_status = SupportStatus(version="9.0.0")
    entity = "segment"
    collection = "segments"
    required_extension = ("segment",)
    api_names = {"network": ("network_id", "network")}
    properties_schema = {
        "network": ref_property("network", "The network (name or ID).", required=True),
        "network_type": Property("string", "Type of the segment.", required=True,
                                 constraints=[AllowedValues(allowed=(
                                     "local", "vlan", "vxlan", "gre", "geneve", "flat"))]),
        "physical_network": Property("string", "Physical network of a flat or VLAN "
                                               "segment."),
        "segmentation_id": Property("integer", "VLAN ID or tunnel ID.",
                                    constraints=[Range(min=1)]),
        "name": Property("string", "Name of the segment.", update_allowed=True),
        "description": Property("string", "Description of the segment.",
                                update_allowed=True),
    }

    def validate(self) -> None:
        super().validate()
        p = self.properties
        kind, physnet, seg = (p["network_type"], p.get("physical_network"),
                              p.get("segmentation_id"))
        if kind in ("flat", "vlan") and physnet is None:
            raise StackValidationFailed(
                f"physical_network is required for {kind} provider network.")
        if kind == "vlan" and seg is None:
            raise StackValidationFailed(
                "segmentation_id is required for vlan provider network.")
        if kind in ("local", "flat") and seg is not None:
            raise StackValidationFailed(
                f"segmentation_id is prohibited for {kind} provider network.")
        if kind in ("vxlan", "gre", "geneve") and physnet is not None:
            raise StackValidationFailed(
                f"physical_network is prohibited for {kind} provider network.")
        if kind == "vlan" and seg is not None and seg > 4094:
            raise StackValidationFailed(
                "Up to 4094 VLAN network segments can exist on each physical_network.")
