"""EngineService: the stack-changing calls (create, delete, ...)."""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

from kiln.engine.actions import admit
from kiln.engine.actions import create as create_action
from kiln.engine.actions import delete as delete_action
from kiln.engine.actions import update as update_action
from kiln.engine.actions.validation import check_external
from kiln.engine.model.context import RequestContext
from kiln.engine.model.live_stack import LiveStack
from kiln.engine.model.shapes import StackIdentityReply
from kiln.engine.model.states import (
    COMPLETE,
    CREATE,
    DELETE,
    IN_PROGRESS,
    SUSPEND,
    UPDATE,
    stack_started,
)
from kiln.engine.runtime import acting
from kiln.engine.runtime.claims import Claim
from kiln.engine.runtime.engine import Engine
from kiln.engine.service import preview
from kiln.engine.service.forwarding import ForwardingOps
from kiln.engine.service.history import HistoryOps
from kiln.engine.service.interface import JSON, Identity
from kiln.engine.service.recovery import cancel_reason
from kiln.engine.service.replies import identity
from kiln.engine.service.shared import ServiceCore
from kiln.engine.service.unheld import UnheldOps
from kiln.engine.store import utcnow
from kiln.errors import NotSupported, StackValidationFailed


class StackOps:
    """Create, delete, update, cancel and their previews. ``forwarding`` and ``unheld``
    run a call on the engine holding the stack; ``history`` keeps each create's and
    update's version."""

    def __init__(self, core: ServiceCore, forwarding: ForwardingOps, unheld: UnheldOps,
                 history: HistoryOps) -> None:
        self.core = core
        self.forwarding = forwarding
        self.unheld = unheld
        self.history = history

    async def wait_for_stack(self, stack_id: str,
                             timeout: float | None = None) -> None:  # callers' bound  # noqa: ASYNC109
        async with asyncio.timeout(timeout):
            await self.core.engine.wait_side(stack_id)  # a signal answered before it ended
            await self.core.engine.wait(stack_id)

    async def create_stack(self, ctx: RequestContext, stack_name: str,
                           template: Mapping[str, Any] | str, params: Mapping[str, Any],
                           files: Mapping[str, str], args: Mapping[str, Any],
                           environment_files: Sequence[str] | None = None) -> StackIdentityReply:
        engine = self.core.engine
        stack = await admit.prepare(engine, ctx, stack_name, template, params, files,
                                       environment_files, args)
        await acting.delegate(engine, ctx, stack.info.id, stack_name)
        try:
            async with engine.claims.claim_new(stack.info.id, CREATE) as claim:
                await admit.store(engine, stack)
                self.history.remember_version(stack, CREATE)
                claim.launch(lambda: create_action.run_create(engine, stack), stack)
        except BaseException:
            await acting.undo_delegation(engine, ctx, stack.info.id)
            raise
        return stack.identity_dict()

    async def preview_stack(self, ctx: RequestContext, stack_name: str,
                            template: Mapping[str, Any] | str, params: Mapping[str, Any],
                            files: Mapping[str, str], args: Mapping[str, Any],
                            environment_files: Sequence[str] | None = None) -> JSON:
        stack = await admit.prepare(self.core.engine, ctx, stack_name, template, params, files,
                                            environment_files, args, stack_id="None")
        return preview.nested_previews(stack, preview.stack_preview(stack))

    async def delete_stack(self, ctx: RequestContext, stack_identity: Identity) -> None:
        # the engine running the stack's action stops it, then deletes (as Heat does)
        if await self.forwarding.forward_to_holder("delete_stack", ctx, stack_identity):
            return
        engine = self.core.engine
        rec = await self.core.find(ctx, stack_identity)
        await acting.for_request(engine, rec.root_stack_id, rec.name, ctx,
                                 tolerate_broken=True)
        # Heat lets a delete pre-empt the action running on the stack
        async with engine.claim(rec.id, rec.name, DELETE, preempt=True) as claim:
            stack = await engine.load(rec.id)
            await engine.recorder.stack(stack, DELETE, IN_PROGRESS, stack_started(DELETE))
            claim.launch(lambda: delete_and_forget(engine, stack, ctx), stack)

    async def identify_stack(self, ctx: RequestContext, stack_name: str) -> StackIdentityReply:
        rec = await self.core.find(ctx, stack_name)
        return identity(rec)

    # -- update -----------------------------------------------------------------------
    async def prepare_update(self, ctx: RequestContext, stack_identity: Identity,
                             template: Mapping[str, Any] | str | None,
                             params: Mapping[str, Any], files: Mapping[str, str],
                             args: Mapping[str, Any],
                             environment_files: Sequence[str] | None,
                             ) -> tuple[LiveStack, LiveStack]:
        """(current stack as stored, new stack bound to the new template, validated)."""
        engine = self.core.engine
        rec = await self.core.find(ctx, stack_identity)
        refuse_update(rec.action)
        patch = bool(args.get("existing"))
        # the stored body is needed only by a PATCH without a template; a big stack's
        # parsed body would otherwise sit beside the old and the new template
        stacks = self.core.store.stacks
        read_raw = stacks.raw_template if patch and template is None \
            else stacks.raw_template_without_body
        raw = await read_raw(rec.raw_template_id)
        new_files = {**raw.files, **(files or {})} if patch else dict(files or {})
        body = template if template is not None else (raw.template if patch else None)
        if body is None:
            raise StackValidationFailed("No Template provided.")
        env_body = merged_environment(raw.environment, params, args) if patch \
            else dict(params or {})
        facade = await engine.parent_facade(rec)

        def parse_and_check() -> LiveStack:
            tmpl, env = admit.parse_request(body, env_body, new_files, environment_files,
                                            self.core.conf)
            if patch:  # as Heat 27: a PATCH keeps only the parameters the template declares
                env.parameters = {k: v for k, v in env.parameters.items()
                                  if k in tmpl.parameter_schemas}
            opts = admit.Options.from_args(args)
            if patch or "disable_rollback" not in args:
                opts.disable_rollback = (bool(args["disable_rollback"])
                                         if "disable_rollback" in args
                                         else rec.disable_rollback)
            if "timeout_mins" not in args and "timeout" not in args:
                opts.timeout_mins = rec.timeout
            if "tags" not in args:
                opts.tags = rec.tags
            new = admit.build(engine, name=rec.name, project_id=rec.project_id,
                              template=tmpl, environment=env, files=new_files, opts=opts,
                              username=rec.username, user_id=rec.user_id, stack_id=rec.id,
                              action=UPDATE)
            new.parent_facade = facade
            # validated as a new stack (before it takes the stored stack's info: a
            # stored stack's get_attr names are never re-judged, a new template's are)
            admit.validate(engine, new)
            return new

        # Off the event loop, as a create's checks are (admit.prepare): a template's
        # functions may take a while within their bounds, and every other request is
        # served meanwhile. Nothing here touches the engine's shared state.
        admit.warm_yaql(engine)
        new = await asyncio.to_thread(parse_and_check)
        new.requester = ctx  # its lookups act with the caller's token, as Heat's do
        acting.check_deferred_auth(engine, ctx, new)
        # Heat validates the new template's cloud lookups too (a flavor that does not
        # exist is a 400 before anything changes), once per name in the request
        await check_external(new)
        # the slots were for validation only; the update moves the real ones in. The
        # stored stack is loaded only now, so a big stack's validation slots and its
        # stored slots are never in memory together
        new.slots.clear()
        current = await engine.load(rec.id)
        asked = new.info  # what the request (or the stored stack) gave these
        new.info = dataclasses.replace(current.info, timeout_mins=asked.timeout_mins,
                                       disable_rollback=asked.disable_rollback,
                                       tags=asked.tags)
        check_immutable(current, new)
        return current, new

    async def update_stack(self, ctx: RequestContext, stack_identity: Identity,
                           template: Mapping[str, Any] | str | None,
                           params: Mapping[str, Any], files: Mapping[str, str],
                           args: Mapping[str, Any],
                           environment_files: Sequence[str] | None = None) -> StackIdentityReply:
        engine = self.core.engine
        rec = await self.core.find(ctx, stack_identity)
        refuse_update(rec.action)  # before the claim: a request bound to fail takes none
        if rec.root_stack_id == rec.id:
            await acting.refresh_for_update(engine, rec.root_stack_id, rec.name, ctx)
        await acting.for_request(engine, rec.root_stack_id, rec.name, ctx)
        # held from before the stored stack is read, so what the update starts from is
        # what the action before it left
        async with engine.claim(rec.id, rec.name, UPDATE) as claim:
            current, new = await self.prepare_update(ctx, stack_identity, template, params,
                                                     files, args, environment_files)
            # the cloud is read by the update itself (run_update), not in the request;
            # the flag is stored with the action (launch_update), so an engine taking
            # the update over, or taking one an API process admitted, converges too
            new.converge = bool(args.get("converge"))
            await self.launch_update(claim, current, new)
        return new.identity_dict()

    async def launch_update(self, claim: Claim, current: LiveStack, new: LiveStack) -> None:
        """Store the new template, mark the stack UPDATE_IN_PROGRESS and start the walk."""
        engine = self.core.engine
        info = new.info
        hidden = sorted(new.bound.parameters.hidden)
        template_id = await self.core.store.stacks.add_template(
            new.template.raw, new.environment.env_as_dict(), new.files, hidden)
        prev = info.raw_template_id
        info.raw_template_id, info.prev_raw_template_id = template_id, prev
        await engine.recorder.stack(new, UPDATE, IN_PROGRESS, stack_started(UPDATE), extra={
            "raw_template_id": template_id, "prev_raw_template_id": prev,
            "timeout": info.timeout_mins, "disable_rollback": info.disable_rollback,
            "converge": new.converge, "updated_at": utcnow()})
        if tuple(info.tags) != tuple(current.info.tags):
            await self.core.store.stacks.set_tags(info.id, list(info.tags))
        self.history.remember_version(new, UPDATE)
        claim.launch(lambda: update_action.run_update(engine, current, new), new)

    async def preview_update_stack(self, ctx: RequestContext, stack_identity: Identity,
                                   template: Mapping[str, Any] | str | None,
                                   params: Mapping[str, Any], files: Mapping[str, str],
                                   args: Mapping[str, Any],
                                   environment_files: Sequence[str] | None = None) -> JSON:
        current, new = await self.prepare_update(ctx, stack_identity, template, params,
                                                 files, args, environment_files)
        rec = await self.core.find(ctx, stack_identity)
        # comparing every resource's properties: off the loop, as the checks before it
        return await asyncio.to_thread(preview.update_preview, rec, current, new)

    async def stack_cancel_update(self, ctx: RequestContext, stack_identity: Identity,
                                  cancel_with_rollback: bool = True) -> None:
        # only the engine running the update can cancel it; a queued update is cancelled
        # by the engine that takes it (kiln.engine.service.unheld)
        await self.unheld.at_stack(
            "stack_cancel_update", ctx, stack_identity,
            lambda held: self._cancel_here(ctx, stack_identity, cancel_with_rollback, held),
            cancel_with_rollback=cancel_with_rollback)

    async def _cancel_here(self, ctx: RequestContext, stack_identity: Identity,
                           rollback: bool, held: bool) -> None:
        engine = self.core.engine
        rec = await self.core.find(ctx, stack_identity)
        allowed = (UPDATE,) if rollback else (UPDATE, CREATE)
        refused = NotSupported(f"Cancelling update when stack is {rec.action}_{rec.status} "
                               "is not supported.")
        if not (rec.status == IN_PROGRESS and rec.action in allowed):
            raise refused
        if held:  # queued, and held by this request: kept for the engine that takes it
            if rec.owner_id is not None:
                raise refused  # a nested stack's action is its parent's to cancel
            await self.core.store.stacks.request_cancel(rec.id, cancel_reason(rec.action,
                                                                              rollback))
            return
        # the running action, not the row read above: a delete may have pre-empted it
        running = engine.claims.get(rec.id)
        cancel = engine.cancels.get(rec.id)
        if cancel is None or running is None or running.action not in allowed:
            raise refused
        engine.cancel_rollback[rec.id] = rollback
        cancel.set()


async def delete_and_forget(engine: Engine, stack: LiveStack,
                            ctx: RequestContext | None) -> None:
    """Delete the stack; a top-level stack deleted for good takes its trust with it."""
    await delete_action.run_delete(engine, stack)
    info = stack.info
    if info.owner_id is None and (info.action, info.status) == (DELETE, COMPLETE):
        await acting.forget(engine, info.id, ctx)


def refuse_update(action: str) -> None:
    if action == SUSPEND:
        raise NotSupported("Updating a stack when it is suspended is not supported.")
    if action == DELETE:
        raise NotSupported("Updating a stack when it is deleting is not supported.")


def merged_environment(stored: Mapping[str, Any], params: Mapping[str, Any] | None,
                       args: Mapping[str, Any]) -> dict[str, Any]:
    """PATCH: the stored environment with the request's layered on top; names in
    ``clear_parameters`` go back to their defaults."""
    env = {k: (dict(v) if isinstance(v, dict) else v) for k, v in stored.items()}
    new = dict(params or {})
    for key in ("parameters", "parameter_defaults", "resource_registry"):
        if new.get(key):
            merged = dict(env.get(key) or {})
            merged.update(new[key])
            env[key] = merged
    if new.get("event_sinks"):
        env["event_sinks"] = list(new["event_sinks"])
    for name in args.get("clear_parameters") or ():
        for key in ("parameters", "parameter_defaults"):
            (env.get(key) or {}).pop(name, None)
    env.pop("encrypted_param_names", None)
    return env


def check_immutable(current: LiveStack, new: LiveStack) -> None:
    from kiln.template.parameters import check_immutable as check

    check(current.bound.parameters, new.bound.parameters, new.environment.parameters)
