"""EngineService's EC2 keypairs: issued by Kiln when no identity service issues them.

The CFN API finds a keypair by access key to check a signature
(:meth:`find_ec2_keypair`, no context: the signature is what authenticates); plugins
issue one per resource through their runtime (servers' agents, AWS::IAM::AccessKey,
pre-signed signal URLs) and delete it with the resource; a stack's delete removes what
is left (``db.stacks.soft_delete_stack``).
"""

from __future__ import annotations

from kiln.db.records import KeypairRecord
from kiln.engine.model.context import RequestContext
from kiln.engine.model.live_stack import IssuedKeypair
from kiln.engine.service.interface import Identity
from kiln.engine.service.shared import ServiceBase


def keypair_view(rec: KeypairRecord) -> IssuedKeypair:
    return {"access_key": rec.access_key, "secret": rec.secret,
            "project_id": rec.project_id, "user_id": rec.user_id,
            "stack_id": rec.stack_id, "resource_name": rec.resource_name}


class KeypairOps(ServiceBase):
    async def find_ec2_keypair(self, access_key: str) -> IssuedKeypair | None:
        """The keypair with this access key, secret included; None if there is none."""
        if not access_key or len(access_key) > 64:
            return None
        rec = await self.store.keypairs.get(access_key)
        return None if rec is None else keypair_view(rec)

    def ec2_keypair_revocations(self) -> int:
        return self.store.keypairs.revocations()

    async def issue_ec2_keypair(self, *, project_id: str, user_id: str,
                                stack_id: str | None = None,
                                resource_name: str | None = None) -> IssuedKeypair:
        rec = await self.store.keypairs.issue(project_id=project_id, user_id=user_id,
                                              stack_id=stack_id, resource_name=resource_name)
        return keypair_view(rec)

    async def resource_ec2_keypair(self, stack_id: str,
                                   resource_name: str) -> IssuedKeypair | None:
        """The oldest keypair issued for a stack's resource, if any."""
        found = await self.store.keypairs.of_resource(stack_id, resource_name)
        return keypair_view(found[0]) if found else None

    async def ec2_access_allowed(self, ctx: RequestContext, stack_identity: Identity,
                                 owner: str, resource_name: str) -> bool:
        """Whether the keypair issued to the stack's resource *owner* may describe
        *resource_name* (Heat's ``access_allowed`` handlers): an AWS::IAM::AccessKey as
        its user's AccessPolicy says, any other owner (a server, a handle) only itself."""
        rec = await self._find(ctx, stack_identity)
        stack = await self.engine.load(rec.id)
        slot = stack.slots.get(owner)
        if slot is None:
            return False
        return slot.plugin.access_allowed(resource_name)

    async def delete_ec2_keypair(self, access_key: str) -> bool:
        return bool(await self.store.keypairs.revoke(access_key))
