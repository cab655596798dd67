"""OS::Cinder::Volume, OS::Cinder::VolumeAttachment and OS::Cinder::VolumeType."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from kiln.resources.base import (
    Attribute,
    Properties,
    Property,
    ResourceFailure,
    SupportStatus,
    Token,
)
from kiln.resources.live_state import GONE, NOT_CHECKED, LiveState, Unread, pick
from kiln.resources.openstack._base import (
    HIDDEN,
    OpenStackResource,
    ResourceInError,
    custom,
)
from kiln.resources.openstack._lookup import find_image, find_volume, find_volume_type
from kiln.resources.translation import Replace
from kiln.template.constraints import Range
from kiln.template.definitions import ResourceDefinition

#: block-storage microversion: extending an attached volume needs 3.42
MICROVERSION = "3.42"


class CinderResource(OpenStackResource):
    client_name = "cinder"
    service_type = "block-storage"
    microversion = MICROVERSION


class Volume(CinderResource):
    """A block storage volume: empty, or from an image, a snapshot, a volume or a
    backup. A bigger ``size`` extends it and a new ``volume_type`` retypes it, in place."""

    type_name = "OS::Cinder::Volume"
    translation_rules = (Replace(("image",), "imageRef"),)
    live_attributes = frozenset({"status", "attachments", "attachments_list"})
    properties_schema = {
        "availability_zone": Property("string", "Availability zone of the volume."),
        "size": Property("integer", "Size in GB (extending is in place; shrinking is not "
                                    "possible).", update_allowed=True,
                         constraints=[Range(min=1)]),
        "snapshot_id": Property("string", "Snapshot to make the volume from.",
                                constraints=custom("cinder.snapshot")),
        "backup_id": Property("string", "Backup to restore into the volume.",
                              update_allowed=True, constraints=custom("cinder.backup")),
        "name": Property("string", "Name of the volume.", update_allowed=True),
        "description": Property("string", "Description of the volume.",
                                update_allowed=True),
        "volume_type": Property("string", "Volume type (a change retypes the volume).",
                                update_allowed=True, constraints=custom("cinder.vtype")),
        "metadata": Property("map", "Key/value metadata.", default={}, update_allowed=True),
        "imageRef": Property("string", "Deprecated: use image.", support_status=HIDDEN),
        "image": Property("string", "Image to make the volume from.",
                          constraints=custom("glance.image")),
        "source_volid": Property("string", "Volume to clone.",
                                 constraints=custom("cinder.volume")),
        "scheduler_hints": Property("map", "Hints for the scheduler."),
        "read_only": Property("boolean", "Whether the volume is read-only.",
                              update_allowed=True),
        "multiattach": Property("boolean", "Removed: use a multiattach volume type.",
                                default=False, support_status=HIDDEN),
    }
    attributes_schema = {
        "availability_zone": Attribute("The volume's availability zone.", "string"),
        "size": Attribute("Size in GB.", "string"),
        "snapshot_id": Attribute("The snapshot it was made from.", "string"),
        "display_name": Attribute("Name of the volume.", "string"),
        "display_description": Attribute("Description of the volume.", "string"),
        "volume_type": Attribute("The volume type.", "string"),
        "metadata": Attribute("Metadata as a JSON string.", "string"),
        "source_volid": Attribute("The volume it was cloned from.", "string"),
        "status": Attribute("The volume's status.", "string"),
        "created_at": Attribute("When the volume was created.", "string"),
        "bootable": Attribute("Whether the volume is bootable.", "string"),
        "metadata_values": Attribute("Metadata as a map.", "map"),
        "encrypted": Attribute("Whether the volume is encrypted.", "string"),
        "attachments": Attribute("Attachments as a JSON string.", "string"),
        "attachments_list": Attribute("Attachments as a list.", "list"),
        "multiattach": Attribute("Whether it can be attached to several servers.",
                                 "boolean"),
    }

    @property
    def path(self) -> str:
        return f"/volumes/{self.resource_id}"

    async def handle_create(self) -> Token:
        p = self.properties
        if p.get("backup_id"):
            answer = await self.api("POST", f"/backups/{p['backup_id']}/restore",
                                    {"restore": {"name": p.get("name")}})
            self.resource_id = str(answer["restore"]["volume_id"])
            return {"then": "settle"}
        body: dict[str, Any] = {"size": p.get("size"),
                                "name": p.get("name") or self.physical_resource_name()}
        for key in ("availability_zone", "snapshot_id", "description"):
            if p.get(key):
                body[key] = p[key]
        if p.get("volume_type"):
            body["volume_type"] = await find_volume_type(self, p["volume_type"])
        if p.get("metadata"):
            body["metadata"] = {k: str(v) for k, v in p["metadata"].items()}
        image = p.get("image")
        if image:
            body["imageRef"] = await find_image(self, image)
        if p.get("source_volid"):
            body["source_volid"] = await find_volume(self, p["source_volid"])
        request: dict[str, Any] = {"volume": body}
        if p.get("scheduler_hints"):
            request["OS-SCH-HNT:scheduler_hints"] = dict(p["scheduler_hints"])
        answer = await self.api("POST", "/volumes", request)
        self.resource_id = str(answer["volume"]["id"])
        return {"then": "settle"}

    async def _read(self) -> dict[str, Any] | None:
        answer = await self.api("GET", self.path, ok_missing=True)
        return answer["volume"] if answer else None

    def live_location(self) -> tuple[str, str] | None:
        return self.path, "volume"

    async def live_state(self, expected: Mapping[str, Any]) -> LiveState | Unread:
        """The volume's name, description, size, type, zone and metadata now."""
        if self.resource_id is None:
            return NOT_CHECKED
        found = await self._read()
        if found is None:
            return GONE
        return pick(found, (("name", "name"), ("description", "description"),
                            ("size", "size"), ("volume_type", "volume_type"),
                            ("availability_zone", "availability_zone"),
                            ("metadata", "metadata")), expected)

    async def _wait(self, ok: tuple[str, ...], busy: tuple[str, ...]) -> bool:
        volume = await self._read()
        if volume is None:
            raise ResourceFailure(f"The volume ({self.resource_id}) could not be found.",
                                  exc_type="NotFound")
        status = volume.get("status")
        if status in busy:
            return False
        if status in ok:
            self.remember(volume)
            return True
        raise ResourceInError(str(status))

    async def check_create_complete(self, token: Token) -> bool:
        if not await self._wait(("available",), ("creating", "downloading",
                                                 "restoring-backup")):
            return False
        if self.properties.get("read_only"):
            await self.api("POST", f"{self.path}/action",
                           {"os-update_readonly_flag": {"readonly": True}})
        return True

    async def handle_update(self, new_definition: ResourceDefinition,
                            new_properties: Properties, prop_diff: Mapping[str, Any]) -> Token:
        body = {k: prop_diff[k] for k in ("name", "description") if k in prop_diff}
        if body:
            await self.api("PUT", self.path, {"volume": body})
        if "metadata" in prop_diff:
            await self.api("PUT", f"{self.path}/metadata", {"metadata": {
                k: str(v) for k, v in (prop_diff["metadata"] or {}).items()}})
        if "read_only" in prop_diff:
            await self.api("POST", f"{self.path}/action", {"os-update_readonly_flag": {
                "readonly": bool(prop_diff["read_only"])}})
        if prop_diff.get("volume_type"):
            new_type = await find_volume_type(self, prop_diff["volume_type"])
            await self.api("POST", f"{self.path}/action", {"os-retype": {
                "new_type": new_type, "migration_policy": "on-demand"}})
        if prop_diff.get("size"):
            current = self.shown().get("size") or self.properties.get("size")
            if current is not None and prop_diff["size"] < int(current):
                raise ResourceFailure(
                    f"The size of the volume can not be decreased (from {current} to "
                    f"{prop_diff['size']}).", exc_type="NotSupported")
            return {"extend": prop_diff["size"]}
        return None

    async def check_update_complete(self, token: Token) -> bool:
        if token and "extend" in token and not token.get("sent"):
            if not await self._wait(("available", "in-use"), ("retyping", "attaching",
                                                              "detaching")):
                return False
            await self.api("POST", f"{self.path}/action",
                           {"os-extend": {"new_size": token["extend"]}})
            token["sent"] = True
            return False
        done = await self._wait(("available", "in-use"), ("extending", "retyping",
                                                          "attaching", "detaching"))
        if done and token and "extend" in token and \
                int(self.shown().get("size") or 0) < int(token["extend"]):
            return False
        return done

    def object_path(self, resource_id: str) -> str | None:
        return f"/volumes/{resource_id}"

    def check_deleting(self, answer: Mapping[str, Any]) -> None:
        if answer["volume"].get("status") == "error_deleting":
            raise ResourceInError("error_deleting")

    async def handle_check(self) -> Token:
        await self._wait(("available", "in-use"), ())
        return None

    def resolve_attribute(self, name: str) -> Any:
        volume = self.shown()
        if name == "display_name":
            return volume.get("name")
        if name == "display_description":
            return volume.get("description")
        if name == "metadata":
            return json.dumps(volume.get("metadata") or {})
        if name == "metadata_values":
            return volume.get("metadata") or {}
        if name == "attachments":
            return json.dumps(volume.get("attachments") or [])
        if name == "attachments_list":
            return volume.get("attachments") or []
        # as Heat 27: every other attribute is the text of Cinder's value ("1", "false",
        # "False", "None"), whatever the type its schema names
        return str(volume.get(name))


class VolumeAttachment(CinderResource):
    """Attaches a volume to a server (through Nova)."""

    type_name = "OS::Cinder::VolumeAttachment"
    properties_schema = {
        "instance_uuid": Property("string", "The server's ID.", required=True,
                                  update_allowed=True),
        "volume_id": Property("string", "The volume's ID.", required=True,
                              update_allowed=True, constraints=custom("cinder.volume")),
        "mountpoint": Property("string", "Device name in the server (e.g. /dev/vdb).",
                               update_allowed=True),
    }
    #: replacing means detaching first: the volume cannot be attached twice
    replace_create_first = False

    async def _volume_status(self, volume_id: str) -> str | None:
        answer = await self.api("GET", f"/volumes/{volume_id}", ok_missing=True)
        return str(answer["volume"]["status"]) if answer else None

    async def _attach(self, server: str, volume: str, device: str | None) -> None:
        body: dict[str, Any] = {"volumeId": volume}
        if device:
            body["device"] = device
        await self.api("POST", f"/servers/{server}/os-volume_attachments",
                       {"volumeAttachment": body}, service="compute")

    async def handle_create(self) -> Token:
        p = self.properties
        volume = await find_volume(self, p["volume_id"])
        await self._attach(p["instance_uuid"], volume, p.get("mountpoint"))
        self.resource_id = volume
        self.data["server"] = p["instance_uuid"]
        return {"volume": volume}

    async def check_create_complete(self, token: Token) -> bool:
        status = await self._volume_status(token["volume"])
        if status == "in-use":
            return True
        if status in ("attaching", "available", "reserved"):
            return False
        raise ResourceInError(str(status))

    async def handle_update(self, new_definition: ResourceDefinition,
                            new_properties: Properties, prop_diff: Mapping[str, Any]) -> Token:
        await self._detach()
        return {"attach": [new_properties["instance_uuid"], new_properties["volume_id"],
                           new_properties.get("mountpoint")]}

    async def check_update_complete(self, token: Token) -> bool:
        server, volume, device = token["attach"]
        if not token.get("sent"):
            if await self._volume_status(self.resource_id or "") not in ("available", None):
                return False
            volume = await find_volume(self, volume)
            await self._attach(server, volume, device)
            self.resource_id = volume
            self.data["server"] = server
            token["sent"] = True
            token["volume"] = volume
            return False
        return await self.check_create_complete(token)

    async def _detach(self) -> None:
        server = self.data.get("server") or self.properties.get("instance_uuid")
        if self.resource_id and server:
            await self.api("DELETE", f"/servers/{server}/os-volume_attachments/"
                                     f"{self.resource_id}", service="compute",
                           ok_missing=True)

    async def handle_delete(self) -> Token:
        if not self.resource_id:
            return None
        await self._detach()
        return {"volume": self.resource_id}

    async def check_delete_complete(self, token: Token) -> bool:
        if not token:
            return True
        status = await self._volume_status(token["volume"])
        return status in (None, "available", "error", "deleting")


class VolumeType(CinderResource):
    """A volume type (admin only), with extra specs and, when private, the projects
    that may use it."""

    type_name = "OS::Cinder::VolumeType"
    support_status = SupportStatus(version="2015.1")
    properties_schema = {
        "name": Property("string", "Name of the type.", required=True, update_allowed=True),
        "metadata": Property("map", "Extra specs of the type.", update_allowed=True),
        "is_public": Property("boolean", "Whether every project may use it.", default=True,
                              update_allowed=True),
        "description": Property("string", "Description of the type.", update_allowed=True),
        "projects": Property("list", "Projects given access to a private type.", default=[],
                             update_allowed=True,
                             schema=Property("string",
                                             constraints=custom("keystone.project"))),
    }

    async def handle_create(self) -> Token:
        p = self.properties
        body: dict[str, Any] = {"name": p["name"],
                                "os-volume-type-access:is_public": p["is_public"]}
        if p.get("description"):
            body["description"] = p["description"]
        answer = await self.api("POST", "/types", {"volume_type": body})
        self.resource_id = str(answer["volume_type"]["id"])
        if p.get("metadata"):
            await self.api("POST", f"/types/{self.resource_id}/extra_specs",
                           {"extra_specs": {k: str(v) for k, v in p["metadata"].items()}})
        for project in p.get("projects") or []:
            await self._access("addProjectAccess", project)
        return None

    async def _access(self, action: str, project: str) -> None:
        await self.api("POST", f"/types/{self.resource_id}/action",
                       {action: {"project": project}})

    async def handle_update(self, new_definition: ResourceDefinition,
                            new_properties: Properties, prop_diff: Mapping[str, Any]) -> Token:
        body: dict[str, Any] = {}
        for key, field in (("name", "name"), ("description", "description"),
                           ("is_public", "is_public")):
            if key in prop_diff:
                body[field] = prop_diff[key]
        if body:
            await self.api("PUT", f"/types/{self.resource_id}", {"volume_type": body})
        if "metadata" in prop_diff:
            old = self.properties.get("metadata") or {}
            new = prop_diff["metadata"] or {}
            for key in set(old) - set(new):
                await self.api("DELETE", f"/types/{self.resource_id}/extra_specs/{key}",
                               ok_missing=True)
            if new:
                await self.api("POST", f"/types/{self.resource_id}/extra_specs",
                               {"extra_specs": {k: str(v) for k, v in new.items()}})
        if "projects" in prop_diff:
            old_p = set(self.properties.get("projects") or [])
            new_p = set(prop_diff["projects"] or [])
            for project in old_p - new_p:
                await self._access("removeProjectAccess", project)
            for project in new_p - old_p:
                await self._access("addProjectAccess", project)
        return None

    def object_path(self, resource_id: str) -> str | None:
        return f"/types/{resource_id}"
