"""EngineService's stack domain users (keystone mode): made on first use, gone with the stack.

A resource whose servers need credentials (kiln.engine.model.server_access) asks for its
stack user; the first ask makes the stack's user project (Heat's per-stack project in the
stack user domain, shared by the stack's nested stacks) and the user, both in Keystone
(:class:`kiln.auth.stack_users.StackUserAdmin`), and records the user (``stack_user``) so
the stack's delete removes it, its EC2 credentials and, for a top-level stack, the project.
EC2 keypairs of stack users are Keystone credentials, recorded in ``ec2_keypair`` too (the
secret encrypted) so Kiln can pre-sign URLs with them and confine them to their stack.
Without Keystone (noauth and the other flavors) none of this runs: ``stack_user_admin``
is None and Kiln issues its own keypairs (kiln.engine.service.keypairs).
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from kiln.engine.model.live_stack import IssuedKeypair
from kiln.engine.service.keypairs import keypair_view
from kiln.engine.service.shared import ServiceBase
from kiln.errors import KilnError

LOG = logging.getLogger("kiln.engine")


class StackUserFailure(KilnError):
    """Keystone refused to make or remove a stack user (the reason is Keystone's)."""

    heat_type = "Error"


class StackUserOps(ServiceBase):
    _stack_user_admin: Any = False

    @property
    def stack_user_admin(self) -> Any:
        """The Keystone side (StackUserAdmin) in keystone mode, else None."""
        if self._stack_user_admin is False:
            self._stack_user_admin = _admin_for(self.conf)
        return self._stack_user_admin

    async def stack_user_project(self, *, stack_id: str, root_stack_id: str,
                                 owner_project_id: str) -> str:
        """The stack's user project, made (for the whole stack tree) on first use; the
        resources asking at once wait for one of them to make it."""
        # the tree's top stack from the owners' rows (the root id a live stack carries
        # may be empty for a stack built in this request)
        root = await self.store.stack_users.top_stack(stack_id)
        locks: dict[str, asyncio.Lock] = self.__dict__.setdefault("_project_locks", {})
        lock = locks.setdefault(root, asyncio.Lock())
        try:
            async with lock:
                return await self._stack_user_project(stack_id, root, owner_project_id)
        finally:
            if not lock.locked() and locks.get(root) is lock:
                del locks[root]

    async def _stack_user_project(self, stack_id: str, root: str,
                                  owner_project_id: str) -> str:
        admin = self.stack_user_admin
        current = await self.store.stack_users.project_of(stack_id)
        if current:
            return str(current)
        found = await self.store.stack_users.project_of(root)
        fresh = not found
        made = str(found) if found else await _keystone(
            admin.create_project(owner_project_id, root))
        winner = await self.store.stack_users.claim_project(
            list(dict.fromkeys((root, stack_id))), made)
        if fresh and winner != made:
            await _keystone(admin.delete_project(made))
        return str(winner)

    async def stack_domain_user(self, *, stack_id: str, root_stack_id: str,
                                owner_project_id: str, resource_name: str, username: str,
                                password: str | None = None) -> dict[str, Any]:
        """The resource's stack user (made on first use); ``password`` becomes its
        password. ``user_id``, ``project_id``, ``username``, ``domain_id``, ``auth_url``."""
        admin = self.stack_user_admin
        found = await self.store.stack_users.user(stack_id, resource_name)
        if found is not None:
            user_id, project_id = found
            if password is not None:
                await _keystone(admin.set_password(user_id, password))
        else:
            project_id = await self.stack_user_project(
                stack_id=stack_id, root_stack_id=root_stack_id,
                owner_project_id=owner_project_id)
            user_id = await _keystone(admin.create_user(username, project_id, password))
            await self.store.stack_users.add_user(stack_id=stack_id,
                                                  resource_name=resource_name,
                                                  user_id=user_id, project_id=project_id)
        return {"user_id": user_id, "project_id": project_id, "username": username,
                "domain_id": await _keystone(admin.stack_domain_id()),
                "auth_url": admin.auth_url}

    async def stack_user_keypair(self, *, stack_id: str, root_stack_id: str,
                                 owner_project_id: str, resource_name: str,
                                 user_resource: str, username: str) -> IssuedKeypair:
        """A Keystone EC2 credential of ``user_resource``'s stack user, issued for
        ``resource_name`` (acting in the stack's project, on this stack only)."""
        user = await self.stack_domain_user(
            stack_id=stack_id, root_stack_id=root_stack_id,
            owner_project_id=owner_project_id, resource_name=user_resource,
            username=username)
        made = await _keystone(self.stack_user_admin.create_ec2_credential(
            user["user_id"], user["project_id"]))
        rec = await self.store.keypairs.issue(project_id=owner_project_id,
                                              user_id=user["user_id"], stack_id=stack_id,
                                              resource_name=resource_name,
                                              access_key=made.access, secret=made.secret)
        return keypair_view(rec)

    async def set_stack_user_enabled(self, *, stack_id: str, resource_name: str,
                                     enabled: bool) -> None:
        """Disable (suspend) or enable (resume) the resource's stack user, if it has
        one; its EC2 credentials follow it (Keystone refuses a disabled user's)."""
        admin = self.stack_user_admin
        if admin is None:
            return
        found = await self.store.stack_users.user(stack_id, resource_name)
        if found is not None:
            user_id, project_id = found
            await _keystone(admin.set_enabled(user_id, project_id, enabled))

    async def revoke_ec2_keypair(self, access_key: str) -> bool:
        """Delete a keypair: in Keystone too when stack users live there."""
        admin = self.stack_user_admin
        if admin is not None:
            await _keystone(admin.delete_ec2_credential(access_key))
        return bool(await self.store.keypairs.revoke(access_key))

    async def remove_stack_users(self, *, stack_id: str, owner_project_id: str,
                                 top_level: bool) -> None:
        """Delete the stack's users (their credentials go with them) and, for a
        top-level stack, its user project (never the owner's own)."""
        admin = self.stack_user_admin
        if admin is None:
            return
        for resource_name, user_id in await self.store.stack_users.users_of(stack_id):
            await _keystone(admin.delete_user(user_id))
            await self.store.stack_users.forget_user(stack_id, resource_name)
        project = await self.store.stack_users.project_of(stack_id)
        if top_level and project and project != owner_project_id:
            await _keystone(admin.delete_project(project))


async def _keystone(call: Any) -> Any:
    from kiln.auth.stack_users import StackUserError

    try:
        return await call
    except StackUserError as exc:
        raise StackUserFailure(str(exc)) from None


def _admin_for(conf: Any) -> Any:
    from oslo_config import cfg

    if not isinstance(conf, cfg.ConfigOpts):
        return None
    from kiln.conf_identity import flavor

    if flavor(conf) != "keystone":
        return None
    from kiln.auth.stack_users import StackUserAdmin

    return StackUserAdmin(conf)
