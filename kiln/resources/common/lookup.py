"""Finding cloud objects a template names by name or ID: flavors, images, keypairs,
volumes, volume types, with Heat's messages when there is none or more than one."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any
from urllib.parse import quote

from kiln.resources.base import ResourceFailure
from kiln.resources.common.cloud import OpenStackResource

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


async def _cinder_named(owner: OpenStackResource, path: str, entity: str, listed: str,
                        value: str) -> tuple[str | None, list[dict[str, Any]]]:
    """(its ID, []) when *value* is the ID of a Cinder object at ``path/<value>``, else
    (None, the objects of the ``path`` listing named *value*)."""
    direct = await owner.api("GET", f"{path}/{quote(value)}", service="block-storage",
                             ok_missing=True)
    if direct:
        return str(direct[entity]["id"]), []
    listing = await owner.api("GET", path, service="block-storage")
    return None, [t for t in listing.get(listed, []) if t.get("name") == value]


async def find_volume_type(owner: OpenStackResource, value: str) -> str:
    found, named = await _cinder_named(owner, "/types", "volume_type", "volume_types", value)
    if found is not None:
        return found
    if not named:
        raise _not_found("VolumeType", value)
    return str(named[0]["id"])


#: collection paths of the Neutron objects found by name or ID
COLLECTIONS = {"network": "networks", "subnet": "subnets", "port": "ports",
               "router": "routers", "security_group": "security-groups",
               "subnetpool": "subnetpools", "qos_policy": "qos/policies",
               "address_scope": "address-scopes", "floatingip": "floatingips",
               "segment": "segments"}


async def find_id(owner: OpenStackResource, kind: str, value: str) -> str:
    """The ID of the Neutron *kind* object named or identified by *value* (Heat's
    find_resourceid_by_name_or_id, with its messages)."""
    collection = COLLECTIONS[kind]
    found = await owner.api("GET", f"/{collection}/{value}", service="network",
                            ok_missing=True)
    if found:
        return str(next(iter(found.values()))["id"])
    listing = await owner.api("GET", f"/{collection}?name={quote(value)}", service="network")
    matches = next(iter(listing.values())) if listing else []
    if not matches:
        raise ResourceFailure(f"Unable to find {kind} with name or id '{value}'",
                              exc_type="NotFound")
    if len(matches) > 1:
        raise ResourceFailure(f"Multiple {kind} matches found for name '{value}', "
                              "use an ID to be more specific.",
                              exc_type="NeutronClientNoUniqueMatch")
    return str(matches[0]["id"])


def _neutron(kind: str) -> Lookup:
    async def find(owner: OpenStackResource, value: str) -> str:
        return await find_id(owner, kind, value)
    return find




async def find_project(owner: OpenStackResource, value: str) -> str:
    """A Keystone project's ID from its ID or (unique) name."""
    direct = await owner.api("GET", f"/projects/{quote(value)}", service="identity",
                             ok_missing=True)
    if direct:
        return str(direct["project"]["id"])
    listing = await owner.api("GET", f"/projects?name={quote(value)}", service="identity")
    matches = listing.get("projects", [])
    if len(matches) != 1:
        raise _not_found("KeystoneProject", value)
    return str(matches[0]["id"])


async def find_qos_specs(owner: OpenStackResource, value: str) -> str:
    """Cinder QoS specs' ID from their ID or name."""
    found, named = await _cinder_named(owner, "/qos-specs", "qos_specs", "qos_specs", value)
    if found is not None:
        return found
    if not named:
        raise ResourceFailure(f"No QoSSpecs matching {{'name': '{value}'}}. (HTTP 404)",
                              exc_type="NotFound")
    return str(named[0]["id"])


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
    "neutron.address_scope": _neutron("address_scope"),
    "cinder.qos_specs": find_qos_specs,
    "keystone.project": find_project,
}
