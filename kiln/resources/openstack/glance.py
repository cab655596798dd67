"""OS::Glance::WebImage: an image Glance imports from a URL (its ``web-download``
import method), and OS::Glance::Image, which Heat 27 keeps only as a hidden
placeholder (creating from a location needed the removed Glance v1 API).

The import runs in Glance: create returns once the image is asked for, and the image is
polled until ``active`` (or, with ``active: false``, deactivated once active). Glance
leaves an image whose import failed ``queued`` and names the failed stores in
``os_glance_failed_import``; Kiln fails the resource then, where Heat waits until the
stack times out. Changes are applied with Glance's JSON-patch update, tags and members
with their own calls.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kiln.errors import StackValidationFailed
from kiln.resources.base import Properties, Property, ResourceFailure, SupportStatus, Token
from kiln.resources.common.cloud import OpenStackResource, ResourceInError
from kiln.resources.common.placeholder import Placeholder
from kiln.template.constraints import AllowedPattern, AllowedValues, Range
from kiln.template.definitions import ResourceDefinition

_UUID = ("^([0-9a-fA-F]){8}-([0-9a-fA-F]){4}-([0-9a-fA-F]){4}-([0-9a-fA-F]){4}"
         "-([0-9a-fA-F]){12}$")
_PATCH = {"Content-Type": "application/openstack-images-v2.1-json-patch"}
#: properties that are image fields, sent as they are
_FIELDS = ("name", "id", "min_disk", "min_ram", "protected", "disk_format",
           "container_format", "tags", "architecture", "kernel_id", "os_distro",
           "os_version", "owner", "visibility", "ramdisk_id")
#: fields Glance lets change after create
_MUTABLE = ("architecture", "kernel_id", "os_distro", "os_version", "owner", "protected",
            "ramdisk_id", "visibility")


def _string(description: str, **kwargs: Any) -> Property:
    return Property("string", description, **kwargs)


def _patch_op(key: str, value: Any, present: bool) -> dict[str, Any]:
    """The JSON-patch operation setting (or, for None, removing) one image property:
    Glance refuses to replace a property the image lacks."""
    if value is None:
        return {"op": "remove", "path": f"/{key}"}
    return {"op": "replace" if present else "add", "path": f"/{key}", "value": value}


class WebImage(OpenStackResource):
    """An image imported by Glance from ``location`` (http or https)."""

    type_name = "OS::Glance::WebImage"
    support_status = SupportStatus(version="12.0.0")
    client_name = "glance"
    service_type = "image"
    properties_schema = {
        "name": _string("Name of the image."),
        "id": _string("ID of the image (default: one Glance makes)."),
        "min_disk": Property("integer", "Disk space (GB) needed to boot it.", default=0,
                             constraints=[Range(min=0)]),
        "min_ram": Property("integer", "RAM (MB) needed to boot it.", default=0,
                            constraints=[Range(min=0)]),
        "protected": Property("boolean", "Whether it is protected from deletion.",
                              default=False, update_allowed=True),
        "disk_format": _string("Disk format.", required=True, constraints=[AllowedValues(
            allowed=("ami", "ari", "aki", "vhd", "vhdx", "vmdk", "raw", "qcow2", "vdi",
                     "iso", "ploop"))]),
        "container_format": _string("Container format.", required=True,
                                    constraints=[AllowedValues(allowed=(
                                        "ami", "ari", "aki", "bare", "ovf", "ova",
                                        "docker"))]),
        "location": _string("URL Glance downloads the image from.", required=True),
        "tags": Property("list", "Tags of the image.", update_allowed=True),
        "architecture": _string("CPU architecture it needs.", update_allowed=True),
        "kernel_id": _string("Kernel image of an AMI image.", update_allowed=True,
                             constraints=[AllowedPattern(pattern=_UUID)]),
        "os_distro": _string("Operating system distribution.", update_allowed=True),
        "os_version": _string("Operating system version.", update_allowed=True),
        "owner": _string("Project owning the image.", update_allowed=True),
        "extra_properties": Property("map", "More image properties.", default={},
                                     update_allowed=True),
        "visibility": _string("Who may see the image.", default="private",
                              update_allowed=True,
                              constraints=[AllowedValues(allowed=(
                                  "public", "private", "community", "shared"))]),
        "ramdisk_id": _string("Ramdisk image of an AMI image.", update_allowed=True,
                              constraints=[AllowedPattern(pattern=_UUID)]),
        "active": Property("boolean", "Whether the image is active (false: deactivated "
                                      "once imported).", default=True,
                           update_allowed=True),
        "members": Property("list", "Projects a shared image is shared with.",
                            update_allowed=True, schema=Property("string")),
    }

    def validate(self) -> None:
        super().validate()
        p = self.properties
        if p["container_format"] in ("ami", "ari", "aki") and \
                p["disk_format"] != p["container_format"]:
            raise StackValidationFailed(
                "Invalid mix of disk and container formats. When setting a disk or "
                "container format to one of 'aki', 'ari', or 'ami', the container and disk "
                "formats must match.")
        if p.get("members") and p.get("visibility") != "shared":
            raise StackValidationFailed(
                "members property should only be specified for visibility with value "
                "shared.")

    def object_path(self, resource_id: str) -> str | None:
        return f"/images/{resource_id}"

    async def _read(self) -> dict[str, Any]:
        image = await self.api("GET", f"/images/{self.resource_id}", ok_missing=True)
        if image is None or image.get("status") == "deleted":
            raise ResourceFailure(f"The image ({self.resource_id}) could not be found.",
                                  exc_type="NotFound")
        self.remember(image)
        return dict(image)

    async def handle_create(self) -> Token:
        p = self.properties
        body: dict[str, Any] = {k: p[k] for k in _FIELDS if p.get(k) is not None}
        body.update({str(k): str(v) for k, v in (p.get("extra_properties") or {}).items()})
        image = await self.api("POST", "/images", body)
        self.resource_id = str(image["id"])
        self.remember(image)
        await self.api("POST", f"/images/{self.resource_id}/import",
                       {"method": {"name": "web-download", "uri": p["location"]}})
        for member in p.get("members") or []:
            await self.api("POST", f"/images/{self.resource_id}/members",
                           {"member": member})
        return {"active": bool(p["active"])}

    async def check_create_complete(self, token: Token) -> bool:
        image = await self._read()
        status = image.get("status")
        if status == "killed":
            raise ResourceInError("killed")
        failed = image.get("os_glance_failed_import")
        if status == "queued" and failed:
            raise ResourceFailure(f"Glance could not import the image from "
                                  f"{self.properties['location']} (failed stores: "
                                  f"{failed})", exc_type="ImageImportFailed")
        if token and not token.get("active"):
            if status == "active":
                await self.api("POST", f"/images/{self.resource_id}/actions/deactivate")
                return True
            return status == "deactivated"
        return status == "active"

    async def handle_update(self, new_definition: ResourceDefinition,
                            new_properties: Properties, prop_diff: Mapping[str, Any]) -> Token:
        path = f"/images/{self.resource_id}"
        if prop_diff.get("active") is False:
            await self.api("POST", f"{path}/actions/deactivate")
        current = await self._read()
        changes: dict[str, Any] = {k: prop_diff[k] for k in _MUTABLE if k in prop_diff}
        if "extra_properties" in prop_diff:
            old = {str(k): str(v) for k, v in
                   (self.properties.get("extra_properties") or {}).items()}
            new = {str(k): str(v) for k, v in (prop_diff["extra_properties"] or {}).items()}
            changes.update({k: None for k in set(old) - set(new)})
            changes.update({k: v for k, v in new.items() if old.get(k) != v})
        ops = [_patch_op(key, value, key in current) for key, value in sorted(changes.items())
               if value is not None or key in current]
        if ops:
            await self.api("PATCH", path, ops, headers=_PATCH)
        if "tags" in prop_diff:
            old_tags = set(self.properties.get("tags") or [])
            new_tags = set(prop_diff["tags"] or [])
            for tag in sorted(new_tags - old_tags):
                await self.api("PUT", f"{path}/tags/{tag}")
            for tag in sorted(old_tags - new_tags):
                await self.api("DELETE", f"{path}/tags/{tag}", ok_missing=True)
        if "members" in prop_diff:
            old_m = set(self.properties.get("members") or [])
            new_m = set(prop_diff["members"] or [])
            for member in sorted(new_m - old_m):
                await self.api("POST", f"{path}/members", {"member": member})
            for member in sorted(old_m - new_m):
                await self.api("DELETE", f"{path}/members/{member}", ok_missing=True)
        if prop_diff.get("active") is True:
            await self.api("POST", f"{path}/actions/reactivate")
        await self._read()
        return None

    async def handle_check(self) -> Token:
        image = await self._read()
        if image.get("status") in ("killed", "deleted"):
            raise ResourceInError(str(image.get("status")))
        return None


class Image(Placeholder):
    """Heat 27's placeholder: accepts any properties, creates nothing."""

    type_name = "OS::Glance::Image"
    description = "Kept so that old templates load: creates nothing (see WebImage)."
    support_status = SupportStatus(
        status="HIDDEN", version="22.0.0",
        previous_status=SupportStatus(
            status="DEPRECATED", version="8.0.0",
            message="Creating a Glance Image based on an existing URL location requires "
                    "the Glance v1 API, which is deprecated.",
            previous_status=SupportStatus(version="2014.2")))
