"""EngineService's stack domain users (keystone mode), for the APIs and tools: the part
below, ``self.core.identities`` (:class:`kiln.engine.actions.identity.Identities`), makes and
removes them; plugins reach the same part through their runtime.

Without Keystone (noauth and the other flavors) ``stack_user_admin`` is None and Kiln
issues its own keypairs (:mod:`kiln.engine.service.keypairs`).
"""

from __future__ import annotations

from typing import Any

from kiln.engine.model.shapes import IssuedKeypair
from kiln.engine.service.shared import ServiceCore


class StackUserOps:
    """Stack users: the API's half of :mod:`kiln.engine.actions.identity`."""

    def __init__(self, core: ServiceCore) -> None:
        self.core = core

    async def stack_user_project(self, *, stack_id: str, root_stack_id: str,
                                 owner_project_id: str) -> str:
        """The stack's user project, made (for the whole stack tree) on first use; the
        tree's top stack is found from the owners' rows (``root_stack_id`` may be empty
        for a stack built in this request)."""
        return await self.core.identities.stack_user_project(stack_id=stack_id,
                                                             owner_project_id=owner_project_id)

    async def stack_domain_user(self, *, stack_id: str, root_stack_id: str,
                                owner_project_id: str, resource_name: str, username: str,
                                password: str | None = None) -> dict[str, Any]:
        return await self.core.identities.stack_domain_user(
            stack_id=stack_id, owner_project_id=owner_project_id,
            resource_name=resource_name, username=username, password=password)

    async def stack_user_keypair(self, *, stack_id: str, root_stack_id: str,
                                 owner_project_id: str, resource_name: str,
                                 user_resource: str, username: str) -> IssuedKeypair:
        return await self.core.identities.stack_user_keypair(
            stack_id=stack_id, owner_project_id=owner_project_id,
            resource_name=resource_name, user_resource=user_resource, username=username)

    async def set_stack_user_enabled(self, *, stack_id: str, resource_name: str,
                                     enabled: bool) -> None:
        await self.core.identities.set_stack_user_enabled(stack_id=stack_id,
                                                          resource_name=resource_name,
                                                          enabled=enabled)

    async def revoke_ec2_keypair(self, access_key: str) -> bool:
        """Delete a keypair: in Keystone too when stack users live there."""
        return await self.core.identities.revoke_keypair(access_key)

    async def remove_stack_users(self, *, stack_id: str, owner_project_id: str,
                                 top_level: bool) -> None:
        await self.core.identities.remove_stack_users(stack_id=stack_id,
                                                      owner_project_id=owner_project_id,
                                                      top_level=top_level)
