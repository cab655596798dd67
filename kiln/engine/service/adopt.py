"""EngineService: export, abandon and adopt calls (the documents and the adopt walk are in
:mod:`kiln.engine.actions.adopt`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from kiln.engine.actions import admit
from kiln.engine.actions.adopt import abandon_data, parse_adopt_data, retain_everything, run_adopt
from kiln.engine.model.context import RequestContext
from kiln.engine.model.live_stack import LiveStack
from kiln.engine.model.shapes import StackIdentityReply
from kiln.engine.model.states import (
    ADOPT,
    DELETE,
    IN_PROGRESS,
    stack_started,
)
from kiln.engine.runtime import acting
from kiln.engine.service.forwarding import ForwardingOps
from kiln.engine.service.interface import JSON, Identity
from kiln.engine.service.shared import ServiceCore
from kiln.engine.service.stack_changes import StackOps, delete_and_forget
from kiln.errors import StackValidationFailed


class AdoptOps:
    """Export, abandon and adopt; a create without adopt data is ``stacks``'s."""

    def __init__(self, core: ServiceCore, forwarding: ForwardingOps, stacks: StackOps) -> None:
        self.core = core
        self.forwarding = forwarding
        self.stacks = stacks

    async def _stack_data(self, ctx: RequestContext, stack_identity: Identity,
                          ) -> tuple[LiveStack, JSON]:
        rec = await self.core.find(ctx, stack_identity)
        stack = await self.core.engine.load(rec.id)
        return stack, await abandon_data(stack)

    async def export_stack(self, ctx: RequestContext, stack_identity: Identity) -> JSON:
        return (await self._stack_data(ctx, stack_identity))[1]

    async def abandon_stack(self, ctx: RequestContext, stack_identity: Identity) -> JSON:
        # the resources it retains are known only to the process running it
        if fwd := (await self.forwarding.forward_to_holder("abandon_stack", ctx, stack_identity)
                   or await self.forwarding.forward_to_engine("abandon_stack", ctx,
                                                              stack_identity=dict(stack_identity))):
            return dict(fwd.reply)
        engine = self.core.engine
        rec = await self.core.find(ctx, stack_identity)
        async with engine.claim(rec.id, rec.name, DELETE, preempt=True) as claim:
            stack = await engine.load(rec.id)
            data = await abandon_data(stack)
            await engine.recorder.stack(stack, DELETE, IN_PROGRESS, stack_started(DELETE))
            retain_everything(stack)
            claim.launch(lambda: delete_and_forget(engine, stack, ctx), stack)
        return data

    async def create_stack(self, ctx: RequestContext, stack_name: str,
                           template: Mapping[str, Any] | str, params: Mapping[str, Any],
                           files: Mapping[str, str], args: Mapping[str, Any],
                           environment_files: Sequence[str] | None = None) -> StackIdentityReply:
        if args.get("adopt_stack_data"):
            # the adopted resources' data is not stored for an engine to resume from
            if fwd := await self.forwarding.forward_to_engine(
                               "create_stack", ctx, stack_name=stack_name, template=template,
                               params=dict(params or {}), files=dict(files or {}), args=dict(args),
                               environment_files=list(environment_files or ())):
                return dict(fwd.reply)  # type: ignore[return-value]
            return await self.adopt_stack(ctx, stack_name, template, params, files, args,
                                          environment_files)
        return await self.stacks.create_stack(ctx, stack_name, template, params, files, args,
                                              environment_files)

    async def adopt_stack(self, ctx: RequestContext, stack_name: str,
                          template: Mapping[str, Any] | str | None,
                          params: Mapping[str, Any], files: Mapping[str, str],
                          args: Mapping[str, Any],
                          environment_files: Sequence[str] | None = None) -> StackIdentityReply:
        """create_stack with ``args["adopt_stack_data"]``: the template defaults to the
        adopted document's own."""
        engine = self.core.engine
        adopt = parse_adopt_data(args["adopt_stack_data"])
        body = template if template else adopt.get("template")
        if not body:
            raise StackValidationFailed("No Template provided.")
        env_body = dict(params or {}) or dict(adopt.get("environment") or {})
        all_files = {**(adopt.get("files") or {}), **(files or {})}
        stack = await admit.prepare(engine, ctx, stack_name, body, env_body, all_files,
                                       environment_files, args, action=ADOPT)
        await acting.delegate(engine, ctx, stack.info.id, stack_name)
        try:
            async with engine.claims.claim_new(stack.info.id, ADOPT) as claim:
                await admit.store(engine, stack)
                claim.launch(lambda: run_adopt(engine, stack, adopt), stack)
        except BaseException:
            await acting.undo_delegation(engine, ctx, stack.info.id)
            raise
        self.stacks.history.remember_version(stack, ADOPT)
        return stack.identity_dict()
