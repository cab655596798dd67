"""Child stacks run by the same engine, for nested-stack plugins (no RPC round trip).

Implements :class:`kiln.resources.nested.NestedStackOps`. A child stack is an ordinary
stack row (``owner_id`` = parent, ``nested_depth`` + 1, ``parent_resource_name``) whose
actions run as tasks of this engine; ``wait`` awaits that task, so a parent resource
finishes the moment its child does. Limits are Heat 27's: ``max_nested_stack_depth``, and
``max_resources_per_stack`` counted per stack (the child's own resources, whatever its
parents hold: a top-level ResourceGroup of 1,000 members passes the default 1,000).
``checkpoint`` writes a multi-step parent's new token through the recorder like the
runner's own progress write.
"""

from __future__ import annotations

import asyncio
import dataclasses
import datetime as dt
from collections.abc import Mapping
from typing import Any, Protocol

from kiln.db import stacks as db_stacks
from kiln.engine.actions import create as create_action
from kiln.engine.actions import delete as delete_action
from kiln.engine.actions import lifecycle, new_stack
from kiln.engine.actions import update as update_action
from kiln.engine.model.context import RequestContext
from kiln.engine.model.live_stack import LiveStack
from kiln.engine.model.states import CREATE, DELETE, FAILED, IN_PROGRESS, UPDATE, stack_started
from kiln.engine.runtime.claims import Claim
from kiln.engine.runtime.engine import Engine
from kiln.engine.store.loader import info_from_record
from kiln.errors import EntityNotFound, RequestLimitExceeded
from kiln.resources.base import Resource, Token
from kiln.resources.nested import NAME_KEY, ChildMember
from kiln.resources.runtime import SoftwareConfigStore, SoftwareDeploymentStore
from kiln.resources.stores import ServiceConfigStore, ServiceDeploymentStore
from kiln.template import load_template


class ServiceHost(Protocol):
    """The EngineService as NestedOps sees it: its engine, and the software-config and
    deployment calls the plugins' stores make (:mod:`kiln.resources.stores`)."""

    @property
    def engine(self) -> Engine: ...

    async def issue_ec2_keypair(self, *, project_id: str, user_id: str,
                                stack_id: str | None = None,
                                resource_name: str | None = None) -> dict[str, Any]: ...

    async def delete_ec2_keypair(self, access_key: str) -> bool: ...

    async def resource_ec2_keypair(self, stack_id: str,
                                   resource_name: str) -> dict[str, Any] | None: ...


class NestedOps:
    """:class:`~kiln.engine.model.live_stack.PluginServices` of one engine service."""

    def __init__(self, service: ServiceHost) -> None:
        self.service = service

    @property
    def engine(self) -> Engine:
        return self.service.engine

    # -- the service's stores, for plugins ----------------------------------------------
    def alarms(self, project_id: str, stack_id: str) -> Any:
        from kiln.alarms.stack_store import StackAlarms

        return StackAlarms(self.engine.db, project_id=project_id, stack_id=stack_id)

    def config_store(self, owner: RequestContext) -> SoftwareConfigStore:
        return ServiceConfigStore(self.service, owner)

    async def issue_ec2_keypair(self, *, project_id: str, user_id: str, stack_id: str,
                                resource_name: str) -> dict[str, Any]:
        made: dict[str, Any] = await self.service.issue_ec2_keypair(
            project_id=project_id, user_id=user_id, stack_id=stack_id,
            resource_name=resource_name)
        return made

    async def delete_ec2_keypair(self, access_key: str) -> bool:
        return bool(await self.service.delete_ec2_keypair(access_key))

    async def resource_ec2_keypair(self, stack_id: str,
                                   resource_name: str) -> dict[str, Any] | None:
        found: dict[str, Any] | None = await self.service.resource_ec2_keypair(
            stack_id, resource_name)
        return found

    def deployment_store(self, owner: RequestContext,
                         stack_user_project_id: str | None) -> SoftwareDeploymentStore:
        return ServiceDeploymentStore(self.service, owner,
                                      stack_user_project_id=stack_user_project_id)

    # -- helpers ------------------------------------------------------------------------
    @staticmethod
    def _parent_stack(parent: Resource) -> LiveStack:
        stack: LiveStack = parent.runtime.stack  # type: ignore[attr-defined]
        return stack

    def _facade(self, parent: Resource) -> dict[str, Any]:
        stack = self._parent_stack(parent)
        update_policy = parent.definition.update_policy
        try:
            update_policy = stack.runtime.resolve(update_policy) if update_policy else {}
        except Exception:  # plugin code (get_attr) may fail any way: then no policy  # noqa: BLE001
            update_policy = {}
        return {"metadata": dict(parent.metadata or {}),
                "deletion_policy": parent.definition.deletion_policy,
                "update_policy": update_policy or {}}

    def _build(self, parent: Resource, template: Mapping[str, Any],
               parameters: Mapping[str, Any], files: Mapping[str, str] | None,
               timeout_mins: int | None, *, name: str, stack_id: str | None = None,
               action: str = "CREATE") -> LiveStack:
        engine = self.engine
        pstack = self._parent_stack(parent)
        info = pstack.info
        detached = parent.detached_child
        limit = engine.conf.max_nested_stack_depth
        if not detached and info.nested_depth + 1 > limit:
            raise RequestLimitExceeded(
                f"Request limit exceeded: Recursion depth exceeds {limit}.")
        files = dict(pstack.files if files is None else files)
        tmpl = load_template(template, files=files, max_size=engine.conf.max_template_size)
        env = pstack.environment.child(dict(parameters), resource_name=parent.name)
        opts = new_stack.Options(timeout_mins=timeout_mins, disable_rollback=True)
        parent_ref = new_stack.Parent(stack_id=info.id, root_stack_id=info.root_stack_id,
                                     nested_depth=info.nested_depth,
                                     resource_name=parent.name, facade=self._facade(parent))
        return new_stack.build(engine, name=name, project_id=info.project_id, template=tmpl,
                              environment=env, files=files, opts=opts,
                              username=info.username, user_id=info.user_id,
                              parent=None if detached else parent_ref, stack_id=stack_id,
                              action=action)

    def build_child(self, parent: Resource, template: Mapping[str, Any],
                    parameters: Mapping[str, Any], files: Mapping[str, str] | None, *,
                    name: str) -> LiveStack:
        """The child stack ``parent`` would make, bound and validated but not stored
        (for a preview)."""
        child = self._build(parent, template, parameters, files, None, name=name)
        new_stack.validate(self.engine, child)
        return child

    # -- NestedStackOps -----------------------------------------------------------------
    async def create(self, parent: Resource, *, template: Mapping[str, Any],
                     parameters: Mapping[str, Any], files: Mapping[str, str] | None = None,
                     timeout_mins: int | None = None) -> str:
        engine = self.engine
        name = parent.physical_resource_name()
        child = self._build(parent, template, parameters, files, timeout_mins, name=name)
        new_stack.validate(engine, child)
        async with engine.claims.claim_new(child.info.id, CREATE) as claim:
            await new_stack.store(engine, child)
            parent.data[NAME_KEY] = name
            claim.launch(lambda: create_action.run_create(engine, child), child)
        return child.info.id

    async def update(self, parent: Resource, stack_id: str, *, template: Mapping[str, Any],
                     parameters: Mapping[str, Any], files: Mapping[str, str] | None = None,
                     timeout_mins: int | None = None) -> None:
        engine = self.engine
        rec = await engine.db.run(db_stacks.get_stack, stack_id)
        if rec is None:
            raise EntityNotFound(f"The Stack ({stack_id}) could not be found.")
        new = self._build(parent, template, parameters, files, timeout_mins,
                          name=rec.name, stack_id=stack_id, action=UPDATE)
        new.info = dataclasses.replace(info_from_record(rec), timeout_mins=timeout_mins)
        new_stack.validate(engine, new)
        # the validation slots go before the stored child is loaded: a big group's two
        # sets of 10,000 slots are never in memory together
        new.slots.clear()
        async with engine.claim(stack_id, rec.name, UPDATE) as claim:
            current = await engine.load(stack_id)
            await self._launch_update(claim, current, new)

    async def _launch_update(self, claim: Claim, current: LiveStack, new: LiveStack) -> None:
        engine = self.engine
        hidden = sorted(getattr(new.bound.parameters, "hidden", ()) or ())
        template_id = await engine.db.write(
            db_stacks.create_raw_template, new.template.raw, new.environment.env_as_dict(),
            new.files, hidden)
        prev = new.info.raw_template_id
        new.info.raw_template_id, new.info.prev_raw_template_id = template_id, prev
        await engine.recorder.stack(new, UPDATE, IN_PROGRESS, stack_started(UPDATE), extra={
            "raw_template_id": template_id, "prev_raw_template_id": prev})
        claim.launch(lambda: update_action.run_update(engine, current, new,
                                                      allow_rollback=False))

    async def delete(self, stack_id: str) -> bool:
        engine = self.engine
        rec = await engine.db.run(db_stacks.get_stack, stack_id)
        if rec is None:
            return False
        async with engine.claim(stack_id, rec.name, DELETE, preempt=True,
                                take_from_dead=True) as claim:
            stack = await engine.load(stack_id)
            await engine.recorder.stack(stack, DELETE, IN_PROGRESS, stack_started(DELETE))
            claim.launch(lambda: delete_action.run_delete(engine, stack), stack)
        return True

    async def action(self, stack_id: str, action: str) -> None:
        engine = self.engine
        rec = await engine.db.run(db_stacks.get_stack, stack_id)
        if rec is None:
            raise EntityNotFound(f"The Stack ({stack_id}) could not be found.")
        async with engine.claim(stack_id, rec.name, action) as claim:
            stack = await engine.load(stack_id)
            await engine.recorder.stack(stack, action, IN_PROGRESS, stack_started(action))
            claim.launch(lambda: lifecycle.run_simple(engine, stack, action))

    async def wait(self, stack_id: str) -> tuple[str, str, str]:
        engine = self.engine
        delay = engine.poller.initial
        while True:
            await engine.wait(stack_id)
            rec = await engine.db.run(db_stacks.get_stack, stack_id, show_deleted=True)
            if rec is None:
                return DELETE, "COMPLETE", ""
            if rec.deleted_at is not None:
                return DELETE, "COMPLETE", rec.status_reason
            if rec.status != IN_PROGRESS or engine.running(stack_id):
                if rec.status != IN_PROGRESS:
                    return rec.action, rec.status, rec.status_reason
                continue
            # another engine (or a recovery) is running it: poll
            await asyncio.sleep(delay)
            delay = min(delay * 2, engine.poller.maximum)

    async def outputs(self, stack_id: str) -> dict[str, Any]:
        rec = await self.engine.db.run(db_stacks.get_stack, stack_id, show_deleted=True)
        if rec is None:
            return {}
        return {o["output_key"]: o.get("output_value") for o in (rec.outputs or [])}

    async def output_errors(self, stack_id: str) -> dict[str, str]:
        rec = await self.engine.db.run(db_stacks.get_stack, stack_id, show_deleted=True)
        if rec is None:
            return {}
        return {o["output_key"]: str(o["output_error"]) for o in (rec.outputs or [])
                if o.get("output_error")}

    async def members(self, stack_id: str) -> list[ChildMember]:
        child = await self.engine.load(stack_id)
        snippets = child.template.raw.get("resources") or {}
        oldest = dt.datetime.min
        slots = sorted(child.slots.values(), key=lambda s: (
            s.state.status != FAILED, s.created_at or oldest, s.name))
        return [ChildMember(name=s.name, failed=s.state.status == FAILED,
                            snippet=snippets.get(s.name)) for s in slots]

    async def checkpoint(self, parent: Resource, token: Token) -> None:
        slot = self._parent_stack(parent).slots.get(parent.name)
        if slot is not None and slot.plugin is parent:
            await self.engine.recorder.progress(slot, token)

    async def save_resource(self, stack: LiveStack, name: str) -> None:
        """Persist a resource's data and metadata changed outside any action of its
        stack (a scaling group resized by a policy's signal) and, the stack being at
        rest, its outputs, which may read them."""
        from kiln.engine.model import outputs
        from kiln.engine.runtime import hooks

        slot = stack.slots.get(name)
        if slot is None:
            return
        await hooks.save_side_state(self.engine, stack, slot, metadata=True)
        if stack.info.status != IN_PROGRESS:
            await self.engine.db.write(db_stacks.update_stack, stack.info.id,
                                       {"outputs": outputs.resolve_all(stack)})

    def action_timeout(self, parent: Resource) -> float:
        return float(self.engine.timeout_seconds(self._parent_stack(parent)))
