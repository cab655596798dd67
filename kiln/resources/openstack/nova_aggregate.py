"""OS::Nova::HostAggregate: a group of compute hosts with metadata (and, optionally, an
availability zone of its own), admin only. Hosts and metadata change in place; the
hosts are taken out before the aggregate is deleted, as Nova requires."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kiln.resources.base import Properties, Property, SupportStatus, Token
from kiln.resources.common.cloud import custom
from kiln.resources.openstack.nova_misc import NovaResource
from kiln.template.definitions import ResourceDefinition


class HostAggregate(NovaResource):
    """A host aggregate."""

    type_name = "OS::Nova::HostAggregate"
    support_status = SupportStatus(version="6.0.0")
    collection = "os-aggregates"
    properties_schema = {
        "name": Property("string", "Name of the aggregate.", required=True,
                         update_allowed=True),
        "availability_zone": Property("string", "Availability zone the hosts form.",
                                      update_allowed=True),
        "hosts": Property("list", "Compute hosts in the aggregate.", update_allowed=True,
                          schema=Property("string", constraints=custom("nova.host"))),
        "metadata": Property("map", "Metadata of the aggregate.", default={},
                             update_allowed=True),
    }

    def live_location(self) -> tuple[str, str] | None:
        return f"/os-aggregates/{self.resource_id}", "aggregate"

    async def _action(self, action: str, body: Mapping[str, Any]) -> dict[str, Any]:
        answer = await self.api("POST", f"/os-aggregates/{self.resource_id}/action",
                                {action: body})
        aggregate: dict[str, Any] = answer["aggregate"]
        self.remember(aggregate)
        return aggregate

    async def _hosts(self, add: list[str], remove: list[str]) -> None:
        for host in remove:
            await self._action("remove_host", {"host": host})
        for host in add:
            await self._action("add_host", {"host": host})

    async def handle_create(self) -> Token:
        p = self.properties
        answer = await self.api("POST", "/os-aggregates", {"aggregate": {
            "name": p["name"], "availability_zone": p.get("availability_zone")}})
        self.resource_id = str(answer["aggregate"]["id"])
        self.remember(answer["aggregate"])
        if p.get("metadata"):
            await self._action("set_metadata", {"metadata": dict(p["metadata"])})
        await self._hosts(list(p.get("hosts") or []), [])
        return None

    async def handle_update(self, new_definition: ResourceDefinition,
                            new_properties: Properties, prop_diff: Mapping[str, Any]) -> Token:
        current = await self.fetch_live() or {}
        if "hosts" in prop_diff:
            now = list(current.get("hosts") or [])
            new = list(prop_diff["hosts"] or [])
            await self._hosts([h for h in new if h not in now],
                              [h for h in now if h not in new])
        if "metadata" in prop_diff:
            new_meta = dict(prop_diff["metadata"] or {})
            dropped = {k: None for k in (self.properties.get("metadata") or {})
                       if k not in new_meta}
            if new_meta or dropped:
                await self._action("set_metadata", {"metadata": {**dropped, **new_meta}})
        body = {k: prop_diff[k] for k in ("name", "availability_zone") if k in prop_diff}
        if body:
            answer = await self.api("PUT", f"/os-aggregates/{self.resource_id}",
                                    {"aggregate": body})
            self.remember(answer["aggregate"])
        return None

    async def handle_delete(self) -> Token:
        if self.resource_id is not None:
            current = await self.fetch_live()
            if current is not None:
                await self._hosts([], list(current.get("hosts") or []))
        return await super().handle_delete()
