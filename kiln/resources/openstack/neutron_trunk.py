"""OS::Neutron::Trunk: a parent port carrying VLAN sub-ports (Neutron's ``trunk``
extension). A sub-port change removes the dropped ones before adding the new ones: a
port cannot be two sub-ports at once."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kiln.resources.base import Attribute, Properties, Property, SupportStatus
from kiln.resources.openstack._neutron import NeutronResource, ref_property
from kiln.template.constraints import AllowedValues, Range


def _sub_key(sub: Mapping[str, Any]) -> tuple[Any, ...]:
    return (sub["port"], sub["segmentation_type"], sub["segmentation_id"])


class Trunk(NeutronResource):
    """A trunk on a parent port; ``sub_ports`` change in place."""

    type_name = "OS::Neutron::Trunk"
    support_status = SupportStatus(version="9.0.0")
    entity = "trunk"
    collection = "trunks"
    required_extension = ("trunk",)
    has_status = True
    api_names = {"port": ("port_id", "port")}
    not_sent = frozenset({"sub_ports"})
    properties_schema = {
        "name": Property("string", "Name of the trunk (default: the physical name).",
                         update_allowed=True),
        "description": Property("string", "Description of the trunk.",
                                update_allowed=True),
        "admin_state_up": Property("boolean", "Whether the trunk is up.",
                                   update_allowed=True),
        "port": Property("string", "The parent port (name or ID).", required=True,
                         immutable=True, constraints=ref_property("port", "").constraints),
        "sub_ports": Property("list", "The sub-ports, each a port with its VLAN.",
                              update_allowed=True, schema=Property("map", schema={
                                  "port": ref_property("port", "The sub-port (name or ID).",
                                                       required=True),
                                  "segmentation_type": Property(
                                      "string", "Segmentation type.", required=True,
                                      constraints=[AllowedValues(allowed=("vlan",))]),
                                  "segmentation_id": Property(
                                      "integer", "The VLAN ID.", required=True,
                                      constraints=[Range(min=1, max=4094)]),
                              })),
    }
    attributes_schema = {
        "port_id": Attribute("The parent port's ID.", "string"),
    }

    async def _subports(self, subs: list[Mapping[str, Any]], *,
                        full: bool = True) -> list[dict[str, Any]]:
        out = []
        for sub in subs:
            item: dict[str, Any] = {"port_id": await self.find_id("port", sub["port"])}
            if full:
                item["segmentation_type"] = sub["segmentation_type"]
                item["segmentation_id"] = sub["segmentation_id"]
            out.append(item)
        return out

    async def create_body(self) -> dict[str, Any]:
        body = await super().create_body()
        subs = self.properties.get("sub_ports")
        if subs:
            body["sub_ports"] = await self._subports(subs)
        return body

    async def update_extra(self, diff: dict[str, Any], new_properties: Properties) -> None:
        if "sub_ports" not in diff:
            return
        new = list(diff.pop("sub_ports") or [])
        old = list(self.properties.get("sub_ports") or [])
        new_keys = {_sub_key(s) for s in new}
        old_keys = {_sub_key(s) for s in old}
        gone = [s for s in old if _sub_key(s) not in new_keys]
        added = [s for s in new if _sub_key(s) not in old_keys]
        if gone:
            await self.api("PUT", f"{self.path}/remove_subports",
                           {"sub_ports": await self._subports(gone, full=False)})
        if added:
            await self.api("PUT", f"{self.path}/add_subports",
                           {"sub_ports": await self._subports(added)})
