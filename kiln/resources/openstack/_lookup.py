"""Finding cloud objects a template names by name or ID: flavors, images, keypairs,
volumes, volume types, with Heat's messages when there is none or more than one."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from urllib.parse import quote

from kiln.resources.base import ResourceFailure
from kiln.resources.openstack._base import OpenStackResource

Lookup = Callable[[OpenStackResource, str], Awaitable[str]]


def _not_found(entity: str, name: str) -> ResourceFailure:
    return ResourceFailure(f"The {entity} ({name}) could not be found.",
                           exc_type="EntityNotFound")


async def find_flavor(owner: OpenStackResource, value: str) -> str:
    """A flavor's ID from its ID or name."""
    direct = await owner.api("GET", f"/flavors/{quote(value)}", service="compute",
                             ok_missing=True)
    if direct:
        return str(direct["flavor"]["id"])
    listing = await owner.api("GET", "/flavors/detail?is_public=None", service="compute")
    matches = [f for f in listing["flavors"] if f["name"] == value]
    if not matches:
        raise ResourceFailure(f"No Flavor matching {{'name': '{value}'}}. (HTTP 404)",
                              exc_type="NotFound")
    return str(matches[0]["id"])


async def find_image(owner: OpenStackResource, value: str) -> str:
    """A Glance image's ID from its ID or name (a unique name)."""
    direct = await owner.api("GET", f"/images/{quote(value)}", service="image",
                             ok_missing=True)
    if direct and "id" in direct:
        return str(direct["id"])
    listing = await owner.api("GET", f"/images?name={quote(value)}", service="image")
    matches = listing.get("images", [])
    if not matches:
        raise ResourceFailure(f"No images matching {{'name': '{value}'}}.",
                              exc_type="NotFound")
    if len(matches) > 1:
        raise ResourceFailure(f"Multiple physical resources were found with name "
                              f"({value}).", exc_type="PhysicalResourceNameAmbiguity")
    return str(matches[0]["id"])


async def find_keypair(owner: OpenStackResource, value: str) -> str:
    found = await owner.api("GET", f"/os-keypairs/{quote(value)}", service="compute",
                            ok_missing=True)
    if not found:
        raise _not_found("Key", value)
    return value


async def find_volume(owner: OpenStackResource, value: str) -> str:
    direct = await owner.api("GET", f"/volumes/{quote(value)}", service="block-storage",
                             ok_missing=True)
    if direct:
        return str(direct["volume"]["id"])
    listing = await owner.api("GET", f"/volumes?name={quote(value)}",
                              service="block-storage")
    matches = listing.get("volumes", [])
    if len(matches) != 1:
        raise _not_found("Volume", value)
    return str(matches[0]["id"])


async def find_volume_type(owner: OpenStackResource, value: str) -> str:
    direct = await owner.api("GET", f"/types/{quote(value)}", service="block-storage",
                             ok_missing=True)
    if direct:
        return str(direct["volume_type"]["id"])
    listing = await owner.api("GET", "/types", service="block-storage")
    matches = [t for t in listing.get("volume_types", []) if t["name"] == value]
    if not matches:
        raise _not_found("VolumeType", value)
    return str(matches[0]["id"])


def _neutron(kind: str) -> Lookup:
    async def find(owner: OpenStackResource, value: str) -> str:
        from kiln.resources.openstack._neutron import find_id

        return await find_id(owner, kind, value)
    return find


#: Heat's custom constraints that look an object up, by constraint name
LOOKUPS: dict[str, Lookup] = {
    "nova.flavor": find_flavor,
    "nova.keypair": find_keypair,
    "glance.image": find_image,
    "cinder.volume": find_volume,
    "cinder.vtype": find_volume_type,
    "neutron.network": _neutron("network"),
    "neutron.subnet": _neutron("subnet"),
    "neutron.port": _neutron("port"),
    "neutron.router": _neutron("router"),
    "neutron.security_group": _neutron("security_group"),
    "neutron.subnetpool": _neutron("subnetpool"),
    "neutron.qos_policy": _neutron("qos_policy"),
}
