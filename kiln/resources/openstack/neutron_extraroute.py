"""OS::Neutron::ExtraRouteSet (and the unsupported single OS::Neutron::ExtraRoute):
static routes added to a router that other resources or users may also add routes to.

The set uses Neutron's atomic ``add_extraroutes``/``remove_extraroutes`` calls, so
routes added by others survive; only the routes it added are removed at delete, and an
update adds and removes only the difference. A route the router already has is
refused at create or update, as Heat refuses it (PhysicalResourceExists).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from kiln.resources.base import (
    Peers,
    Properties,
    Property,
    ResourceFailure,
    SupportStatus,
    Token,
)
from kiln.resources.common.cloud import OpenStackResource, custom
from kiln.resources.openstack import _implicit
from kiln.resources.openstack._neutron import find_id, ref_property
from kiln.template.definitions import ResourceDefinition

Route = tuple[str, str]


def _routes(items: list[Mapping[str, Any]] | None) -> set[Route]:
    return {(str(r["destination"]), str(r["nexthop"])) for r in items or []}


def _body(routes: set[Route]) -> dict[str, Any]:
    return {"router": {"routes": [{"destination": d, "nexthop": n}
                                  for d, n in sorted(routes)]}}


class ExtraRouteSet(OpenStackResource):
    """A set of extra routes of one router (its ID is the router's)."""

    type_name = "OS::Neutron::ExtraRouteSet"
    support_status = SupportStatus(version="14.0.0")
    client_name = "neutron"
    service_type = "network"
    required_extension: tuple[str, ...] = ("extraroute-atomic",)
    properties_schema = {
        "router": ref_property("router", "The router (name or ID).", required=True),
        "routes": Property("list", "The routes.", default=[], update_allowed=True,
                           schema=Property("map", schema={
                               "destination": Property("string", "Destination CIDR.",
                                                       required=True,
                                                       constraints=custom("net_cidr")),
                               "nexthop": Property("string", "Next hop address.",
                                                   required=True,
                                                   constraints=custom("ip_addr")),
                           })),
    }

    async def _refuse_existing(self, router: str, adding: set[Route]) -> None:
        answer = await self.api("GET", f"/routers/{router}")
        have = _routes(answer["router"].get("routes"))
        for dest, hop in sorted(adding & have):
            raise ResourceFailure(f"The Resource ({router},{dest}={hop}) already exists.",
                                  exc_type="PhysicalResourceExists")

    async def _change(self, router: str, add: set[Route], remove: set[Route]) -> None:
        if remove:
            await self.api("PUT", f"/routers/{router}/remove_extraroutes", _body(remove),
                           ok_missing=True)
        if add:
            await self.api("PUT", f"/routers/{router}/add_extraroutes", _body(add))

    #: the property naming the router
    router_property = "router"

    def implicit_requirements(self, peers: Peers) -> Iterable[str]:
        """Heat's rule: the set waits for every router interface of the stack on the
        same router (a next hop must be on a subnet the router is attached to, or
        Neutron refuses the route)."""
        router = peers.value(self, self.router_property)
        if router is None:
            return
        for iface in peers.of_type(_implicit.ROUTER_INTERFACE):
            if _implicit.either(peers, iface, "router", "router_id") == router:
                yield iface.name

    def live_location(self) -> tuple[str, str] | None:
        """The router the routes are on (the set's ID is the router's)."""
        return None if self.resource_id is None else (f"/routers/{self.resource_id}",
                                                      "router")

    def wanted(self) -> set[Route]:
        """The routes this resource adds."""
        return _routes(self.properties.get("routes"))

    async def handle_create(self) -> Token:
        router = await find_id(self, "router", self.properties[self.router_property])
        routes = self.wanted()
        await self._refuse_existing(router, routes)
        await self._change(router, routes, set())
        self.resource_id = router
        return None

    async def handle_update(self, new_definition: ResourceDefinition,
                            new_properties: Properties, prop_diff: Mapping[str, Any]) -> Token:
        old = _routes(self.properties.get("routes"))
        new = _routes(new_properties.get("routes"))
        router = self.resource_id or ""
        await self._refuse_existing(router, new - old)
        await self._change(router, new - old, old - new)
        return None

    async def handle_delete(self) -> Token:
        if self.resource_id:
            await self._change(self.resource_id, set(), self.wanted())
        return None

    async def handle_check(self) -> Token:
        if self.resource_id:
            answer = await self.api("GET", f"/routers/{self.resource_id}")
            missing = self.wanted() - _routes(answer["router"].get("routes"))
            if missing:
                raise ResourceFailure(f"Routes missing from the router: {sorted(missing)}",
                                      exc_type="Error")
        return None


class ExtraRoute(ExtraRouteSet):
    """One extra route of a router (Heat keeps it unsupported: use ExtraRouteSet)."""

    type_name = "OS::Neutron::ExtraRoute"
    support_status = SupportStatus(status="UNSUPPORTED",
                                   message="Use this resource at your own risk.")
    required_extension = ("extraroute",)
    properties_schema = {
        "router_id": Property("string", "The router (name or ID).", required=True,
                              constraints=custom("neutron.router")),
        "destination": Property("string", "Destination CIDR.", required=True),
        "nexthop": Property("string", "Next hop address.", required=True),
    }

    router_property = "router_id"

    def wanted(self) -> set[Route]:
        p = self.properties
        return {(str(p["destination"]), str(p["nexthop"]))}

    async def _change(self, router: str, add: set[Route], remove: set[Route]) -> None:
        """Read, change and write the router's routes (the non-atomic extension)."""
        answer = await self.api("GET", f"/routers/{router}", ok_missing=True)
        if answer is None:
            return
        routes = (_routes(answer["router"].get("routes")) - remove) | add
        await self.api("PUT", f"/routers/{router}", _body(routes))
