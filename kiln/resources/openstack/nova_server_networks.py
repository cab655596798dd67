"""How an update of a server's ``networks`` becomes interface detaches and attaches, as
Heat 27's server_network_mixin decides it.

Each old entry is first matched to the interface it made (by port, else fixed IP, else
the most specific subset of network, subnet and address), then each new entry to an
old one it still describes: ``{network: net}`` becoming ``{subnet: s}`` (the subnet
its address is on), ``{port: <the port Nova made>}`` or ``{network: net, fixed_ip:
<its address>}`` keeps the interface (and its port). Only the old entries left are
detached (an internal port Kiln made for a ``subnet`` entry is deleted right away), and
only the new entries left are attached: a port as given, an internal port for a
``subnet``, else the network (with its fixed IP). An empty list attaches the first free
port, as a server created without networks gets.
"""

from __future__ import annotations

import json
from collections.abc import Hashable, Mapping
from typing import Any, Protocol

#: the keys of a ``networks`` entry (Heat's _NETWORK_KEYS)
NETWORK_KEYS = ("uuid", "network", "fixed_ip", "port", "subnet", "port_extra_properties",
                "floating_ip", "allocate_network", "tag")
#: the keys an interface itself tells (Heat's _IFACE_MANAGED_KEYS)
MANAGED = ("port", "network", "fixed_ip", "subnet")

Net = dict[str, Any]


class Resolver(Protocol):
    """Name-or-ID lookups and the network of a subnet (the server plugin's)."""

    async def ids(self, kind: str, value: str) -> str: ...

    async def network_of_subnet(self, subnet: str) -> str: ...


def _items(net: Mapping[str, Any]) -> set[tuple[str, Hashable]]:
    return {(k, v if isinstance(v, Hashable) else json.dumps(v, sort_keys=True))
            for k, v in net.items()}


def best_match(existing: list[Net], specified: Mapping[str, Any]) -> Net | None:
    """Heat's _find_best_match: by port, else by fixed IP, else the entry of which
    *specified* is a (non-empty) subset."""
    wanted = _items(specified)
    if specified.get("port") is not None:
        return next((e for e in existing if e.get("port") == specified["port"]
                     and wanted <= _items(e)), None)
    if specified.get("fixed_ip") is not None:
        return next((e for e in existing if e.get("fixed_ip") == specified["fixed_ip"]
                     and wanted <= _items(e)), None)
    if not wanted:
        return None
    return next((e for e in existing if wanted <= _items(e)), None)


async def resolved(nets: list[Mapping[str, Any]], resolver: Resolver) -> list[Net]:
    """The entries with every key present and names turned into IDs (Heat resolves
    them by its translation rules before comparing)."""
    out: list[Net] = []
    for net in nets:
        entry: Net = {k: net.get(k) or None for k in NETWORK_KEYS}
        for key in ("network", "port", "subnet"):
            if isinstance(entry[key], str):
                entry[key] = await resolver.ids(key, entry[key])
        out.append(entry)
    return out


def interface_props(iface: Mapping[str, Any]) -> Net:
    fixed = iface.get("fixed_ips") or []
    return {"port": iface.get("port_id"), "network": iface.get("net_id"),
            "fixed_ip": fixed[0].get("ip_address") if fixed else None,
            "subnet": fixed[0].get("subnet_id") if fixed else None}


async def match_interfaces(old_nets: list[Net], interfaces: list[Mapping[str, Any]],
                           resolver: Resolver) -> None:
    """Heat's update_networks_matching_iface_port: each old entry takes the
    interface it made (its port, network, address and subnet)."""
    props = [interface_props(i) for i in interfaces]
    for old in old_nets:
        if old.get("port") is None and not old.get("network") and old.get("subnet"):
            old["network"] = await resolver.network_of_subnet(old["subnet"])
        reduced = {k: v for k, v in old.items() if k in MANAGED and v is not None}
        match = best_match(props, reduced)
        if match is not None:
            old.update(match)
            props.remove(match)


async def plan(old: list[Mapping[str, Any]] | None, new: list[Mapping[str, Any]] | None,
               interfaces: list[Mapping[str, Any]], resolver: Resolver
               ) -> tuple[list[Net], list[Net], list[Net]]:
    """(old entries to detach, new entries to attach, entries kept) for an update of
    ``networks`` from *old* to *new* with the server's *interfaces*. A detached entry
    has the ``port`` of its interface (None when no interface matched it)."""
    old_nets = await resolved(list(old or []), resolver)
    new_nets = await resolved(list(new or []), resolver)
    if not old_nets and not new_nets:
        return [], [], []
    if any(n.get("allocate_network") for n in new_nets):
        return [interface_props(i) for i in interfaces], new_nets, []
    if not old_nets or any(n.get("allocate_network") for n in old_nets):
        gone = [interface_props(i) for i in interfaces]
        return gone, new_nets or [{k: None for k in NETWORK_KEYS}], []
    await match_interfaces(old_nets, interfaces, resolver)
    kept: list[Net] = []
    for new_net in list(new_nets):
        reduced = {k: v for k, v in new_net.items() if k not in MANAGED or v is not None}
        match = best_match(old_nets, reduced)
        if match is not None:
            kept.append(match)
            new_nets.remove(new_net)
            old_nets.remove(match)
    if not new_nets and not kept:
        new_nets = [{k: None for k in NETWORK_KEYS}]  # the first free port
    return old_nets, new_nets, kept
