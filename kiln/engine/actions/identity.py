"""The identities plugins are given: EC2 keypairs Kiln issues, and stack domain users.

Plugin-facing, so below the service layer and built on the store: a plugin reaches it
through its runtime (:class:`~kiln.engine.actions.nested.NestedOps`, the engine's
``PluginServices``) without the call climbing back up into EngineService, and
EngineService's keypair and stack-user methods (the CFN API checking a signature, the
API issuing credentials) are this same part.

Keypairs: issued by Kiln when no identity service issues them (a server's agents,
AWS::IAM::AccessKey, pre-signed signal URLs), deleted with their resource; a stack's
delete removes what is left. Stack users (keystone mode,
:class:`kiln.auth.stack_users.StackUserAdmin`): a resource whose servers need
credentials asks for its user; the first ask makes the stack's user project (Heat's
per-stack project in the stack user domain, shared by the stack's nested stacks) and the
user, and records the user so the stack's delete removes it, its EC2 credentials and,
for a top-level stack, the project. Their EC2 keypairs are Keystone credentials,
recorded as keypairs too (the secret encrypted) so Kiln can pre-sign URLs with them and
confine them to their stack. Without Keystone ``admin`` is None and none of the stack
user calls reach anything.
"""

from __future__ import annotations

import asyncio
from typing import Any

from kiln.db.records import KeypairRecord
from kiln.engine.model.shapes import IssuedKeypair
from kiln.engine.store import Store
from kiln.errors import KilnError


class StackUserFailure(KilnError):
    """Keystone refused to make or remove a stack user (the reason is Keystone's)."""

    heat_type = "Error"


def keypair_view(rec: KeypairRecord) -> IssuedKeypair:
    return {"access_key": rec.access_key, "secret": rec.secret,
            "project_id": rec.project_id, "user_id": rec.user_id,
            "stack_id": rec.stack_id, "resource_name": rec.resource_name}


class Identities:
    """EC2 keypairs and stack users on the store; ``admin``: the Keystone side of stack
    users (a StackUserAdmin) in keystone mode, else None."""

    def __init__(self, store: Store, admin: Any) -> None:
        self.store = store
        self.admin = admin
        #: one lock per stack tree while its user project is being made
        self._project_locks: dict[str, asyncio.Lock] = {}

    # -- EC2 keypairs --------------------------------------------------------------------
    async def find_keypair(self, access_key: str) -> IssuedKeypair | None:
        """The keypair with this access key, secret included; None if there is none."""
        if not access_key or len(access_key) > 64:
            return None
        rec = await self.store.keypairs.get(access_key)
        return None if rec is None else keypair_view(rec)

    def revocations(self) -> int:
        return self.store.keypairs.revocations()

    async def issue_keypair(self, *, project_id: str, user_id: str,
                            stack_id: str | None = None,
                            resource_name: str | None = None) -> IssuedKeypair:
        rec = await self.store.keypairs.issue(project_id=project_id, user_id=user_id,
                                              stack_id=stack_id, resource_name=resource_name)
        return keypair_view(rec)

    async def resource_keypair(self, stack_id: str,
                               resource_name: str) -> IssuedKeypair | None:
        """The oldest keypair issued for a stack's resource, if any."""
        found = await self.store.keypairs.of_resource(stack_id, resource_name)
        return keypair_view(found[0]) if found else None

    async def delete_keypair(self, access_key: str) -> bool:
        """Delete a keypair from Kiln's store only."""
        return bool(await self.store.keypairs.revoke(access_key))

    async def revoke_keypair(self, access_key: str) -> bool:
        """Delete a keypair: in Keystone too when stack users live there."""
        if self.admin is not None:
            await _keystone(self.admin.delete_ec2_credential(access_key))
        return bool(await self.store.keypairs.revoke(access_key))

    # -- stack domain users (keystone mode) ----------------------------------------------
    async def stack_user_project(self, *, stack_id: str, owner_project_id: str) -> str:
        """The stack's user project, made (for the whole stack tree) on first use; the
        resources asking at once wait for one of them to make it."""
        # the tree's top stack from the owners' rows (the root id a live stack carries
        # may be empty for a stack built in this request)
        root = await self.store.stack_users.top_stack(stack_id)
        locks = self._project_locks
        lock = locks.setdefault(root, asyncio.Lock())
        try:
            async with lock:
                return await self._stack_user_project(stack_id, root, owner_project_id)
        finally:
            if not lock.locked() and locks.get(root) is lock:
                del locks[root]

    async def _stack_user_project(self, stack_id: str, root: str,
                                  owner_project_id: str) -> str:
        admin = self.admin
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

    async def stack_domain_user(self, *, stack_id: str, owner_project_id: str,
                                resource_name: str, username: str,
                                password: str | None = None) -> dict[str, Any]:
        """The resource's stack user (made on first use); ``password`` becomes its
        password. ``user_id``, ``project_id``, ``username``, ``domain_id``, ``auth_url``."""
        admin = self.admin
        found = await self.store.stack_users.user(stack_id, resource_name)
        if found is not None:
            user_id, project_id = found
            if password is not None:
                await _keystone(admin.set_password(user_id, password))
        else:
            project_id = await self.stack_user_project(stack_id=stack_id,
                                                       owner_project_id=owner_project_id)
            user_id = await _keystone(admin.create_user(username, project_id, password))
            await self.store.stack_users.add_user(stack_id=stack_id,
                                                  resource_name=resource_name,
                                                  user_id=user_id, project_id=project_id)
        return {"user_id": user_id, "project_id": project_id, "username": username,
                "domain_id": await _keystone(admin.stack_domain_id()),
                "auth_url": admin.auth_url}

    async def stack_user_keypair(self, *, stack_id: str, owner_project_id: str,
                                 resource_name: str, user_resource: str,
                                 username: str) -> IssuedKeypair:
        """A Keystone EC2 credential of ``user_resource``'s stack user, issued for
        ``resource_name`` (acting in the stack's project, on this stack only)."""
        user = await self.stack_domain_user(
            stack_id=stack_id, owner_project_id=owner_project_id,
            resource_name=user_resource, username=username)
        made = await _keystone(self.admin.create_ec2_credential(
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
        admin = self.admin
        if admin is None:
            return
        found = await self.store.stack_users.user(stack_id, resource_name)
        if found is not None:
            user_id, project_id = found
            await _keystone(admin.set_enabled(user_id, project_id, enabled))

    async def remove_stack_users(self, *, stack_id: str, owner_project_id: str,
                                 top_level: bool) -> None:
        """Delete the stack's users (their credentials go with them) and, for a
        top-level stack, its user project (never the owner's own)."""
        admin = self.admin
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


def keystone_admin(conf: Any) -> Any:
    """The Keystone side of stack users for this configuration: a StackUserAdmin in
    keystone mode, else None (Kiln issues its own keypairs)."""
    from oslo_config import cfg

    if not isinstance(conf, cfg.ConfigOpts):
        return None
    from kiln.conf_identity import flavor

    if flavor(conf) != "keystone":
        return None
    from kiln.auth.stack_users import StackUserAdmin

    return StackUserAdmin(conf)
