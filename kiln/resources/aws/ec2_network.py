"""AWS::EC2 NetworkInterface, SecurityGroup, EIP and EIPAssociation on Neutron, as
Heat 27 maps them.

- ``NetworkInterface``: a port with one address on ``SubnetId``; ``GroupSet`` (names or
  IDs) changes in place, none at all means Neutron's default group.
- ``SecurityGroup``: a Neutron security group whose rules are the ingress and egress
  lists; with egress rules the default allow-all egress rules are dropped; a change of
  the lists deletes the rules no longer listed and adds the new ones.
- ``EIP``: a floating IP on the cloud's one external network, optionally forwarded to
  an instance's first port; its Ref is the address.
- ``EIPAssociation``: forwards an EIP (by address, to an instance) or an allocation (a
  floating IP ID, to an instance's first port or a network interface); the VPC's
  router gets the floating network as gateway first.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from typing import Any
from urllib.parse import quote

from kiln.errors import StackValidationFailed
from kiln.resources.aws.ec2_vpc import NeutronEC2, tags_property
from kiln.resources.base import Attribute, Properties, Property, ResourceFailure, Token
from kiln.resources.common.cloud import OpenStackResource, custom
from kiln.resources.schema import SupportStatus
from kiln.template.constraints import AllowedValues
from kiln.template.definitions import ResourceDefinition


def _is_uuid(value: str) -> bool:
    try:
        uuid.UUID(value)
    except ValueError:
        return False
    return True


async def secgroup_ids(owner: OpenStackResource, groups: list[str]) -> list[str]:
    """Security group IDs for names or IDs, a name looked up among the groups of the
    credentials' own project (an admin sees every project's ``default``)."""
    out: list[str] = []
    mine: list[dict[str, Any]] | None = None
    for group in groups:
        if _is_uuid(group):
            out.append(group)
            continue
        if mine is None:
            project = await owner.clients.call(lambda conn: conn.current_project_id)
            mine = (await owner.api("GET", f"/security-groups?project_id={project}",
                                    service="network"))["security_groups"]
        found = [g["id"] for g in mine if g["name"] == group]
        if not found:
            raise ResourceFailure(f"The Resource ({group}) could not be found.",
                                  exc_type="EntityNotFound")
        if len(found) > 1:
            raise ResourceFailure(f"Multiple physical resources were found with name "
                                  f"({group}).", exc_type="PhysicalResourceNameAmbiguity")
        out.append(found[0])
    return out


class NetworkInterface(NeutronEC2):
    """A port with an address on a subnet."""

    type_name = "AWS::EC2::NetworkInterface"
    properties_schema = {
        "Description": Property("string", "Description of the interface."),
        "GroupSet": Property("list", "Security groups (IDs) of the interface.",
                             update_allowed=True),
        "PrivateIpAddress": Property("string"),
        "SourceDestCheck": Property("boolean", "Whether traffic is validated (not "
                                               "implemented).", implemented=False),
        "SubnetId": Property("string", "Subnet of the interface.", required=True,
                             constraints=custom("neutron.subnet")),
        "Tags": tags_property("Tags of the interface."),
    }
    attributes_schema = {
        "PrivateIpAddress": Attribute("The interface's private address.", "string"),
    }

    def live_location(self) -> tuple[str, str] | None:
        return f"/ports/{self.resource_id}", "port"

    async def handle_create(self) -> Token:
        subnet = self.properties["SubnetId"]
        network = (await self.api("GET", f"/subnets/{subnet}"))["subnet"]["network_id"]
        fixed: dict[str, Any] = {"subnet_id": subnet}
        if self.properties.get("PrivateIpAddress"):
            fixed["ip_address"] = self.properties["PrivateIpAddress"]
        body: dict[str, Any] = {"name": self.physical_resource_name(),
                                "admin_state_up": True, "network_id": network,
                                "fixed_ips": [fixed]}
        if self.properties.get("GroupSet") is not None:
            body["security_groups"] = await secgroup_ids(self, self.properties["GroupSet"])
        answer = await self.api("POST", "/ports", {"port": body})
        self.resource_id = str(answer["port"]["id"])
        self.remember(answer["port"])
        return None

    async def handle_update(self, new_definition: ResourceDefinition,
                            new_properties: Properties, prop_diff: Mapping[str, Any]) -> Token:
        if "GroupSet" in prop_diff:
            groups = prop_diff["GroupSet"]
            ids = await secgroup_ids(self, groups if groups is not None else ["default"])
            answer = await self.api("PUT", f"/ports/{self.resource_id}",
                                    {"port": {"security_groups": ids}})
            self.remember(answer["port"])
        return None

    async def handle_delete(self) -> Token:
        if self.resource_id is not None:
            await self.api("DELETE", f"/ports/{self.resource_id}", ok_missing=True)
        return None

    def resolve_attribute(self, name: str) -> Any:
        fixed = self.shown().get("fixed_ips") or []
        return fixed[0]["ip_address"] if fixed else None


_RULE = {
    "CidrIp": Property("string"),
    "FromPort": Property("string"),
    "ToPort": Property("string"),
    "IpProtocol": Property("string"),
    "SourceSecurityGroupId": Property("string"),
    "SourceSecurityGroupName": Property("string"),
    "SourceSecurityGroupOwnerId": Property("string", implemented=False),
}


def _port(value: Any) -> int | None:
    """Neutron takes only positive ports: a negative one (ICMP's -1) means any."""
    if value is None:
        return None
    number = int(value)
    return None if number < 0 else number


def _rules(props: Mapping[str, Any], key: str, direction: str) -> list[dict[str, Any]]:
    """The rules of one list in a form comparable with Neutron's."""
    out = []
    for rule in props.get(key) or []:
        ports_given = rule.get("FromPort") is not None or rule.get("ToPort") is not None
        out.append({
            "direction": direction, "protocol": rule.get("IpProtocol"),
            "port_range_min": _port(rule.get("FromPort")),
            "port_range_max": _port(rule.get("ToPort")),
            "remote_ip_prefix": rule.get("CidrIp") if ports_given else None,
            "remote_group_id": (rule.get("SourceSecurityGroupId") or
                                rule.get("SourceSecurityGroupName")),
        })
    return out


def _all_rules(props: Mapping[str, Any]) -> list[dict[str, Any]]:
    return (_rules(props, "SecurityGroupEgress", "egress") +
            _rules(props, "SecurityGroupIngress", "ingress"))


_COMPARED = ("direction", "protocol", "port_range_min", "port_range_max",
             "remote_ip_prefix", "remote_group_id")


class SecurityGroup(NeutronEC2):
    """A Neutron security group with the template's ingress and egress rules."""

    type_name = "AWS::EC2::SecurityGroup"
    properties_schema = {
        "GroupDescription": Property("string", "Description of the group.", required=True),
        "VpcId": Property("string", "The VPC (not implemented)."),
        "SecurityGroupIngress": Property(
            "list", update_allowed=True,
            schema=Property("map", "Ingress rules.", schema=_RULE)),
        "SecurityGroupEgress": Property(
            "list", update_allowed=True,
            schema=Property("map", "Egress rules.", schema=_RULE)),
    }

    def live_location(self) -> tuple[str, str] | None:
        return f"/security-groups/{self.resource_id}", "security_group"

    async def _add_rule(self, rule: Mapping[str, Any]) -> None:
        body = {**rule, "ethertype": "IPv4", "security_group_id": self.resource_id}
        try:
            await self.api("POST", "/security-group-rules", {"security_group_rule": body})
        except ResourceFailure as exc:
            if exc.exc_type != "Conflict":   # the same rule is there already
                raise

    async def handle_create(self) -> Token:
        answer = await self.api("POST", "/security-groups", {"security_group": {
            "name": self.physical_resource_name(),
            "description": self.properties["GroupDescription"]}})
        group = answer["security_group"]
        self.resource_id = str(group["id"])
        if self.properties.get("SecurityGroupEgress"):
            for rule in group.get("security_group_rules") or []:
                if rule["direction"] == "egress":
                    await self.api("DELETE", f"/security-group-rules/{rule['id']}",
                                   ok_missing=True)
        for rule in _all_rules(self.properties):
            await self._add_rule(rule)
        return None

    async def handle_update(self, new_definition: ResourceDefinition,
                            new_properties: Properties, prop_diff: Mapping[str, Any]) -> Token:
        if "SecurityGroupIngress" not in prop_diff and "SecurityGroupEgress" not in prop_diff:
            return None
        group = (await self.api("GET", f"/security-groups/{self.resource_id}"))[
            "security_group"]
        existing = {r["id"]: {k: r.get(k) for k in _COMPARED}
                    for r in group.get("security_group_rules") or []}
        wanted = _all_rules(new_properties)
        for rule_id, rule in existing.items():
            if rule not in wanted:
                await self.api("DELETE", f"/security-group-rules/{rule_id}",
                               ok_missing=True)
        for rule in wanted:
            if rule not in existing.values():
                await self._add_rule(rule)
        return None

    async def handle_delete(self) -> Token:
        if self.resource_id is None:
            return None
        found = await self.api("GET", f"/security-groups/{self.resource_id}",
                               ok_missing=True)
        if found is None:
            return None
        for rule in found["security_group"].get("security_group_rules") or []:
            await self.api("DELETE", f"/security-group-rules/{rule['id']}", ok_missing=True)
        await self.api("DELETE", f"/security-groups/{self.resource_id}", ok_missing=True)
        return None


async def first_port(owner: NeutronEC2, server_id: str) -> tuple[str, str | None]:
    """(port, its first IPv4 address) of a server's first interface (Heat's choice when
    an instance has several)."""
    ifaces = (await owner.api("GET", f"/servers/{server_id}/os-interface",
                              service="compute"))["interfaceAttachments"]
    if not ifaces:
        raise ResourceFailure(f"No network interface found for server {server_id}.",
                              exc_type="InterfaceNotFound")
    fixed = [ip["ip_address"] for ip in ifaces[0].get("fixed_ips") or []
             if ":" not in ip["ip_address"]]
    return str(ifaces[0]["port_id"]), (fixed[0] if fixed else None)


async def forward(owner: NeutronEC2, fip_id: str, server_id: str | None) -> None:
    """Point floating IP *fip_id* at *server_id*'s first port (None: at nothing)."""
    body: dict[str, Any] = {"port_id": None, "fixed_ip_address": None}
    if server_id:
        port, address = await first_port(owner, server_id)
        body = {"port_id": port, "fixed_ip_address": address}
    await owner.api("PUT", f"/floatingips/{fip_id}", {"floatingip": body})


async def fip_by_address(owner: NeutronEC2, address: str) -> str:
    found = (await owner.api("GET", f"/floatingips?floating_ip_address={quote(address)}")
             )["floatingips"]
    if not found:
        raise ResourceFailure(f"No floatingip matching {{'ip_address': '{address}'}}.",
                              exc_type="EntityMatchNotFound")
    return str(found[0]["id"])


class EIP(NeutronEC2):
    """A floating IP on the external network; its Ref is the address."""

    type_name = "AWS::EC2::EIP"
    client_name = "nova"
    properties_schema = {
        "Domain": Property("string", "Set to \"vpc\" (the only kind there is).",
                           constraints=[AllowedValues(allowed=("vpc",))],
                           support_status=SupportStatus(
                               status="DEPRECATED", version="9.0.0",
                               message="Only vpc is allowed: no need to set it.")),
        "InstanceId": Property("string", "Instance to forward the address to.",
                               update_allowed=True, constraints=custom("nova.server")),
    }
    attributes_schema = {
        "AllocationId": Attribute("The floating IP's ID (the VPC allocation).", "string"),
    }

    def live_location(self) -> tuple[str, str] | None:
        return f"/floatingips/{self.resource_id}", "floatingip"

    async def handle_create(self) -> Token:
        network = await self.external_network_id()
        answer = await self.api("POST", "/floatingips",
                                {"floatingip": {"floating_network_id": network}})
        fip = answer["floatingip"]
        self.resource_id = str(fip["id"])
        self.remember(fip)
        if self.properties.get("InstanceId"):
            await forward(self, self.resource_id, self.properties["InstanceId"])
        return None

    async def handle_update(self, new_definition: ResourceDefinition,
                            new_properties: Properties, prop_diff: Mapping[str, Any]) -> Token:
        if "InstanceId" in prop_diff:
            await forward(self, str(self.resource_id), prop_diff["InstanceId"])
        return None

    async def handle_delete(self) -> Token:
        if self.resource_id is None:
            return None
        await self.api("DELETE", f"/floatingips/{self.resource_id}", ok_missing=True)
        return None

    def reference_id(self) -> str:
        return str(self.shown().get("floating_ip_address") or self.name)

    def resolve_attribute(self, name: str) -> Any:
        return str(self.resource_id)


class EIPAssociation(NeutronEC2):
    """Forwards an EIP or a VPC allocation to an instance or a network interface."""

    type_name = "AWS::EC2::EIPAssociation"
    client_name = "nova"
    properties_schema = {
        "InstanceId": Property("string", "Instance to forward the EIP to.",
                               update_allowed=True, constraints=custom("nova.server")),
        "EIP": Property("string", "The EIP (its address).", update_allowed=True,
                        constraints=custom("ip_addr")),
        "AllocationId": Property("string", "The VPC allocation (a floating IP ID).",
                                 update_allowed=True),
        "NetworkInterfaceId": Property("string", "Network interface to forward to.",
                                       update_allowed=True),
    }

    def validate(self) -> None:
        super().validate()
        props = self.properties
        if bool(props.get("EIP")) == bool(props.get("AllocationId")):
            raise StackValidationFailed("Either 'EIP' or 'AllocationId' must be provided.")
        if props.get("EIP") and not props.get("InstanceId"):
            raise StackValidationFailed("Must specify 'InstanceId' if you specify 'EIP'.")
        if not props.get("InstanceId") and not props.get("NetworkInterfaceId"):
            raise StackValidationFailed("At least one of the following properties must be "
                                        "specified: InstanceId, NetworkInterfaceId.")

    def reference_id(self) -> str:
        return self.data.get("name") or self.name

    async def _port(self, interface: str | None, instance: str | None
                    ) -> tuple[str, str] | None:
        """(port, network) the allocation goes to."""
        if interface:
            found = (await self.api("GET", f"/ports?id={interface}"))["ports"]
        elif instance:
            found = (await self.api("GET", f"/ports?device_id={instance}"))["ports"]
        else:
            return None
        return (str(found[0]["id"]), str(found[0]["network_id"])) if found else None

    async def _allocate(self, fip: str, interface: str | None, instance: str | None,
                        *, required: bool) -> bool:
        target = await self._port(interface, instance)
        if target is None:
            if required:
                raise ResourceFailure("Failed to update, can not found port info.",
                                      exc_type="NotFound")
            return False
        port, network = target
        router = await self.router_for_vpc(network)
        if router is not None:
            floating = (await self.api("GET", f"/floatingips/{fip}"))["floatingip"]
            await self.api("PUT", f"/routers/{router['id']}", {"router": {
                "external_gateway_info": {"network_id": floating["floating_network_id"]}}})
        await self.api("PUT", f"/floatingips/{fip}", {"floatingip": {"port_id": port}})
        return True

    async def handle_create(self) -> Token:
        props = self.properties
        self.data["name"] = self.physical_resource_name()
        if props.get("EIP"):
            await forward(self, await fip_by_address(self, props["EIP"]),
                          props["InstanceId"])
            self.resource_id = props["EIP"]
        elif props.get("AllocationId") and await self._allocate(
                props["AllocationId"], props.get("NetworkInterfaceId"),
                props.get("InstanceId"), required=False):
            self.resource_id = props["AllocationId"]
        return None

    async def _detach(self, props: Mapping[str, Any], *, quiet: bool) -> None:
        try:
            if props.get("EIP"):
                await forward(self, await fip_by_address(self, props["EIP"]), None)
            elif props.get("AllocationId"):
                await self.api("PUT", f"/floatingips/{props['AllocationId']}",
                               {"floatingip": {"port_id": None}}, ok_missing=quiet)
        except ResourceFailure as exc:
            if not quiet or exc.exc_type not in ("EntityMatchNotFound", "NotFound"):
                raise

    def needs_replace(self, prop_diff: Mapping[str, Any]) -> bool:
        """Heat replaces the association when the address and its target change
        together."""
        if "AllocationId" in prop_diff or "EIP" in prop_diff:
            return bool(prop_diff.get("InstanceId") or prop_diff.get("NetworkInterfaceId"))
        return super().needs_replace(prop_diff)

    async def handle_update(self, new_definition: ResourceDefinition,
                            new_properties: Properties, prop_diff: Mapping[str, Any]) -> Token:
        old = self.properties
        if prop_diff.get("EIP"):
            await self._detach(old, quiet=False)
            await forward(self, await fip_by_address(self, prop_diff["EIP"]),
                          old.get("InstanceId"))
            self.resource_id = prop_diff["EIP"]
        elif prop_diff.get("AllocationId"):
            await self._detach(old, quiet=False)
            await self._allocate(prop_diff["AllocationId"], old.get("NetworkInterfaceId"),
                                 old.get("InstanceId"), required=True)
            self.resource_id = prop_diff["AllocationId"]
        elif "InstanceId" in prop_diff or "NetworkInterfaceId" in prop_diff:
            instance = prop_diff.get("InstanceId")
            interface = prop_diff.get("NetworkInterfaceId")
            if old.get("EIP"):
                await forward(self, await fip_by_address(self, old["EIP"]), instance)
            else:
                await self._allocate(old["AllocationId"], interface, instance,
                                     required=True)
        return None

    async def handle_delete(self) -> Token:
        if self.resource_id is not None:
            await self._detach(self.properties, quiet=True)
        return None
