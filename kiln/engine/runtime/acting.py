"""Whose identity a stack's work acts with (the rules are in
:mod:`kiln.engine.model.delegation`).

The engine keeps the identity of the latest work on each top-level stack in
``Engine.acting`` (by root stack id, so nested stacks, created or loaded, share it) and
the plugins' clients read it (:meth:`StackRuntime._owner`). Everything here is a no-op
without a :class:`~kiln.engine.model.delegation.Delegation` (noauth) or for a stack that
has no delegated credentials (created before, or in another mode).
"""

from __future__ import annotations

import logging

from kiln.db.records import UserCredsRecord
from kiln.engine.model.context import RequestContext
from kiln.engine.model.live_stack import LiveStack
from kiln.engine.runtime.engine import Engine
from kiln.errors import AuthorizationFailure, MissingCredentialError

LOG = logging.getLogger(__name__)


def check_deferred_auth(engine: Engine, ctx: RequestContext, stack: LiveStack) -> None:
    """Heat's ``_validate_deferred_auth_context`` for a new or updated stack: with
    ``deferred_auth_method = password``, a stack holding a resource that needs deferred
    authentication (a child stack, a signal's receiver) is refused (400) unless the
    request carries X-Auth-User and X-Auth-Key, which Kiln keeps to act later."""
    delegation = engine.delegation
    if delegation is None or delegation.method != "password":
        return
    if not any(type(slot.plugin).requires_deferred_auth for slot in stack.slots.values()):
        return
    if not ctx.auth_user:
        raise MissingCredentialError("Missing required credential: X-Auth-User")
    if not ctx.auth_key:
        raise MissingCredentialError("Missing required credential: X-Auth-Key")


async def delegate(engine: Engine, ctx: RequestContext, stack_id: str,
                   stack_name: str) -> None:
    """At create of a top-level stack: obtain the caller's delegation (a trust) and keep
    it with the stack; the create then acts as :func:`for_request` says. Raises (and
    nothing is kept) when Keystone refuses or cannot be reached."""
    delegation = engine.delegation
    if delegation is None or ctx.auth_token is None:
        return
    creds = await delegation.delegate(ctx, stack_id)
    if creds is None:  # the caller cannot delegate: the stack has no trust
        engine.acting[stack_id] = ctx
        return
    try:
        await engine.store.credentials.keep(creds)
    except BaseException:
        await delegation.revoke(creds, ctx)
        raise
    engine.acting[stack_id] = (await delegation.act_as(creds, stack_name)
                               if delegation.reauthenticate else ctx)


async def undo_delegation(engine: Engine, ctx: RequestContext, stack_id: str) -> None:
    """The stack was not stored after all: its trust goes."""
    creds = await _creds(engine, stack_id)
    if creds is not None and engine.delegation is not None:
        await engine.delegation.revoke(creds, ctx)
        await engine.store.credentials.forget(stack_id)
    engine.acting.pop(stack_id, None)


async def refresh_for_update(engine: Engine, root_stack_id: str, stack_name: str,
                             ctx: RequestContext) -> None:
    """An update of a top-level stack, as Heat 27's ``check_refresh_cred``: when the
    caller is not the stack's trustor (another user of the project) or the stored trust
    no longer works, a new trust is made from the caller with their token, replaces the
    stored one, and the old trust is deleted; the stack's deferred work then acts for
    the caller. Only with trusts (Heat does this for ``deferred_auth_method = trusts``
    only); a caller who cannot delegate (an EC2-signed one) leaves the trust as it is."""
    delegation = engine.delegation
    if delegation is None or delegation.method != "trusts" or ctx.auth_token is None:
        return
    creds = await _creds(engine, root_stack_id)
    if creds is None or creds.method != "trusts":
        return
    if (creds.trustor_user_id, creds.project_id) == (ctx.user_id, ctx.project_id):
        try:
            await delegation.act_as(creds, stack_name)
            return
        except AuthorizationFailure as exc:
            LOG.info("stack %s: its trust no longer works, making a new one from the "
                     "updating user: %s", stack_name, exc)
    fresh = await delegation.delegate(ctx, root_stack_id)
    if fresh is None:
        return
    try:
        await engine.store.credentials.keep(fresh)
    except BaseException:
        await delegation.revoke(fresh, ctx)
        raise
    await delegation.revoke(creds, ctx)
    LOG.info("stack %s: its trust now delegates from user %s (was user %s)", stack_name,
             fresh.trustor_user_id, creds.trustor_user_id)


async def for_request(engine: Engine, root_stack_id: str, stack_name: str,
                      ctx: RequestContext, *, tolerate_broken: bool = False) -> None:
    """A user's action on a stack: it acts with their token, or through the stack's trust
    with ``reauthentication_auth_method = trusts`` (checked now: a trust that no longer
    works raises AuthorizationFailure naming it, unless ``tolerate_broken``, as for a
    delete, which then acts with the caller's token)."""
    delegation = engine.delegation
    if delegation is None:
        return
    acting = ctx
    if delegation.reauthenticate:
        creds = await _creds(engine, root_stack_id)
        if creds is not None:
            try:
                acting = await delegation.act_as(creds, stack_name)
            except Exception as exc:
                if not tolerate_broken:
                    raise
                LOG.warning("stack %s: acting with the caller's token: %s", stack_name, exc)
    engine.acting[root_stack_id] = acting


async def without_request(engine: Engine, stack: LiveStack) -> None:
    """Work no request of the owner's is behind (a signal, an alarm, recovery): through
    the stack's trust, checked now (AuthorizationFailure naming it when it fails). A
    stack with nothing delegated (an EC2-signed creator's, whose token cannot make a
    trust; no ``[trustee]``) gets an identity that calls no OpenStack service: its
    plugins' calls fail naming the missing trust, as Heat 27's stored context without a
    trust or password has no credentials (``_create_auth_plugin`` raises
    AuthorizationFailure). A signal into an action a request of the owner's is running
    leaves that request's identity to the action."""
    delegation = engine.delegation
    if delegation is None:
        return
    info = stack.info
    root_stack_id = info.root_stack_id or info.id
    creds = await _creds(engine, root_stack_id)
    if creds is not None:
        engine.acting[root_stack_id] = await delegation.act_as(creds, info.name)
        return
    if engine.running(root_stack_id) and root_stack_id in engine.acting:
        return
    what = "stored password" if delegation.method == "password" else "trust"
    engine.acting[root_stack_id] = RequestContext(
        project_id=info.project_id, user_id=info.user_id or "",
        username=info.username or "", roles=(), is_admin=False,
        no_credentials=(f"Kiln cannot act for stack {info.name} without a request of its "
                        f"owner's: the stack has no {what} (nothing was delegated to Kiln "
                        f"when it was created), and Kiln does not act for a user's stack "
                        f"with its own credentials."))


async def forget(engine: Engine, stack_id: str, ctx: RequestContext | None) -> None:
    """A top-level stack is deleted: its trust is deleted in Keystone (never failing the
    delete) and its stored credentials go."""
    engine.acting.pop(stack_id, None)
    creds = await _creds(engine, stack_id)
    if creds is None:
        return
    if engine.delegation is not None:
        await engine.delegation.revoke(creds, ctx)
    await engine.store.credentials.forget(stack_id)


async def _creds(engine: Engine, root_stack_id: str) -> UserCredsRecord | None:
    return await engine.store.credentials.of_stack(root_stack_id)
