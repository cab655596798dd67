"""EngineService.temp_url_resource: what the API needs to serve a temp URL
(:mod:`kiln.api.tempurl`).

A temp URL names a stack by id and a resource by name and carries its own credential, so
the lookup is not confined to a caller's project: the API checks that the project in the
URL is the stack's and that the signature verifies with the resource's key.
"""

from __future__ import annotations

import datetime as dt
import math

from kiln.engine.service.shared import ServiceCore
from kiln.tempurl import Published


def _epoch(value: dt.datetime) -> float:
    if value.tzinfo is None:
        value = value.replace(tzinfo=dt.UTC)
    return value.timestamp()


class TempUrlOps:
    """What a temp URL names, for the API to serve it."""

    def __init__(self, core: ServiceCore) -> None:
        self.core = core

    async def temp_url_resource(self, stack_id: str, resource_name: str) -> Published | None:
        """The live resource behind a temp URL, or None when the stack or resource is gone
        (deleted, or a stack that was replaced by another of the same name)."""
        found = await self.core.store.resources.in_stack(stack_id, resource_name)
        if found is None:
            return None
        stack, row = found
        if row is None or (row.action == "DELETE" and row.status == "COMPLETE"):
            return None
        changed = row.updated_at or row.created_at
        # Swift rounds an object's Last-Modified up to the next whole second
        return Published(project_id=stack.project_id, stack_name=stack.name,
                         key=row.data.get("temp_url_key"),
                         metadata=row.shown_metadata() or {},
                         last_modified=float(math.ceil(_epoch(changed))))
