"""OS::Nova::Server read back for drift detection (Heat's ``parse_live_resource_data``
of a server): its name, flavor, image, keypair, metadata, tags and networks as Nova
shows them now.

A flavor or image the template names by name is compared by what it names: Nova shows
a server's flavor by name (``original_name``) and its image by ID.

``networks`` is compared by the server's interfaces (``os-interface``), as Heat's
``_get_live_networks`` keeps each template entry an address still matches and adds
every other address of the server: each entry is reduced to what an interface can tell
(``network``, ``port``, ``subnet``, ``fixed_ip``, names resolved to IDs) and takes the
interface that matches it best (its port, else its address, else its network and
subnet; the ports Kiln made come first). An entry left without an interface is missing
(REMOVE); an interface no entry took is extra (ADD, as ``{network, fixed_ip, port}``).
Entries that only say ``allocate_network`` are not compared. With converge, the update
then detaches the extra interfaces and attaches the missing ones.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from kiln.resources.base import ResourceFailure
from kiln.resources.common.lookup import find_id, find_image
from kiln.resources.live_state import GONE, NOT_CHECKED, LiveState, Unread
from kiln.resources.openstack.nova_server_networks import MANAGED, best_match, interface_props

if TYPE_CHECKING:
    from kiln.resources.openstack.nova_server import Server

#: template property -> the server's field
_FIELDS = (("name", "name"), ("key_name", "key_name"), ("metadata", "metadata"),
           ("tags", "tags"))


async def server_live_state(server: Server, expected: Mapping[str, Any]) -> LiveState | Unread:
    if server.resource_id is None:
        return NOT_CHECKED
    found = await server.fetch_live()
    if found is None:
        return GONE
    state = LiveState()
    for prop, field in _FIELDS:
        if prop in expected:
            state.expected[prop] = expected[prop]
            state.actual[prop] = found.get(field)
    if "tags" in state.expected:
        state.expected["tags"] = sorted(state.expected["tags"] or [])
        state.actual["tags"] = sorted(state.actual["tags"] or [])
    if expected.get("flavor"):
        state.actual["flavor"] = (found.get("flavor") or {}).get("original_name")
        state.expected["flavor"] = await _flavor_name(server, str(expected["flavor"]),
                                                      state.actual["flavor"])
    if expected.get("image"):
        image = found.get("image")
        state.actual["image"] = image.get("id") if isinstance(image, Mapping) else None
        state.expected["image"] = await _image_id(server, str(expected["image"]),
                                                  state.actual["image"])
    nets = expected.get("networks")
    if nets and not any(isinstance(n, Mapping) and n.get("allocate_network")
                        for n in nets):
        wanted = [await _resolved(server, n) for n in nets if isinstance(n, Mapping)]
        answer = await server.api("GET", f"/servers/{server.resource_id}/os-interface",
                                  ok_missing=True)
        interfaces = list((answer or {}).get("interfaceAttachments") or [])
        own = {str(p.get("id")) for p in json.loads(server.data.get("ports") or "[]")}
        state.expected["networks"], state.actual["networks"] = live_networks(
            wanted, interfaces, own)
    return state


def live_networks(wanted: Sequence[Mapping[str, Any]],
                  interfaces: Sequence[Mapping[str, Any]], own_ports: set[str],
                  ) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(expected, actual) ``networks`` of a server: *wanted* are the template's entries
    with IDs, *interfaces* Nova's ``interfaceAttachments``, *own_ports* the ports the
    server's create made (preferred when two interfaces match an entry alike)."""
    ordered = sorted(interfaces, key=lambda i: str(i.get("port_id")) not in own_ports)
    left = [interface_props(i) for i in ordered]
    expected: list[dict[str, Any]] = []
    actual: list[dict[str, Any]] = []
    for entry in wanted:
        reduced = {k: entry[k] for k in MANAGED if entry.get(k) is not None}
        if not reduced:
            continue  # a floating IP or a tag alone: nothing an interface tells
        expected.append(reduced)
        match = best_match(left, reduced)
        if match is not None:
            left.remove(match)
            actual.append({k: match.get(k) for k in reduced})
    for extra in left:
        actual.append({k: extra[k] for k in ("network", "fixed_ip", "port")
                       if extra.get(k) is not None})
    return expected, actual


async def _resolved(server: Server, entry: Mapping[str, Any]) -> dict[str, Any]:
    """*entry* with its network, port and subnet as IDs (a name that no longer resolves
    is kept: it then matches no interface)."""
    out = dict(entry)
    for key in ("network", "port", "subnet"):
        value = out.get(key)
        if isinstance(value, str) and value:
            with contextlib.suppress(ResourceFailure):
                out[key] = await find_id(server, key, value)
    return out


async def _flavor_name(server: Server, wanted: str, shown: Any) -> str:
    """The name of the flavor *wanted* names (by ID or name)."""
    if wanted == shown:
        return wanted
    found = await server.api("GET", f"/flavors/{wanted}", ok_missing=True)
    if found and isinstance(found.get("flavor"), Mapping):
        return str(found["flavor"].get("name") or wanted)
    return wanted


async def _image_id(server: Server, wanted: str, shown: Any) -> str:
    """The ID of the image *wanted* names (by ID or name)."""
    if wanted == shown:
        return wanted
    try:
        return str(await find_image(server, wanted))
    except ResourceFailure:
        return wanted
