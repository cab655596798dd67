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
from collections.abc import Callable, Mapping
from typing import Any

from kiln.engine.actions import admit, lifecycle
from kiln.engine.actions import create as create_action
from kiln.engine.actions import delete as delete_action
from kiln.engine.actions import update as update_action
from kiln.engine.actions.identity import Identities
from kiln.engine.actions.software import SoftwareConfigs
from kiln.engine.model.context import RequestContext
from kiln.engine.model.live_stack import IssuedKeypair, LiveStack, StackInfo
from kiln.engine.model.stack_runtime import StackRuntime
from kiln.engine.model.states import CREATE, DELETE, FAILED, IN_PROGRESS, UPDATE, stack_started
from kiln.engine.runtime.budget import NestedBudget, Share
from kiln.engine.runtime.claims import Claim
from kiln.engine.runtime.engine import Engine
from kiln.engine.store.loader import info_from_record
from kiln.errors import EntityNotFound, KilnError, RequestLimitExceeded
from kiln.resources.base import Resource, Token
from kiln.resources.nested import NAME_KEY, ChildMember
from kiln.resources.runtime import AlarmStore, SoftwareConfigStore, SoftwareDeploymentStore
from kiln.resources.stores import ServiceConfigStore, ServiceDeploymentStore


class NestedOps:
    """:class:`~kiln.engine.model.live_stack.PluginServices` of one engine service."""

    def __init__(self, engine: Callable[[], Engine], identities: Identities,
                 software: SoftwareConfigs) -> None:
        #: the engine running this service's stacks (built after its plugin services)
        self._engine = engine
        #: keypairs and stack users, software configs and deployments: parts on the
        #: store, shared with EngineService (no call climbs back up into the service)
        self.identities = identities
        self.software = software
        #: the resources of running child-stack actions held in memory at once
        self.budget = NestedBudget()

    @property
    def engine(self) -> Engine:
        return self._engine()

    # -- the service's stores, for plugins ----------------------------------------------
    def alarms(self, project_id: str, stack_id: str) -> AlarmStore:
        return self.engine.store.stack_alarms(project_id, stack_id)

    def config_store(self, owner: RequestContext) -> SoftwareConfigStore:
        return ServiceConfigStore(self.software, owner)

    async def issue_ec2_keypair(self, *, project_id: str, user_id: str, stack_id: str,
                                resource_name: str) -> IssuedKeypair:
        return await self.identities.issue_keypair(
            project_id=project_id, user_id=user_id, stack_id=stack_id,
            resource_name=resource_name)

    async def delete_ec2_keypair(self, access_key: str) -> bool:
        return await self.identities.revoke_keypair(access_key)

    # -- stack domain users (keystone mode; kiln.engine.actions.identity) ----------------
    def keystone_stack_users(self) -> bool:
        return self.identities.admin is not None

    async def stack_domain_user(self, info: StackInfo, resource_name: str, *,
                                username: str, password: str | None) -> dict[str, Any]:
        return await self.identities.stack_domain_user(
            stack_id=info.id, owner_project_id=info.project_id,
            resource_name=resource_name, username=username, password=password)

    async def stack_user_keypair(self, info: StackInfo, resource_name: str, *,
                                 user_resource: str, username: str) -> IssuedKeypair:
        return await self.identities.stack_user_keypair(
            stack_id=info.id, owner_project_id=info.project_id,
            resource_name=resource_name, user_resource=user_resource, username=username)

    async def set_stack_user_enabled(self, info: StackInfo, resource_name: str,
                                     enabled: bool) -> None:
        await self.identities.set_stack_user_enabled(stack_id=info.id,
                                                     resource_name=resource_name,
                                                     enabled=enabled)

    async def remove_stack_users(self, info: StackInfo) -> None:
        await self.identities.remove_stack_users(
            stack_id=info.id, owner_project_id=info.project_id,
            top_level=info.owner_id is None)

    async def resource_ec2_keypair(self, stack_id: str,
                                   resource_name: str) -> IssuedKeypair | None:
        return await self.identities.resource_keypair(stack_id, resource_name)

    def deployment_store(self, owner: RequestContext,
                         stack_user_project_id: str | None) -> SoftwareDeploymentStore:
        return ServiceDeploymentStore(self.software, owner,
                                      stack_user_project_id=stack_user_project_id)

    # -- helpers ------------------------------------------------------------------------
    @staticmethod
    def _parent_stack(parent: Resource) -> LiveStack:
        runtime = parent.runtime
        if not isinstance(runtime, StackRuntime):
            raise TypeError(f"{parent.name} does not run in a live stack of this engine")
        return runtime.stack

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
        # the children of a group are the same body again and again: parsed once
        tmpl = engine.template_cache.load(template, files,
                                          max_size=engine.conf.max_template_size)
        env = pstack.environment.child(dict(parameters), resource_name=parent.name)
        if timeout_mins is None:
            # as Heat's StackResource: a child given no timeout has its parent's, so a
            # parent's timeout also ends the child's running actions (a deployment
            # waiting for its server is then cancelled, and marked FAILED)
            timeout_mins = info.timeout_mins
        opts = admit.Options(timeout_mins=timeout_mins, disable_rollback=True)
        parent_ref = admit.Parent(stack_id=info.id, root_stack_id=info.root_stack_id,
                                     nested_depth=info.nested_depth,
                                     resource_name=parent.name, facade=self._facade(parent))
        return admit.build(engine, name=name, project_id=info.project_id, template=tmpl,
                              environment=env, files=files, opts=opts,
                              username=info.username, user_id=info.user_id,
                              parent=None if detached else parent_ref, stack_id=stack_id,
                              action=action)

    def build_child(self, parent: Resource, template: Mapping[str, Any],
                    parameters: Mapping[str, Any], files: Mapping[str, str] | None, *,
                    name: str) -> LiveStack:
        """The child stack ``parent`` would make, bound and validated but not stored
        (for a preview: its id is "None", as Heat's preview shows a stack not made)."""
        child = self._build(parent, template, parameters, files, None, name=name,
                            stack_id="None")
        admit.validate(self.engine, child)
        return child

    # -- NestedStackOps -----------------------------------------------------------------
    async def create(self, parent: Resource, *, template: Mapping[str, Any],
                     parameters: Mapping[str, Any], files: Mapping[str, str] | None = None,
                     timeout_mins: int | None = None) -> str:
        engine = self.engine
        # the share before the child is built: its slots are what the budget bounds
        share = await self.budget.acquire(_declared(template),
                                          parent_stack_id=self._parent_stack(parent).info.id)
        try:
            name = parent.physical_resource_name()
            child = self._build(parent, template, parameters, files, timeout_mins,
                                name=name)
            admit.validate(engine, child)
            async with engine.claims.claim_new(child.info.id, CREATE) as claim:
                await admit.store(engine, child)
                parent.data[NAME_KEY] = name
                share.bind(child.info.id)
                share.until_done(claim.launch(
                    lambda: create_action.run_create(engine, child), child))
        except BaseException:
            share.release()
            raise
        return child.info.id

    async def update(self, parent: Resource, stack_id: str, *, template: Mapping[str, Any],
                     parameters: Mapping[str, Any], files: Mapping[str, str] | None = None,
                     timeout_mins: int | None = None) -> None:
        engine = self.engine
        rec = await engine.store.stacks.get(stack_id)
        if rec is None:
            raise EntityNotFound(f"The Stack ({stack_id}) could not be found.")
        # an update holds the stored resources and the new ones
        share = await self.budget.acquire(
            _declared(template) + await engine.store.resources.count(stack_id),
            parent_stack_id=rec.owner_id, stack_id=stack_id)
        try:
            new = self._build(parent, template, parameters, files, timeout_mins,
                              name=rec.name, stack_id=stack_id, action=UPDATE)
            # a parent updating with converge converges its child too
            new.converge = self._parent_stack(parent).converge
            new.info = dataclasses.replace(info_from_record(rec),
                                           timeout_mins=new.info.timeout_mins)
            admit.validate(engine, new)
            # the validation slots go before the stored child is loaded: a big group's two
            # sets of 10,000 slots are never in memory together
            new.slots.clear()
            async with engine.claim(stack_id, rec.name, UPDATE) as claim:
                current = await engine.load(stack_id)
                await self._launch_update(claim, current, new, share)
        except BaseException:
            share.release()
            raise

    async def _launch_update(self, claim: Claim, current: LiveStack, new: LiveStack,
                             share: Share) -> None:
        engine = self.engine
        hidden = sorted(new.bound.parameters.hidden)
        template_id = await engine.store.stacks.add_template(
            new.template.raw, new.environment.env_as_dict(), new.files, hidden)
        prev = new.info.raw_template_id
        new.info.raw_template_id, new.info.prev_raw_template_id = template_id, prev
        await engine.recorder.stack(new, UPDATE, IN_PROGRESS, stack_started(UPDATE), extra={
            "raw_template_id": template_id, "prev_raw_template_id": prev,
            "converge": new.converge})
        share.bind(current.info.id)
        share.until_done(claim.launch(lambda: update_action.run_update(
            engine, current, new, allow_rollback=False)))

    async def delete(self, stack_id: str) -> bool:
        engine = self.engine
        rec = await engine.store.stacks.get(stack_id)
        if rec is None:
            return False
        # the share before the child is loaded: its slots are what the budget bounds
        share = await self.budget.acquire(await engine.store.resources.count(stack_id),
                                          parent_stack_id=rec.owner_id, stack_id=stack_id)
        try:
            async with engine.claim(stack_id, rec.name, DELETE, preempt=True,
                                    take_from_dead=True) as claim:
                stack = await engine.load(stack_id)
                await engine.recorder.stack(stack, DELETE, IN_PROGRESS,
                                            stack_started(DELETE))
                share.bind(stack_id)
                share.until_done(claim.launch(
                    lambda: delete_action.run_delete(engine, stack), stack))
        except BaseException:
            share.release()
            raise
        return True

    async def action(self, stack_id: str, action: str) -> None:
        engine = self.engine
        rec = await engine.store.stacks.get(stack_id)
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
            rec = await engine.store.stacks.get(stack_id, show_deleted=True)
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
        rec = await self.engine.store.stacks.get(stack_id, show_deleted=True)
        if rec is None:
            return {}
        return {o["output_key"]: o.get("output_value") for o in (rec.outputs or [])}

    async def output_errors(self, stack_id: str) -> dict[str, str]:
        rec = await self.engine.store.stacks.get(stack_id, show_deleted=True)
        if rec is None:
            return {}
        return {o["output_key"]: str(o["output_error"]) for o in (rec.outputs or [])
                if o.get("output_error")}

    async def member_attributes(self, parent: Resource, stack_id: str) -> dict[str, Any]:
        wanted = self._parent_stack(parent).template.member_attribute_references(parent.name)
        if not wanted:
            return {}
        child = await self.engine.load(stack_id)
        values: dict[str, Any] = {}
        found = {"members": sorted(child.slots), "values": values}
        for key in sorted(wanted):
            name, _, attr = key.partition(".")
            slot = child.slots.get(name)
            if slot is None:
                continue
            try:
                values[key] = (slot.plugin.get_attribute(attr) if attr
                               else slot.plugin.reference_id())
            except KilnError:
                continue  # asked for again, it is the parent's "incorrect" attribute
        return found

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

    async def save_resource(self, stack: LiveStack, name: str, *,
                            event: tuple[str, str] | None = None) -> None:
        """Persist a resource's data and metadata changed outside any action of its
        stack (a scaling group resized by a policy's signal) and, the stack being at
        rest, its outputs, which may read them; ``event`` (status, reason) adds a
        ``SIGNAL`` event of the resource."""
        from kiln.engine.model import outputs
        from kiln.engine.runtime import hooks

        slot = stack.slots.get(name)
        if slot is None:
            return
        note = None
        if event is not None:
            note = hooks.resource_event(stack, slot, event[1], action="SIGNAL")
            note = dataclasses.replace(note, resource_status=event[0])
        await hooks.save_side_state(self.engine, stack, slot, metadata=True, event=note)
        if stack.info.status != IN_PROGRESS:
            await self.engine.store.stacks.save_outputs(stack.info.id,
                                                        outputs.resolve_all(stack))

    def action_timeout(self, parent: Resource) -> float:
        return float(self.engine.timeout_seconds(self._parent_stack(parent)))


def _declared(template: Mapping[str, Any]) -> int:
    """The resources a child template declares (HOT or CFN section), 1 if unreadable."""
    for key in ("resources", "Resources"):
        found = template.get(key) if isinstance(template, Mapping) else None
        if isinstance(found, Mapping):
            return max(1, len(found))
    return 1
