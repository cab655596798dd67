"""Identity kept for stacks: the credentials a stack's deferred work acts with (a trust,
or a stored password, kept by root stack id; :mod:`kiln.engine.runtime.acting` decides
when), the stack users made in Keystone for its servers and their user project
(:mod:`kiln.engine.actions.identity`), and the EC2 keypairs issued to its resources."""

from __future__ import annotations

import asyncio

from kiln.db import keypairs as db_keypairs
from kiln.db import stack_users as db_users
from kiln.db import user_creds as db_user_creds
from kiln.db.facade import Database
from kiln.db.records import KeypairRecord, UserCredsRecord


class CredentialStore:
    def __init__(self, db: Database) -> None:
        self._db = db

    def keep(self, creds: UserCredsRecord) -> asyncio.Future[None]:
        """Store (or replace) the stack's credentials."""
        return self._db.write(db_user_creds.store_user_creds, creds)

    async def of_stack(self, root_stack_id: str) -> UserCredsRecord | None:
        return await self._db.run(db_user_creds.get_user_creds, root_stack_id)

    def forget(self, root_stack_id: str) -> asyncio.Future[bool]:
        return self._db.write(db_user_creds.delete_user_creds, root_stack_id)


class StackUserStore:
    """Stack users (one per stack and resource name) and the stacks' user project."""

    def __init__(self, db: Database) -> None:
        self._db = db

    async def top_stack(self, stack_id: str) -> str:
        """The top stack of ``stack_id``'s tree, following each stack's owner."""
        return await self._db.run(db_users.top_stack, stack_id)

    async def project_of(self, stack_id: str) -> str | None:
        """The stack's user project (``stack_user_project_id``), if it has one."""
        return await self._db.run(db_users.user_project, stack_id)

    def claim_project(self, stack_ids: list[str], project_id: str) -> asyncio.Future[str]:
        """``project_id`` becomes the user project of the stacks (root first) that have
        none yet; the root's project, which wins a race."""
        return self._db.write(db_users.claim_user_project, stack_ids, project_id)

    async def user(self, stack_id: str, resource_name: str) -> tuple[str, str] | None:
        """(user_id, project_id) of the resource's stack user, if it has one."""
        return await self._db.run(db_users.get_user, stack_id, resource_name)

    def add_user(self, *, stack_id: str, resource_name: str, user_id: str,
                 project_id: str) -> asyncio.Future[None]:
        return self._db.write(db_users.add_user, stack_id=stack_id,
                              resource_name=resource_name, user_id=user_id,
                              project_id=project_id)

    async def users_of(self, stack_id: str) -> list[tuple[str, str]]:
        """(resource_name, user_id) of every stack user of the stack, oldest first."""
        return await self._db.run(db_users.list_users, stack_id)

    def forget_user(self, stack_id: str, resource_name: str) -> asyncio.Future[None]:
        return self._db.write(db_users.delete_user, stack_id, resource_name)


class KeypairStore:
    """EC2 keypairs issued to stacks' resources (secrets sealed at rest)."""

    def __init__(self, db: Database) -> None:
        self._db = db

    async def get(self, access_key: str) -> KeypairRecord | None:
        """The keypair with this access key, its secret unsealed."""
        return await self._db.run(db_keypairs.get_keypair, access_key)

    async def of_resource(self, stack_id: str, resource_name: str) -> list[KeypairRecord]:
        """The keypairs issued to a stack's resource, oldest first."""
        return await self._db.run(db_keypairs.list_keypairs, stack_id=stack_id,
                                  resource_name=resource_name)

    @staticmethod
    def revocations() -> int:
        """How many committed transactions of this process have deleted keypairs: a
        signature cache forgets what it holds when this moves."""
        return db_keypairs.revocations()

    def issue(self, *, project_id: str, user_id: str, stack_id: str | None,
              resource_name: str | None,
              access_key: str | None = None,
              secret: str | None = None) -> asyncio.Future[KeypairRecord]:
        """A keypair for the resource: ``access_key``/``secret`` as given (a Keystone
        credential's), else fresh random ones."""
        return self._db.write(db_keypairs.create_keypair, project_id=project_id,
                              user_id=user_id, stack_id=stack_id,
                              resource_name=resource_name, access_key=access_key,
                              secret=secret)

    def revoke(self, access_key: str) -> asyncio.Future[bool]:
        """Whether there was such a keypair (caches learn of it once committed)."""
        return self._db.write(db_keypairs.delete_keypair, access_key)
