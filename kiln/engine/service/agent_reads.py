"""What servers' agents poll, answered from two rows: the stack's and the resource's.

os-collect-config, cfn-hup and friends ask for one resource's metadata every few seconds
from every server; the general resource show resolves every attribute and lists every
resource of the stack (for ``required_by``), which at hundreds of requests a second is
most of the machine. These reads give the same fields without either.
"""

from __future__ import annotations

from typing import Any

from kiln.db import resources as db_resources
from kiln.db import stacks as db_stacks
from kiln.db.records import ResourceRecord, StackRecord
from kiln.engine.model.context import RequestContext
from kiln.engine.service import replies as fmt
from kiln.engine.service.interface import Identity
from kiln.engine.service.mixin_base import ResourceNotFound, ServiceBase
from kiln.engine.service.replies import ResourceReply
from kiln.errors import EntityNotFound

JSON = dict[str, Any]


class AgentReads(ServiceBase):
    async def resource_for_agent(self, ctx: RequestContext, stack_identity: Identity,
                                 resource_name: str) -> ResourceReply:
        """A resource as ``describe_stack_resource`` shows it (metadata and description
        included), without attributes and ``required_by``."""
        named = stack_identity.get("stack_name")
        key = str(stack_identity.get("stack_id") or named or "")
        project = None if ctx.is_admin else ctx.project_id

        def read(s: Any) -> tuple[StackRecord | None, ResourceRecord | None]:
            # one trip to the reader thread for both rows (the rules are _find's)
            rec = db_stacks.get_stack(s, key, project_id=project) or \
                db_stacks.get_stack_by_name(s, ctx.project_id, key)
            if rec is None or (named and rec.name != named):
                return None, None
            return rec, db_resources.get_resource_by_name(s, rec.id, resource_name)

        rec, row = await self.db.run(read)
        if rec is None:
            raise EntityNotFound(f"The Stack ({named or key}) could not be found.")
        if row is None:
            raise ResourceNotFound.in_stack(resource_name, rec.name)
        descriptions = await self._descriptions(rec)  # type: ignore[attr-defined]
        return fmt.resource(row, rec, required_by=[], detail=True,
                            description=descriptions.get(resource_name, ""), attributes={})
