"""OS::Nova::Server read back for drift detection (Heat's ``parse_live_resource_data``
of a server): its name, flavor, image, keypair, metadata and tags as Nova shows them now.

A flavor or image the template names by name is compared by what it names: Nova shows
a server's flavor by name (``original_name``) and its image by ID.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from kiln.resources.base import ResourceFailure
from kiln.resources.common.lookup import find_image
from kiln.resources.live_state import GONE, NOT_CHECKED, LiveState, Unread

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
    return state


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
