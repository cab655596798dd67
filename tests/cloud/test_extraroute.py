"""OS::Neutron::ExtraRouteSet on the real Neutron (``extraroute-atomic``), as Heat 27's:
it waits for the stack's router interfaces on its router without a ``depends_on`` (a
next hop must be on an attached subnet), shows the router, changes only the difference
on update (``routes`` is update_allowed, to and from an empty list), is replaced when
its ``router`` changes (the new router gets the routes, the old one loses them), and
removes only its own routes at delete. (tests/cloud/test_neutron_pools.py checks the
refusal of a route the router already has and routes added by others.)"""

from __future__ import annotations

import uuid
from typing import Any

from tests.cloud.helpers import delete_and_wait, find, outputs, physical_ids, settled


def _template(routes: list[tuple[str, str]], router: str = "router") -> dict[str, Any]:
    """A network with two subnets, each attached to a router of its own, and the set on
    *router*."""
    def subnet(cidr: str) -> dict[str, Any]:
        return {"type": "OS::Neutron::Subnet",
                "properties": {"network": {"get_resource": "net"}, "cidr": cidr}}

    def iface(router: str, subnet: str) -> dict[str, Any]:
        return {"type": "OS::Neutron::RouterInterface",
                "properties": {"router": {"get_resource": router},
                               "subnet": {"get_resource": subnet}}}

    return {"heat_template_version": "2018-08-31", "resources": {
        "net": {"type": "OS::Neutron::Net"},
        "subnet": subnet("10.65.0.0/24"),
        "subnet2": subnet("10.67.0.0/24"),
        "router": {"type": "OS::Neutron::Router"},
        "router2": {"type": "OS::Neutron::Router"},
        "iface": iface("router", "subnet"),
        "iface2": iface("router2", "subnet2"),
        # no depends_on: Heat's implicit dependency on the interfaces of its router
        "routes": {"type": "OS::Neutron::ExtraRouteSet",
                   "properties": {"router": {"get_resource": router},
                                  "routes": [{"destination": d, "nexthop": n}
                                             for d, n in routes]}},
    }, "outputs": {"shown": {"value": {"get_attr": ["routes", "show"]}}}}


def _routes(sdk: Any, router: str) -> list[tuple[str, str]]:
    return sorted((r["destination"], r["nexthop"]) for r in sdk.network.get_router(router).routes)


def test_extra_route_set_create_update_replace_delete(cloud_heat: Any, sdk: Any) -> None:
    name = f"ers-{uuid.uuid4().hex[:6]}"
    first = [("10.91.0.0/24", "10.65.0.5"), ("10.92.0.0/24", "10.65.0.6")]
    cloud_heat.stacks.create(stack_name=name, template=_template(first))
    stack = settled(cloud_heat, name, "CREATE_COMPLETE", timeout=180)
    ids = physical_ids(cloud_heat, name)
    assert ids["routes"] == ids["router"]
    assert _routes(sdk, ids["router"]) == first
    shown = outputs(stack)["shown"]
    assert shown["id"] == ids["router"]
    assert sorted((r["destination"], r["nexthop"]) for r in shown["routes"]) == first
    events = [e.resource_name for e in cloud_heat.events.list(name, sort_dir="asc")
              if e.resource_status == "CREATE_COMPLETE"]
    assert events.index("iface") < events.index("routes")

    # a route of someone else's on the same router survives every change of the set
    sdk.network.add_extra_routes_to_router(ids["router"], body={"router": {"routes": [
        {"destination": "10.95.0.0/24", "nexthop": "10.65.0.9"}]}})
    second = [("10.92.0.0/24", "10.65.0.6"), ("10.93.0.0/24", "10.65.0.7")]
    cloud_heat.stacks.update(name, template=_template(second))
    settled(cloud_heat, name, "UPDATE_COMPLETE", timeout=180)
    assert physical_ids(cloud_heat, name)["routes"] == ids["routes"]     # in place
    assert _routes(sdk, ids["router"]) == sorted([*second, ("10.95.0.0/24", "10.65.0.9")])

    cloud_heat.stacks.update(name, template=_template([]))
    settled(cloud_heat, name, "UPDATE_COMPLETE", timeout=180)
    assert _routes(sdk, ids["router"]) == [("10.95.0.0/24", "10.65.0.9")]
    cloud_heat.stacks.update(name, template=_template(first))
    settled(cloud_heat, name, "UPDATE_COMPLETE", timeout=180)
    assert _routes(sdk, ids["router"]) == sorted([*first, ("10.95.0.0/24", "10.65.0.9")])

    # another router: the set is replaced (``router`` is not update_allowed)
    sdk.network.remove_extra_routes_from_router(ids["router"], body={"router": {
        "routes": [{"destination": "10.95.0.0/24", "nexthop": "10.65.0.9"}]}})
    there = [("10.91.0.0/24", "10.67.0.5")]
    cloud_heat.stacks.update(name, template=_template(there, router="router2"))
    settled(cloud_heat, name, "UPDATE_COMPLETE", timeout=180)
    moved = physical_ids(cloud_heat, name)
    assert moved["routes"] == moved["router2"] == ids["router2"]
    assert _routes(sdk, ids["router2"]) == there
    assert _routes(sdk, ids["router"]) == []

    cloud_heat.actions.check(name)
    settled(cloud_heat, name, "CHECK_COMPLETE", timeout=120)
    assert delete_and_wait(cloud_heat, name) == "DELETE_COMPLETE"
    assert find(sdk.network.find_router, ids["router2"]) is None
    assert find(sdk.network.find_router, ids["router"]) is None


def test_a_next_hop_off_the_routers_subnets_fails_with_neutrons_message(
        cloud_heat: Any) -> None:
    name = f"ers-bad-{uuid.uuid4().hex[:6]}"
    cloud_heat.stacks.create(stack_name=name,
                             template=_template([("10.96.0.0/24", "10.66.0.5")]))
    failed = settled(cloud_heat, name, "CREATE_FAILED", timeout=180)
    assert failed.stack_status_reason.startswith("Resource CREATE failed: BadRequest: "
                                                 "resources.routes: ")
    assert "10.66.0.5" in failed.stack_status_reason
    assert delete_and_wait(cloud_heat, name) == "DELETE_COMPLETE"
