"""Heat's rules for an update of a server's ``networks`` (which interfaces are kept,
detached, attached), on the cases heat-tempest-plugin's UpdateServerNetworksTest runs
against a real cloud (tests/cloud/heat_tempest.py)."""

from __future__ import annotations

from typing import Any

from kiln.resources.openstack.nova_server_networks import plan

NET, SUBNET, SUBNET_B = "net-id", "subnet-a", "subnet-b"


class Names:
    """Names are their IDs; both subnets are on NET."""

    async def ids(self, kind: str, value: str) -> str:
        return value

    async def network_of_subnet(self, subnet: str) -> str:
        return NET


def iface(port: str, ip: str, subnet: str = SUBNET) -> dict[str, Any]:
    return {"port_id": port, "net_id": NET,
            "fixed_ips": [{"subnet_id": subnet, "ip_address": ip}]}


async def _plan(old: Any, new: Any, ifaces: list[dict[str, Any]]
                ) -> tuple[list[str | None], list[dict[str, Any]], list[str | None]]:
    gone, add, kept = await plan(old, new, ifaces, Names())
    return ([g.get("port") for g in gone],
            [{k: v for k, v in a.items() if v is not None} for a in add],
            [k.get("port") for k in kept])


async def test_network_to_its_subnet_keeps_the_port() -> None:
    assert await _plan([{"network": NET}], [{"subnet": SUBNET}],
                       [iface("p0", "10.0.0.5")]) == ([], [], ["p0"])


async def test_network_to_the_port_nova_made_keeps_it() -> None:
    assert await _plan([{"network": NET}], [{"port": "p0"}],
                       [iface("p0", "10.0.0.5")]) == ([], [], ["p0"])


async def test_subnet_to_network_and_added_detail_keep_the_port() -> None:
    ifaces = [iface("p0", "10.0.0.5")]
    assert await _plan([{"subnet": SUBNET}], [{"network": NET}], ifaces) == \
        ([], [], ["p0"])
    assert await _plan([{"network": NET}], [{"network": NET, "subnet": SUBNET}],
                       ifaces) == ([], [], ["p0"])
    assert await _plan([{"network": NET}], [{"network": NET, "fixed_ip": "10.0.0.5"}],
                       ifaces) == ([], [], ["p0"])


async def test_another_subnet_detaches_and_attaches() -> None:
    gone, add, kept = await _plan([{"subnet": SUBNET}], [{"subnet": SUBNET_B}],
                                  [iface("p0", "10.0.0.5")])
    assert (gone, kept) == (["p0"], [])
    assert add == [{"subnet": SUBNET_B}]


async def test_multi_network_swap_keeps_all_three() -> None:
    ifaces = [iface("p0", "10.0.0.3"), iface("p1", "10.0.0.33"), iface("p2", "10.0.0.4")]
    old = [{"network": NET}, {"network": NET, "fixed_ip": "10.0.0.33"}, {"subnet": SUBNET}]
    new = [{"subnet": SUBNET}, {"network": NET}, {"network": NET, "subnet": SUBNET}]
    gone, add, kept = await _plan(old, new, ifaces)
    assert (gone, add) == ([], [])
    assert sorted(p or "" for p in kept) == ["p0", "p1", "p2"]


async def test_to_no_networks_attaches_the_first_free_port() -> None:
    gone, add, kept = await _plan([{"network": NET}], [], [iface("p0", "10.0.0.5")])
    assert (gone, add, kept) == (["p0"], [{}], [])
