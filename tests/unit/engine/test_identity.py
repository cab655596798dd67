"""The identities plugins are given (kiln.engine.actions.identity) against the store
alone: no EngineService, no engine. Without Keystone (``admin`` None) a keypair is Kiln's
own, and the stack-user calls that need Keystone leave nothing behind."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from kiln.db.facade import Database, open_database
from kiln.engine.actions.identity import Identities
from kiln.engine.store import Store

STACK = "5d0f1f0e-3b7a-4a56-8d5e-2c8b7e0f9a21"


@pytest.fixture
async def identities(sqlite_url: str) -> AsyncIterator[Identities]:
    database: Database = await open_database(sqlite_url)
    yield Identities(Store(database), admin=None)
    await database.close()


async def test_a_keypair_is_issued_found_and_revoked(identities: Identities) -> None:
    issued = await identities.issue_keypair(project_id="p", user_id="u", stack_id=STACK,
                                            resource_name="server")
    assert issued["secret"] and issued["stack_id"] == STACK
    assert await identities.find_keypair(issued["access_key"]) == issued
    assert await identities.resource_keypair(STACK, "server") == issued
    before = identities.revocations()
    assert await identities.revoke_keypair(issued["access_key"]) is True
    assert identities.revocations() != before
    assert await identities.find_keypair(issued["access_key"]) is None
    assert await identities.resource_keypair(STACK, "server") is None
    assert await identities.delete_keypair(issued["access_key"]) is False


async def test_an_unusable_access_key_finds_nothing(identities: Identities) -> None:
    assert await identities.find_keypair("") is None
    assert await identities.find_keypair("A" * 65) is None


async def test_without_keystone_stack_user_calls_change_nothing(
        identities: Identities) -> None:
    await identities.set_stack_user_enabled(stack_id=STACK, resource_name="server",
                                            enabled=False)
    await identities.remove_stack_users(stack_id=STACK, owner_project_id="p",
                                        top_level=True)
    assert await identities.store.stack_users.users_of(STACK) == []
