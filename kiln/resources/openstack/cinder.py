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
from kiln.resources.common.cloud import (
    HIDDEN,
    custom,
)
from kiln.resources.common.lookup import find_image, find_volume, find_volume_type
from kiln.resources.common.volume import AttachmentBase, CinderResource, VolumeBase
from kiln.resources.live_state import GONE, NOT_CHECKED, LiveState, Unread, pick
from kiln.resources.translation import Replace
from kiln.template.constraints import Range
from kiln.template.definitions import ResourceDefinition


class Volume(VolumeBase):
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

    async def replaces_when_failed(self) -> bool:
        if self.resource_id is None:
            return True
        volume = await self._read()
        return volume is None or volume.get("status") in ("error", "deleting")

    # -- stack snapshots: a Cinder backup (Heat's) ----------------------------------------
    async def handle_snapshot(self) -> Token:
        answer = await self.api("POST", "/backups",
                                {"backup": {"volume_id": self.resource_id, "force": True}})
        backup = str(answer["backup"]["id"])
        self.data["backup_id"] = backup
        return {"backup": backup}

    async def check_snapshot_complete(self, token: Token) -> bool:
        found = await self.api("GET", f"/backups/{token['backup']}")
        backup = found["backup"]
        if backup.get("status") == "creating":
            return False
        if backup.get("status") == "available":
            return True
        raise ResourceFailure(str(backup.get("fail_reason")))

    async def handle_delete_snapshot(self, snapshot: Mapping[str, Any]) -> None:
        backup = (snapshot.get("resource_data") or {}).get("backup_id")
        if backup:
            await self.api("DELETE", f"/backups/{backup}", ok_missing=True)

    async def handle_restore(self, snapshot_data: Mapping[str, Any]) -> Token:
        """The snapshot's backup restored into the volume, in place."""
        backup = (snapshot_data.get("resource_data") or {}).get("backup_id")
        if not backup or self.resource_id is None:
            return None
        await self.api("POST", f"/backups/{backup}/restore",
                       {"restore": {"volume_id": self.resource_id}})
        return {"restoring": backup}

    async def check_restore_complete(self, token: Token) -> bool:
        if not token:
            return True
        return await self._wait(("available",), ("restoring-backup",))

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


class VolumeAttachment(AttachmentBase):
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

    async def handle_create(self) -> Token:
        p = self.properties
        volume = await find_volume(self, p["volume_id"])
        await self._attach(p["instance_uuid"], volume, p.get("mountpoint"))
        self.resource_id = volume
        self.data["server"] = p["instance_uuid"]
        return {"volume": volume}


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
