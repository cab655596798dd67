"""What servers' agents poll, answered in one short read of a few columns.

os-collect-config, cfn-hup and friends ask for one resource's metadata every few seconds
from every server; the general resource show resolves every attribute and lists every
resource of the stack (for ``required_by``), which at hundreds of requests a second is
most of the machine. These reads give the same fields from one trip to the database
(``store.resources.for_agent``), and decide whether a server's own keypair may read the
resource without loading the stack, except for the rare owners whose plugin decides
(an AWS::IAM::AccessKey governed by its user's policy).
"""

from __future__ import annotations

from typing import Any

from kiln.db.records import StackRecord
from kiln.engine.model.context import RequestContext
from kiln.engine.service import replies as fmt
from kiln.engine.service import stack_user_reach
from kiln.engine.service.interface import Identity
from kiln.engine.service.keypairs import KeypairOps
from kiln.engine.service.reads import Reads
from kiln.engine.service.shapes import ResourceReply
from kiln.engine.service.shared import ResourceNotFound, ServiceCore
from kiln.errors import EntityNotFound, Forbidden, KilnError
from kiln.resources.base import Resource

JSON = dict[str, Any]


class AgentReads:
    """Reads for agents; uses ``reads``'s per-template description cache and
    asks ``keypairs`` what another resource's keypair may read."""

    def __init__(self, core: ServiceCore, reads: Reads, keypairs: KeypairOps) -> None:
        self.core = core
        self.reads = reads
        self.keypairs = keypairs

    async def resource_for_agent(self, ctx: RequestContext, stack_identity: Identity,
                                 resource_name: str, *, agent_stack_id: str | None = None,
                                 agent_owner: str | None = None) -> ResourceReply:
        """A resource as ``describe_stack_resource`` shows it (metadata and description
        included), without attributes and ``required_by``. ``agent_stack_id`` and
        ``agent_owner``: the caller is the keypair issued to that stack's resource, which
        may read only its own stack, and there what the owner allows."""
        named = stack_identity.get("stack_name")
        key = str(stack_identity.get("stack_id") or named or "")
        view = await self.core.store.resources.for_agent(
            key, resource_name, scope=None if ctx.is_admin else ctx.project_id,
            project_id=ctx.project_id, owner=agent_owner)
        rec = view.stack
        if rec is None or (named and rec.name != named):
            raise EntityNotFound(f"The Stack ({named or key}) could not be found.")
        if agent_stack_id is None:
            await stack_user_reach.confine(self.core, ctx, rec.id, resource_name, read=True)
        else:
            if rec.id != agent_stack_id:
                raise Forbidden("this keypair may only reach its own stack")
            if agent_owner is not None and agent_owner != resource_name and \
                    not await self._owner_allows(ctx, rec, view.owner_type, agent_owner,
                                                 resource_name):
                raise Forbidden(f"this keypair may not describe {resource_name}")
        if view.resource is None:
            raise ResourceNotFound.in_stack(resource_name, rec.name)
        descriptions = await self.reads.descriptions(rec)
        return fmt.resource(view.resource, rec, required_by=[], detail=True,
                            description=descriptions.get(resource_name, ""), attributes={})

    async def _owner_allows(self, ctx: RequestContext, rec: StackRecord,
                            owner_type: str | None, owner: str, resource_name: str) -> bool:
        """Whether another resource's keypair may read ``resource_name``: only where the
        owner's plugin says so (``access_allowed``); others read only themselves."""
        if owner_type is None:
            return False
        try:
            plugin = self.core.plugins(owner_type, {})
        except KilnError:
            plugin = None   # a provider template's type: ask the loaded stack
        if plugin is not None and plugin.access_allowed is Resource.access_allowed:
            return False   # the default: a keypair reads only its own resource
        return await self.keypairs.ec2_access_allowed(ctx, dict(fmt.identity(rec)), owner,
                                                      resource_name)

