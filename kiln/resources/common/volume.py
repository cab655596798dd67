"""What a Cinder volume and an attachment do, whichever family names the type:
OS::Cinder::Volume and AWS::EC2::Volume, OS::Cinder::VolumeAttachment and
AWS::EC2::VolumeAttachment create them from their own properties and share the waiting,
updating, checking and deleting here."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kiln.resources.base import Properties, ResourceFailure, Token
from kiln.resources.common.cloud import (
    OpenStackResource,
    ResourceInError,
    ResourceUnknownStatus,
)
from kiln.resources.common.lookup import find_volume, find_volume_type
from kiln.template.definitions import ResourceDefinition

#: block-storage microversion: extending an attached volume needs 3.42
MICROVERSION = "3.42"


class CinderResource(OpenStackResource):
    client_name = "cinder"
    service_type = "block-storage"
    microversion = MICROVERSION


class VolumeBase(CinderResource):
    """A block storage volume once the type has asked Cinder for it."""

    @property
    def path(self) -> str:
        return f"/volumes/{self.resource_id}"

    async def _read(self) -> dict[str, Any] | None:
        answer = await self.api("GET", self.path, ok_missing=True)
        return answer["volume"] if answer else None

    def live_location(self) -> tuple[str, str] | None:
        return self.path, "volume"

    async def _wait(self, ok: tuple[str, ...], busy: tuple[str, ...]) -> bool:
        volume = await self._read()
        if volume is None:
            raise ResourceFailure(
                f"The volume ({self.resource_id}) could not be found.", exc_type="NotFound"
            )
        status = volume.get("status")
        if status in busy:
            return False
        if status in ok:
            self.remember(volume)
            return True
        raise ResourceInError(str(status))

    async def check_create_complete(self, token: Token) -> bool:
        if not await self._wait(("available",), ("creating", "downloading", "restoring-backup")):
            return False
        if self.properties.get("read_only"):
            await self.api(
                "POST", f"{self.path}/action", {"os-update_readonly_flag": {"readonly": True}}
            )
        return True

    async def handle_update(
        self,
        new_definition: ResourceDefinition,
        new_properties: Properties,
        prop_diff: Mapping[str, Any],
    ) -> Token:
        if "name" in prop_diff or "description" in prop_diff:
            # as Heat: a name or description dropped from the template keeps the
            # volume's current one (the old property, else the physical name)
            body = {"name": prop_diff.get("name") or self.properties.get("name")
                    or self.physical_resource_name(),
                    "description": prop_diff.get("description")
                    or self.properties.get("description")}
            await self.api("PUT", self.path, {"volume": body})
        if "metadata" in prop_diff:
            await self.api(
                "PUT",
                f"{self.path}/metadata",
                {"metadata": {k: str(v) for k, v in (prop_diff["metadata"] or {}).items()}},
            )
        if "read_only" in prop_diff:
            await self.api(
                "POST",
                f"{self.path}/action",
                {"os-update_readonly_flag": {"readonly": bool(prop_diff["read_only"])}},
            )
        if prop_diff.get("volume_type"):
            new_type = await find_volume_type(self, prop_diff["volume_type"])
            await self.api(
                "POST",
                f"{self.path}/action",
                {"os-retype": {"new_type": new_type, "migration_policy": "on-demand"}},
            )
        if prop_diff.get("size"):
            current = self.shown().get("size") or self.properties.get("size")
            if current is not None and prop_diff["size"] < int(current):
                raise ResourceFailure("Shrinking volume is not supported.",
                                      exc_type="NotSupported")
            return {"extend": prop_diff["size"]}
        return None

    async def check_update_complete(self, token: Token) -> bool:
        if token and "extend" in token and not token.get("sent"):
            if not await self._wait(
                ("available", "in-use"), ("retyping", "attaching", "detaching")
            ):
                return False
            await self.api(
                "POST", f"{self.path}/action", {"os-extend": {"new_size": token["extend"]}}
            )
            self.next_token(token, sent=True)
            return False
        done = await self._wait(
            ("available", "in-use"), ("extending", "retyping", "attaching", "detaching")
        )
        if (
            done
            and token
            and "extend" in token
            and int(self.shown().get("size") or 0) < int(token["extend"])
        ):
            return False
        return done

    def object_path(self, resource_id: str) -> str | None:
        return f"/volumes/{resource_id}"

    def check_deleting(self, answer: Mapping[str, Any]) -> None:
        if answer["volume"].get("status") == "error_deleting":
            raise ResourceInError("error_deleting")

    async def handle_snapshot_delete(self, state: tuple[str, str]) -> Token:
        """``deletion_policy: Snapshot``: a Cinder backup of the volume, then the
        delete once the backup is available; as Heat, no backup of a volume whose
        create or update failed."""
        if self.resource_id is None or state in (("CREATE", "FAILED"),
                                                 ("UPDATE", "FAILED")):
            return await self.handle_delete()
        return {"backup_of": self.resource_id}

    async def check_delete_complete(self, token: Token) -> bool:
        if token and "backup_of" in token:
            return await self._backup_then_delete(token)
        return await super().check_delete_complete(token)

    async def _backup_then_delete(self, token: dict[str, Any]) -> bool:
        if "backup" not in token:
            answer = await self.api("POST", "/backups",
                                    {"backup": {"volume_id": token["backup_of"]}},
                                    ok_missing=True)
            backup = answer["backup"]["id"] if answer else None
            self.next_token(token, backup=backup)
            if backup is not None:
                return False
        elif token["backup"] is not None:
            found = await self.api("GET", f"/backups/{token['backup']}")
            status = found["backup"].get("status")
            if status == "creating":
                return False
            if status != "available":
                raise ResourceUnknownStatus(str(status), "Volume backup failed")
        deleting = await self.handle_delete()
        self.checkpoint(deleting)
        return deleting is None

    async def handle_check(self) -> Token:
        await self._wait(("available", "in-use"), ())
        return None


class AttachmentBase(CinderResource):
    """A volume attached to a server (through Nova)."""

    #: replacing means detaching first: the volume cannot be attached twice
    replace_create_first = False

    async def _volume_status(self, volume_id: str) -> str | None:
        answer = await self.api("GET", f"/volumes/{volume_id}", ok_missing=True)
        return str(answer["volume"]["status"]) if answer else None

    async def _attach(self, server: str, volume: str, device: str | None) -> None:
        body: dict[str, Any] = {"volumeId": volume}
        if device:
            body["device"] = device
        await self.api(
            "POST",
            f"/servers/{server}/os-volume_attachments",
            {"volumeAttachment": body},
            service="compute",
        )

    async def check_create_complete(self, token: Token) -> bool:
        status = await self._volume_status(token["volume"])
        if status == "in-use":
            return True
        if status in ("attaching", "available", "reserved"):
            return False
        raise ResourceInError(str(status))

    async def handle_update(
        self,
        new_definition: ResourceDefinition,
        new_properties: Properties,
        prop_diff: Mapping[str, Any],
    ) -> Token:
        await self._detach()
        return {
            "attach": [
                new_properties["instance_uuid"],
                new_properties["volume_id"],
                new_properties.get("mountpoint"),
            ]
        }

    async def check_update_complete(self, token: Token) -> bool:
        server, volume, device = token["attach"]
        if not token.get("sent"):
            if await self._volume_status(self.resource_id or "") not in ("available", None):
                return False
            volume = await find_volume(self, volume)
            await self._attach(server, volume, device)
            self.resource_id = volume
            self.data["server"] = server
            self.next_token(token, sent=True, volume=volume)
            return False
        return await self.check_create_complete(token)

    async def _detach(self) -> None:
        server = self.data.get("server") or self.properties.get("instance_uuid")
        if self.resource_id and server:
            await self.api(
                "DELETE",
                f"/servers/{server}/os-volume_attachments/{self.resource_id}",
                service="compute",
                ok_missing=True,
            )

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
