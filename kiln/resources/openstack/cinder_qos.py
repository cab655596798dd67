"""OS::Cinder::QoSSpecs, OS::Cinder::QoSAssociation and OS::Cinder::EncryptedVolumeType:
the admin-only objects that shape volume types."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kiln.resources.base import Properties, Property, SupportStatus, Token
from kiln.resources.common.cloud import custom
from kiln.resources.common.lookup import find_qos_specs, find_volume_type
from kiln.resources.common.volume import CinderResource
from kiln.template.constraints import AllowedValues
from kiln.template.definitions import ResourceDefinition


def _text(specs: Mapping[str, Any]) -> dict[str, str]:
    return {str(k): str(v) for k, v in specs.items()}


class QoSSpecs(CinderResource):
    """Quality-of-service specs (key/value pairs) that volume types can be given."""

    type_name = "OS::Cinder::QoSSpecs"
    support_status = SupportStatus(version="7.0.0")
    properties_schema = {
        "name": Property("string", "Name of the specs (default: the physical name)."),
        "specs": Property("map", "The specs.", required=True, update_allowed=True),
    }

    def object_path(self, resource_id: str) -> str | None:
        return f"/qos-specs/{resource_id}"

    def live_location(self) -> tuple[str, str] | None:
        return f"/qos-specs/{self.resource_id}", "qos_specs"

    async def handle_create(self) -> Token:
        body = {"name": self.properties.get("name") or self.physical_resource_name(),
                **_text(self.properties["specs"])}
        answer = await self.api("POST", "/qos-specs", {"qos_specs": body})
        self.resource_id = str(answer["qos_specs"]["id"])
        return None

    async def handle_update(self, new_definition: ResourceDefinition,
                            new_properties: Properties, prop_diff: Mapping[str, Any]) -> Token:
        if "specs" not in prop_diff:
            return None
        old = _text(self.properties.get("specs") or {})
        new = _text(prop_diff["specs"] or {})
        changed = {k: v for k, v in new.items() if old.get(k) != v}
        if changed:
            await self.api("PUT", f"/qos-specs/{self.resource_id}", {"qos_specs": changed})
        dropped = sorted(set(old) - set(new))
        if dropped:
            await self.api("PUT", f"/qos-specs/{self.resource_id}/delete_keys",
                           {"keys": dropped})
        return None

    async def handle_delete(self) -> Token:
        if self.resource_id is not None:
            await self.api("GET", f"/qos-specs/{self.resource_id}/disassociate_all",
                           ok_missing=True)
        return await super().handle_delete()


class QoSAssociation(CinderResource):
    """Gives volume types a set of QoS specs."""

    type_name = "OS::Cinder::QoSAssociation"
    support_status = SupportStatus(version="8.0.0")
    properties_schema = {
        "qos_specs": Property("string", "The QoS specs (name or ID).", required=True,
                              constraints=custom("cinder.qos_specs")),
        "volume_types": Property("list", "The volume types (names or IDs).", required=True,
                                 update_allowed=True,
                                 schema=Property("string", constraints=custom(
                                     "cinder.vtype"))),
    }

    async def _associate(self, action: str, specs: str, types: list[str]) -> None:
        for vtype in types:
            type_id = await find_volume_type(self, vtype)
            await self.api("GET", f"/qos-specs/{specs}/{action}?vol_type_id={type_id}",
                           ok_missing=action == "disassociate")

    async def handle_create(self) -> Token:
        specs = await find_qos_specs(self, self.properties["qos_specs"])
        self.data["qos_specs"] = specs
        await self._associate("associate", specs, list(self.properties["volume_types"]))
        self.resource_id = self.physical_resource_name()
        return None

    async def handle_update(self, new_definition: ResourceDefinition,
                            new_properties: Properties, prop_diff: Mapping[str, Any]) -> Token:
        specs = self.data.get("qos_specs") or ""
        old = list(self.properties.get("volume_types") or [])
        new = list(new_properties.get("volume_types") or [])
        await self._associate("associate", specs, [t for t in new if t not in old])
        await self._associate("disassociate", specs, [t for t in old if t not in new])
        return None

    async def handle_delete(self) -> Token:
        specs = self.data.get("qos_specs")
        if specs:
            await self._associate("disassociate", specs,
                                  list(self.properties.get("volume_types") or []))
        return None


class EncryptedVolumeType(CinderResource):
    """Makes the volumes of a volume type encrypted (its ID is the type's)."""

    type_name = "OS::Cinder::EncryptedVolumeType"
    support_status = SupportStatus(version="5.0.0")
    properties_schema = {
        "provider": Property("string", "The encryption provider class (e.g. luks).",
                             required=True, update_allowed=True),
        "cipher": Property("string", "The encryption algorithm.", update_allowed=True,
                           constraints=[AllowedValues(allowed=("aes-xts-plain64",
                                                               "aes-cbc-essiv"))]),
        "key_size": Property("integer", "Key size in bits.", update_allowed=True),
        "control_location": Property("string", "Where encryption is done.",
                                     default="front-end", update_allowed=True,
                                     constraints=[AllowedValues(allowed=("front-end",
                                                                         "back-end"))]),
        "volume_type": Property("string", "The volume type (name or ID).", required=True,
                                constraints=custom("cinder.vtype")),
    }

    def _spec(self, values: Mapping[str, Any]) -> dict[str, Any]:
        return {k: values[k] for k in ("provider", "cipher", "key_size", "control_location")
                if k in values}

    async def handle_create(self) -> Token:
        type_id = await find_volume_type(self, self.properties["volume_type"])
        await self.api("POST", f"/types/{type_id}/encryption",
                       {"encryption": self._spec(self.properties)})
        self.resource_id = type_id
        return None

    async def handle_update(self, new_definition: ResourceDefinition,
                            new_properties: Properties, prop_diff: Mapping[str, Any]) -> Token:
        spec = self._spec(prop_diff)
        if spec:
            await self.api("PUT", f"/types/{self.resource_id}/encryption/provider",
                           {"encryption": spec})
        return None

    async def handle_delete(self) -> Token:
        if self.resource_id is not None:
            await self.api("DELETE", f"/types/{self.resource_id}/encryption/provider",
                           ok_missing=True)
        return None
