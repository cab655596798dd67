"""EngineService's EC2 keypairs, for the APIs: the part below, ``self.core.identities``
(:class:`kiln.engine.actions.identity.Identities`), keeps them; plugins reach the same
part through their runtime, not through this service.

The CFN API finds a keypair by access key to check a signature
(:meth:`find_ec2_keypair`, no context: the signature is what authenticates); a stack's
delete removes what is left (``db.stacks.soft_delete_stack``).
"""

from __future__ import annotations

from kiln.engine.model.context import RequestContext
from kiln.engine.model.shapes import IssuedKeypair
from kiln.engine.service.interface import Identity
from kiln.engine.service.shared import ServiceCore


class KeypairOps:
    """EC2 keypairs: the API's half of :mod:`kiln.engine.actions.identity`."""

    def __init__(self, core: ServiceCore) -> None:
        self.core = core

    async def find_ec2_keypair(self, access_key: str) -> IssuedKeypair | None:
        """The keypair with this access key, secret included; None if there is none."""
        return await self.core.identities.find_keypair(access_key)

    def ec2_keypair_revocations(self) -> int:
        return self.core.identities.revocations()

    async def issue_ec2_keypair(self, *, project_id: str, user_id: str,
                                stack_id: str | None = None,
                                resource_name: str | None = None) -> IssuedKeypair:
        return await self.core.identities.issue_keypair(project_id=project_id, user_id=user_id,
                                                        stack_id=stack_id,
                                                        resource_name=resource_name)

    async def resource_ec2_keypair(self, stack_id: str,
                                   resource_name: str) -> IssuedKeypair | None:
        """The oldest keypair issued for a stack's resource, if any."""
        return await self.core.identities.resource_keypair(stack_id, resource_name)

    async def ec2_access_allowed(self, ctx: RequestContext, stack_identity: Identity,
                                 owner: str, resource_name: str) -> bool:
        """Whether the keypair issued to the stack's resource *owner* may describe
        *resource_name* (Heat's ``access_allowed`` handlers): an AWS::IAM::AccessKey as
        its user's AccessPolicy says, any other owner (a server, a handle) only itself."""
        rec = await self.core.find(ctx, stack_identity)
        stack = await self.core.engine.load(rec.id)
        slot = stack.slots.get(owner)
        if slot is None:
            return False
        return slot.plugin.access_allowed(resource_name)

    async def delete_ec2_keypair(self, access_key: str) -> bool:
        return await self.core.identities.delete_keypair(access_key)
