"""EngineService: the stack-changing calls (create, delete, ...)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from kiln.engine import create as create_action
from kiln.engine import delete as delete_action
from kiln.engine import newstack
from kiln.engine.actions import DELETE, IN_PROGRESS, stack_started
from kiln.engine.base import ServiceBase
from kiln.engine.context import RequestContext
from kiln.engine.format import identity
from kiln.engine.interface import JSON, Identity


class StackOps(ServiceBase):
    async def create_stack(self, ctx: RequestContext, stack_name: str,
                           template: Mapping[str, Any] | str, params: Mapping[str, Any],
                           files: Mapping[str, str], args: Mapping[str, Any],
                           environment_files: Sequence[str] | None = None) -> JSON:
        engine = self.engine
        await newstack.check_new(engine, name=stack_name, project_id=ctx.project_id,
                                 is_admin=ctx.is_admin)
        tmpl, env = newstack.parse_request(template, params, files, environment_files,
                                           self.conf)
        stack = newstack.build(engine, name=stack_name, project_id=ctx.project_id,
                               template=tmpl, environment=env, files=dict(files or {}),
                               opts=newstack.Options.from_args(args),
                               username=ctx.username, user_id=ctx.user_id)
        newstack.validate(engine, stack)
        await newstack.store(engine, stack)
        engine.launch(stack.info.id, lambda: create_action.run_create(engine, stack))
        return stack.identity_dict()

    async def delete_stack(self, ctx: RequestContext, stack_identity: Identity) -> None:
        engine = self.engine
        rec = await self._find(ctx, stack_identity)
        # Heat lets a delete pre-empt this engine's running create/update on the stack
        await engine.preempt(rec.id)
        stack = await engine.load(rec.id)
        await engine.acquire(stack)
        await engine.recorder.stack(stack, DELETE, IN_PROGRESS, stack_started(DELETE))
        engine.launch(rec.id, lambda: delete_action.run_delete(engine, stack))

    async def identify_stack(self, ctx: RequestContext, stack_name: str) -> JSON:
        rec = await self._find(ctx, stack_name)
        return identity(rec)
