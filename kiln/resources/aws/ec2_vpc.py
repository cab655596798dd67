"""The AWS::EC2 VPC types on Neutron, mapped as Heat 27 maps them.

- ``VPC``: a network and a router of the same name (that name is how the others find
  the VPC's router).
- ``Subnet``: a subnet of the VPC's network, attached to the VPC's router.
- ``InternetGateway``: nothing in the cloud (its ID is a name); attaching it to a VPC
  (``VPCGatewayAttachment``) sets the cloud's one external network as the gateway of
  every ``RouteTable`` of that VPC in the stack.
- ``RouteTable``: a router, with the VPC router's gateway when that has one;
  ``SubnetRouteTableAssociation`` moves a subnet's interface from the VPC's router to
  the route table's, and back when it is deleted.

No property of these types may change in place: a change replaces the resource.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any
from urllib.parse import quote

from kiln.resources.base import (
    Attribute,
    Peers,
    Property,
    Resource,
    ResourceFailure,
    SupportStatus,
    Token,
)
from kiln.resources.common.cloud import OpenStackResource, custom
from kiln.template.constraints import AllowedValues


def tags_property(description: str | None = None, *, implemented: bool = False,
                  update_allowed: bool = False, immutable: bool = False) -> Property:
    """Heat's ``Tags``: a list of ``{Key, Value}`` maps (unimplemented on most types:
    giving it is refused, as in Heat)."""
    item = Property("map", None if implemented else description, implemented=implemented,
                    schema={"Key": Property("string", required=True),
                            "Value": Property("string", required=True)})
    return Property("list", description if implemented else None, schema=item,
                    update_allowed=update_allowed, immutable=immutable)


class NeutronEC2(OpenStackResource):
    """An AWS::EC2 type made of Neutron objects."""

    client_name = "neutron"
    service_type = "network"

    async def router_for_vpc(self, network_id: str) -> dict[str, Any] | None:
        """The VPC's router: the router named as its network (None when there is none,
        as for a network made outside a VPC)."""
        net = await self.api("GET", f"/networks/{network_id}")
        name = net["network"]["name"]
        routers = (await self.api("GET", f"/routers?name={quote(name)}"))["routers"]
        if not routers:
            return None
        if len(routers) > 1:
            raise ResourceFailure(f"Multiple routers found with name {name}")
        router: dict[str, Any] = routers[0]
        return router

    async def external_network_id(self) -> str:
        """The cloud's external network (Heat wants exactly one)."""
        nets = (await self.api("GET", "/networks?router:external=True"))["networks"]
        if len(nets) != 1:
            raise ResourceFailure(f"Expected 1 external network, found {len(nets)}")
        return str(nets[0]["id"])

    async def gone(self, path: str) -> bool:
        return await self.api("GET", path, ok_missing=True) is None


class VPC(NeutronEC2):
    """A virtual private cloud: a Neutron network and a router of the same name."""

    type_name = "AWS::EC2::VPC"
    properties_schema = {
        "CidrBlock": Property("string", "CIDR block of the VPC."),
        "InstanceTenancy": Property(
            "string", "Tenancy of the VPC's instances (not implemented).",
            default="default", implemented=False,
            constraints=[AllowedValues(allowed=("default", "dedicated"))]),
        "Tags": tags_property("Tags of the VPC."),
    }

    def live_location(self) -> tuple[str, str] | None:
        return f"/networks/{self.resource_id}", "network"

    async def handle_create(self) -> Token:
        name = self.physical_resource_name()
        net = await self.api("POST", "/networks", {"network": {"name": name}})
        self.resource_id = str(net["network"]["id"])
        self.remember(net["network"])
        await self.api("POST", "/routers", {"router": {"name": name}})
        return None

    async def check_create_complete(self, token: Token) -> bool:
        net = await self.api("GET", f"/networks/{self.resource_id}")
        if not self.is_built(net["network"]):
            return False
        router = await self.router_for_vpc(str(self.resource_id))
        return router is None or self.is_built(router)

    async def handle_delete(self) -> Token:
        if self.resource_id is None:
            return None
        router = None
        try:
            router = await self.router_for_vpc(self.resource_id)
        except ResourceFailure:
            if await self.gone(f"/networks/{self.resource_id}"):
                return None
            raise
        if router is not None:
            await self.api("DELETE", f"/routers/{router['id']}", ok_missing=True)
        await self.api("DELETE", f"/networks/{self.resource_id}", ok_missing=True)
        return {"network": self.resource_id}

    async def check_delete_complete(self, token: Token) -> bool:
        return not token or await self.gone(f"/networks/{token['network']}")


class Subnet(NeutronEC2):
    """A subnet of the VPC's network, attached to the VPC's router."""

    type_name = "AWS::EC2::Subnet"
    properties_schema = {
        "AvailabilityZone": Property("string", "Availability zone of the subnet."),
        "CidrBlock": Property("string", "CIDR block of the subnet.", required=True),
        "VpcId": Property("string", "The VPC (its Ref) of the subnet.", required=True),
        "Tags": tags_property("Tags of the subnet."),
    }
    attributes_schema = {
        "AvailabilityZone": Attribute("Availability zone of the subnet.", "string"),
    }

    def live_location(self) -> tuple[str, str] | None:
        return f"/subnets/{self.resource_id}", "subnet"

    async def handle_create(self) -> Token:
        network_id = self.properties["VpcId"]
        answer = await self.api("POST", "/subnets", {"subnet": {
            "network_id": network_id, "cidr": self.properties["CidrBlock"],
            "name": self.physical_resource_name(), "ip_version": 4}})
        self.resource_id = str(answer["subnet"]["id"])
        self.remember(answer["subnet"])
        router = await self.router_for_vpc(network_id)
        if router is not None:
            await self.api("PUT", f"/routers/{router['id']}/add_router_interface",
                           {"subnet_id": self.resource_id})
        return None

    async def handle_delete(self) -> Token:
        if self.resource_id is None:
            return None
        try:
            router = await self.router_for_vpc(self.properties["VpcId"])
        except ResourceFailure:
            router = None  # the VPC is gone: no interface is left to remove
        if router is not None:
            await self.api("PUT", f"/routers/{router['id']}/remove_router_interface",
                           {"subnet_id": self.resource_id}, ok_missing=True)
        await self.api("DELETE", f"/subnets/{self.resource_id}", ok_missing=True)
        return None

    def resolve_attribute(self, name: str) -> Any:
        if name == "AvailabilityZone":
            return self.properties.get("AvailabilityZone")
        return None


class InternetGateway(Resource):
    """Stands for the cloud's external network; nothing is made in the cloud."""

    type_name = "AWS::EC2::InternetGateway"
    properties_schema = {"Tags": tags_property()}

    async def handle_create(self) -> Token:
        self.resource_id = self.physical_resource_name()
        return None


class VPCGatewayAttachment(NeutronEC2):
    """Gives every route table of the VPC (in this stack) the external network as its
    gateway; it waits for those route tables (Heat's implicit dependency)."""

    type_name = "AWS::EC2::VPCGatewayAttachment"
    properties_schema = {
        "VpcId": Property("string", "The VPC to attach the gateway to.", required=True),
        "InternetGatewayId": Property("string", "The InternetGateway."),
        "VpnGatewayId": Property("string", "The VPN gateway (not implemented).",
                                 implemented=False),
    }

    def implicit_requirements(self, peers: Peers) -> Iterable[str]:
        vpc = peers.value(self, "VpcId")
        tables = [t.name for t in peers.of_type(RouteTable.type_name)
                  if vpc is not None and peers.value(t, "VpcId") == vpc]
        self.data["route_tables"] = json.dumps(sorted(tables))
        return tables

    def _routers(self) -> list[str]:
        """The route tables' routers (each created before this resource)."""
        routers = []
        for name in json.loads(self.data.get("route_tables") or "[]"):
            table = self.runtime.resource(name)
            if table is not None and table.resource_id:
                routers.append(table.resource_id)
        return routers

    async def handle_create(self) -> Token:
        external = await self.external_network_id()
        routers = self._routers()
        for router in routers:
            await self.api("PUT", f"/routers/{router}",
                           {"router": {"external_gateway_info": {"network_id": external}}})
        self.data["routers"] = json.dumps(routers)
        return None

    async def handle_delete(self) -> Token:
        for router in json.loads(self.data.get("routers") or "[]"):
            await self.api("PUT", f"/routers/{router}",
                           {"router": {"external_gateway_info": {}}}, ok_missing=True)
        return None


class RouteTable(NeutronEC2):
    """A router; it takes the VPC router's gateway when that has one."""

    type_name = "AWS::EC2::RouteTable"
    support_status = SupportStatus(version="2014.1")
    properties_schema = {
        "VpcId": Property("string", "The VPC of the route table.", required=True),
        "Tags": tags_property("Tags of the route table."),
    }

    def live_location(self) -> tuple[str, str] | None:
        return f"/routers/{self.resource_id}", "router"

    async def handle_create(self) -> Token:
        answer = await self.api("POST", "/routers",
                                {"router": {"name": self.physical_resource_name()}})
        self.resource_id = str(answer["router"]["id"])
        return None

    async def check_create_complete(self, token: Token) -> bool:
        router = (await self.api("GET", f"/routers/{self.resource_id}"))["router"]
        if not self.is_built(router):
            return False
        default = await self.router_for_vpc(self.properties["VpcId"])
        gateway = (default or {}).get("external_gateway_info")
        if gateway:
            await self.api("PUT", f"/routers/{self.resource_id}", {"router": {
                "external_gateway_info": {"network_id": gateway["network_id"]}}})
        return True

    async def handle_delete(self) -> Token:
        if self.resource_id is not None:
            await self.api("DELETE", f"/routers/{self.resource_id}", ok_missing=True)
        return None


class SubnetRouteTableAssociation(NeutronEC2):
    """Routes a subnet through a route table instead of the VPC's router."""

    type_name = "AWS::EC2::SubnetRouteTableAssociation"
    properties_schema = {
        "RouteTableId": Property("string", "The route table.", required=True),
        "SubnetId": Property("string", "The subnet.", required=True,
                             constraints=custom("neutron.subnet")),
    }

    async def _vpc_router(self, subnet_id: str) -> dict[str, Any] | None:
        subnet = await self.api("GET", f"/subnets/{subnet_id}", ok_missing=True)
        if subnet is None:
            return None
        return await self.router_for_vpc(subnet["subnet"]["network_id"])

    async def handle_create(self) -> Token:
        subnet, table = self.properties["SubnetId"], self.properties["RouteTableId"]
        previous = await self._vpc_router(subnet)
        if previous is not None:
            await self.api("PUT", f"/routers/{previous['id']}/remove_router_interface",
                           {"subnet_id": subnet}, ok_missing=True)
        await self.api("PUT", f"/routers/{table}/add_router_interface",
                       {"subnet_id": subnet})
        return None

    async def handle_delete(self) -> Token:
        subnet, table = self.properties["SubnetId"], self.properties["RouteTableId"]
        await self.api("PUT", f"/routers/{table}/remove_router_interface",
                       {"subnet_id": subnet}, ok_missing=True)
        try:
            default = await self._vpc_router(subnet)
        except ResourceFailure:
            default = None
        if default is not None:
            await self.api("PUT", f"/routers/{default['id']}/add_router_interface",
                           {"subnet_id": subnet}, ok_missing=True)
        return None


def tag_map(tags: Iterable[Mapping[str, Any]] | None) -> dict[str, str] | None:
    """``[{Key, Value}]`` as a map (Nova metadata, Cinder metadata), None without tags."""
    if not tags:
        return None
    return {str(t["Key"]): str(t["Value"]) for t in tags}
