"""Deferred authentication's rules in the engine (kiln.engine.runtime.acting), with an
in-memory Delegation in place of Keystone (the real one is tested against a real
Keystone in tests/functional/identity/test_trusts.py): which work acts with which
identity, what is kept with the stack, and what a trust that stopped working does."""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator
from typing import Any

import pytest

from kiln.db import user_creds as db_user_creds
from kiln.db.records import UserCredsRecord
from kiln.engine.service import EngineService, RequestContext
from kiln.errors import AuthorizationFailure

from .conftest import Override
from .support import create, hot

SCALING = hot({
    "group": {"type": "OS::Heat::AutoScalingGroup",
              "properties": {"min_size": 1, "max_size": 3,
                             "resource": {"type": "OS::Heat::None"}}},
    "up": {"type": "OS::Heat::ScalingPolicy",
           "properties": {"adjustment_type": "change_in_capacity",
                          "auto_scaling_group_id": {"get_resource": "group"},
                          "scaling_adjustment": 1, "cooldown": 0}}},
    outputs={"size": {"value": {"get_attr": ["group", "current_size"]}}})


class Trusts:
    """Keystone's trusts, in memory: made, used and deleted."""

    method = "trusts"

    def __init__(self, *, reauthenticate: bool = False) -> None:
        self.reauthenticate = reauthenticate
        self.alive: set[str] = set()
        self.used: list[str] = []
        self.revoked: list[tuple[str, str | None]] = []
        self.made = 0

    async def delegate(self, ctx: RequestContext, stack_id: str) -> UserCredsRecord | None:
        if ctx.auth_token == "ec2-token":  # Keystone refuses such tokens any trust
            return None
        trust_id = f"trust-{self.made}"
        self.made += 1
        self.alive.add(trust_id)
        return UserCredsRecord(stack_id=stack_id, method="trusts",
                               trustor_user_id=ctx.user_id, project_id=ctx.project_id,
                               trust_id=trust_id, username=ctx.username)

    async def act_as(self, creds: UserCredsRecord, stack_name: str) -> RequestContext:
        assert creds.trust_id is not None
        self.used.append(stack_name)
        if creds.trust_id not in self.alive:
            raise AuthorizationFailure(f"Keystone refused the trust for {stack_name}")
        return RequestContext(project_id=creds.project_id, user_id=creds.trustor_user_id,
                              roles=("member",),
                              client_auth=("password", {"trust_id": creds.trust_id}))

    async def revoke(self, creds: UserCredsRecord, ctx: RequestContext | None) -> None:
        assert creds.trust_id is not None
        self.alive.discard(creds.trust_id)
        self.revoked.append((creds.trust_id, ctx.auth_token if ctx else None))


@pytest.fixture
def trusts() -> Trusts:
    return Trusts()


@pytest.fixture
async def service(sqlite_url: str, override: Override,
                  trusts: Trusts) -> AsyncIterator[EngineService]:
    override(poll_initial_delay=0.001, poll_max_delay=0.05, group="kiln_engine")
    svc = EngineService(db_url=sqlite_url, delegation=trusts)
    await svc.start()
    yield svc
    await svc.stop()


@pytest.fixture
def caller() -> RequestContext:
    return RequestContext(project_id="p1", user_id="alice", username="alice",
                          roles=("member",), auth_token="alice-token")


async def stored(svc: EngineService, stack_id: str) -> UserCredsRecord | None:
    found: UserCredsRecord | None = await svc.store.database.run(
        db_user_creds.get_user_creds, stack_id)
    return found


async def test_a_create_keeps_a_trust_that_signals_act_through_and_delete_removes(
        service: EngineService, caller: RequestContext, trusts: Trusts) -> None:
    stack = await create(service, caller, "scaled", SCALING)
    assert stack["stack_status"] == "CREATE_COMPLETE"
    ident = stack["stack_identity"]
    creds = await stored(service, ident["stack_id"])
    assert creds is not None and creds.trustor_user_id == "alice"
    assert creds.trust_id in trusts.alive
    # the create itself acted with the caller's token (Heat's default)
    assert service.engine.acting[ident["stack_id"]].auth_token == "alice-token"

    await service.resource_signal(caller, ident, "up", None, sync_call=True)
    assert trusts.used == ["scaled"]
    acting = service.engine.acting[ident["stack_id"]]
    assert acting.auth_token is None and acting.client_auth == (
        "password", {"trust_id": creds.trust_id})

    await service.delete_stack(caller, ident)
    await service.wait_for_stack(ident["stack_id"])
    assert trusts.revoked == [(creds.trust_id, "alice-token")]
    assert await stored(service, ident["stack_id"]) is None
    assert ident["stack_id"] not in service.engine.acting


async def test_a_broken_trust_refuses_signals_and_the_stack_still_deletes(
        service: EngineService, caller: RequestContext, trusts: Trusts) -> None:
    stack = await create(service, caller, "scaled", SCALING)
    ident = stack["stack_identity"]
    trusts.alive.clear()
    with pytest.raises(AuthorizationFailure, match="scaled"):
        await service.resource_signal(caller, ident, "up", None, sync_call=True)
    outputs = (await service.show_stack(caller, ident))["outputs"]
    assert [o["output_value"] for o in outputs] == [1]
    await service.delete_stack(caller, ident)
    await service.wait_for_stack(ident["stack_id"])
    assert (await service.show_stack(caller, ident))["stack_status"] == "DELETE_COMPLETE"


async def test_reauthenticating_actions_act_through_the_trust_and_fail_without_it(
        service: EngineService, caller: RequestContext, trusts: Trusts) -> None:
    trusts.reauthenticate = True
    stack = await create(service, caller, "s", hot({"a": {"type": "OS::Heat::None"}}))
    ident = stack["stack_identity"]
    assert service.engine.acting[ident["stack_id"]].client_auth is not None
    trusts.alive.clear()
    with pytest.raises(AuthorizationFailure, match="s"):
        await service.stack_suspend(caller, ident)
    assert (await service.show_stack(caller, ident))["stack_status"] == "CREATE_COMPLETE"


async def update(service: EngineService, ctx: RequestContext, ident: Any) -> str:
    await service.update_stack(ctx, ident, None, {}, {}, {"existing": True})
    await service.wait_for_stack(ident["stack_id"])
    return str((await service.show_stack(ctx, ident))["stack_status"])


async def test_an_update_by_another_user_moves_the_trust_to_them(
        service: EngineService, caller: RequestContext, trusts: Trusts) -> None:
    """Heat 27's check_refresh_cred: a new trust from the updating user, the old one
    deleted (the updater's token passed: Kiln deletes it as the trustee then)."""
    stack = await create(service, caller, "s", SCALING)
    ident = stack["stack_identity"]
    old = await stored(service, ident["stack_id"])
    assert old is not None
    bob = dataclasses.replace(caller, user_id="bob", username="bob", auth_token="bob-token")
    assert await update(service, bob, ident) == "UPDATE_COMPLETE"
    new = await stored(service, ident["stack_id"])
    assert new is not None and new.trustor_user_id == "bob"
    assert trusts.alive == {new.trust_id}
    assert trusts.revoked == [(old.trust_id, "bob-token")]
    # deferred work now acts for bob
    await service.resource_signal(caller, ident, "up", None, sync_call=True)
    assert service.engine.acting[ident["stack_id"]].user_id == "bob"


async def test_an_update_by_the_trustor_keeps_a_working_trust_and_renews_a_broken_one(
        service: EngineService, caller: RequestContext, trusts: Trusts) -> None:
    stack = await create(service, caller, "s", SCALING)
    ident = stack["stack_identity"]
    first = await stored(service, ident["stack_id"])
    assert await update(service, caller, ident) == "UPDATE_COMPLETE"
    assert await stored(service, ident["stack_id"]) == first and trusts.revoked == []

    trusts.alive.clear()  # deleted behind Kiln's back
    assert await update(service, caller, ident) == "UPDATE_COMPLETE"
    renewed = await stored(service, ident["stack_id"])
    assert renewed is not None and first is not None
    assert renewed.trust_id != first.trust_id and trusts.alive == {renewed.trust_id}
    await service.resource_signal(caller, ident, "up", None, sync_call=True)


async def test_an_update_by_a_caller_who_cannot_delegate_keeps_the_trust(
        service: EngineService, caller: RequestContext, trusts: Trusts) -> None:
    stack = await create(service, caller, "s", SCALING)
    ident = stack["stack_identity"]
    first = await stored(service, ident["stack_id"])
    signed = dataclasses.replace(caller, user_id="bob", auth_token="ec2-token")
    assert await update(service, signed, ident) == "UPDATE_COMPLETE"
    assert await stored(service, ident["stack_id"]) == first and trusts.revoked == []


async def test_a_caller_without_a_token_gets_no_trust(
        service: EngineService, caller: RequestContext, trusts: Trusts) -> None:
    noauth = dataclasses.replace(caller, auth_token=None)
    stack = await create(service, noauth, "plain", hot({"a": {"type": "OS::Heat::None"}}))
    assert await stored(service, stack["id"]) is None
    assert trusts.alive == set()


async def test_a_caller_whose_token_cannot_delegate_gets_a_stack_without_a_trust(
        service: EngineService, caller: RequestContext, trusts: Trusts) -> None:
    signed = dataclasses.replace(caller, auth_token="ec2-token")
    stack = await create(service, signed, "cfn", hot({"a": {"type": "OS::Heat::None"}}))
    assert stack["stack_status"] == "CREATE_COMPLETE"
    assert await stored(service, stack["id"]) is None
