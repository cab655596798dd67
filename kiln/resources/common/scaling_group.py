"""The machinery every scaling group shares: a child stack of like members, resized by
nested-stack updates (OS::Heat::InstanceGroup, AWS::AutoScaling::AutoScalingGroup,
OS::Heat::AutoScalingGroup).

Members get Heat's 12-character short ids as names. Which members a new size keeps,
changes and adds is :func:`kiln.scaling.members.member_definitions`: a scale-down drops
failed members, then the oldest. A rolling update (a new member definition under a
rolling-update policy) is a series of child updates, one per batch, with Heat's batch
arithmetic (:func:`kiln.resources.common.group_batches.batch_steps`) and pauses between
batches; the token carries the steps and the new member definition, and each step is
checkpointed, so a resumed action continues from the step it reached.

The child template's outputs hold every member's reference (``refs_map``) and each
member attribute (``attr.<name>``) as maps by member name; after each child action the
group stores them with the list of live members (failed ones left out, oldest first),
so attributes are answered synchronously, as the other nested-stack plugins do.

Scaling outside an action (a policy's signal, :meth:`ScalingGroup.resize_to`) updates
the child the same way and then records the group's new state in its data and metadata.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping
from typing import Any

from kiln.errors import InvalidTemplateAttribute, KilnError, StackValidationFailed
from kiln.resources.base import Properties, ResourceFailure, Token, select_path, short_id
from kiln.resources.common.group_batches import batch_steps, step_timeout
from kiln.resources.nested import OUTPUTS_KEY, NestedStackResource
from kiln.scaling import cooldown
from kiln.scaling.members import Snippet, member_definitions
from kiln.template.definitions import ResourceDefinition

#: the live members (not failed), oldest first, as JSON
MEMBERS_KEY = "members"
REFS_OUTPUT = "refs_map"
ATTR_PREFIX = "attr."
CHILD_VERSION = {"heat_template_version": "2015-04-30"}
#: seconds a scaling request waits to learn whether the members stack is being changed
BUSY_PROBE = 0.05


def _stepped(token: Token) -> bool:
    return isinstance(token, dict) and "steps" in token


class ScalingGroup(NestedStackResource):
    """Base of the scaling groups; subclasses say what a member is and how big the
    group should be."""

    # -- what subclasses provide ---------------------------------------------------------
    def member_snippet(self, properties: Properties) -> dict[str, Any]:
        """The HOT definition of one new member."""
        raise NotImplementedError

    def initial_size(self, properties: Properties) -> int:
        raise NotImplementedError

    def target_size(self, properties: Properties, current: int) -> int:
        """The size an update of the group's properties asks for."""
        raise NotImplementedError

    def rolling_policy(self, properties: Properties) -> tuple[int, int, float] | None:
        """``(min_in_service, max_batch_size, pause_seconds)`` when member definition
        changes roll out in batches, else None (existing members keep their old one)."""
        return None

    def child_parameters(self, properties: Properties) -> Mapping[str, Any]:
        return {}

    def scaling_cooldown(self) -> float | None:
        """The group's own cooldown (None: groups without one never record it)."""
        return None

    def records_cooldown(self) -> bool:
        return False

    # -- the child template -------------------------------------------------------------
    def _member_type(self, snippet: Snippet) -> str:
        return str(snippet.get("type", ""))

    def _member_attribute_names(self, member_type: str) -> list[str]:
        from kiln.resources.registry import global_registry

        stack = getattr(self.runtime, "stack", None)
        resolved = member_type
        if stack is not None:
            try:
                resolved = stack.environment.registry.resolve(member_type, None)
            except StackValidationFailed:  # a registry loop: named by the create itself
                resolved = member_type
            mapped = self.child_parameters(self.properties).get("resource_registry") or {}
            seen = 0
            while resolved in mapped and seen < 5:
                resolved = stack.environment.registry.resolve(str(mapped[resolved]), None)
                seen += 1
        if resolved in global_registry():
            return list(global_registry().get(resolved).attributes_schema)
        if stack is None:
            return []
        try:
            from kiln.resources.provider import provider_class

            return list(provider_class(resolved, stack.files).attributes_schema)
        except KilnError:  # not a type nor a template the files hold: no attributes
            return []

    def _template(self, members: list[tuple[str, Snippet]]) -> dict[str, Any]:
        names = [n for n, _ in members]
        outputs: dict[str, Any] = {
            REFS_OUTPUT: {"value": {n: {"get_resource": n} for n in names}}}
        kinds = {self._member_type(s) for _, s in members}
        for kind in sorted(kinds):
            for attr in self._member_attribute_names(kind):
                outputs[ATTR_PREFIX + attr] = {
                    "value": {n: {"get_attr": [n, attr]} for n in names}}
        return {**CHILD_VERSION, "resources": {n: dict(s) for n, s in members},
                "outputs": outputs}

    def child_template(self, properties: Properties) -> Mapping[str, Any]:
        size = self.initial_size(properties)
        return self._template(member_definitions([], self.member_snippet(properties),
                                                 size, size, short_id))

    async def _existing(self, child: str) -> list[tuple[str, Snippet]]:
        return [(m.name, m.snippet) for m in await self.runtime.nested.members(child)
                if m.snippet is not None]

    async def _record_members(self) -> None:
        child = self.child_id
        names = [] if child is None else [
            m.name for m in await self.runtime.nested.members(child) if not m.failed]
        self.data[MEMBERS_KEY] = json.dumps(names)

    async def _finish(self, token: Token) -> bool:
        done = await super()._finish(token)
        if self.child_id is not None and not (isinstance(token, dict)
                                              and token.get("deleting")):
            await self._record_members()
        return done

    # -- lifecycle ----------------------------------------------------------------------
    async def check_create_complete(self, token: Token) -> bool:
        await self._finish(token)
        self._mark_finished(f"ExactCapacity : {self.current_size()}")
        return True

    async def handle_update(self, new_definition: ResourceDefinition,
                            new_properties: Properties, prop_diff: Mapping[str, Any]) -> Token:
        self.definition = new_definition
        self.properties = new_properties
        child = self.child_id
        if child is None:
            return None
        existing = [(m.name, m.failed) for m in await self.runtime.nested.members(child)]
        capacity = len(existing)
        live = sum(1 for _, failed in existing if not failed)
        member = self.member_snippet(new_properties)
        steps: list[list[Any]] = []
        policy = self.rolling_policy(new_properties)
        if policy is not None and self._definition_changed(prop_diff):
            min_in_service, batch, pause = policy
            want = self.target_size(new_properties, live)
            target = min(want or capacity, capacity)
            batches = batch_steps(target, capacity, batch, min_in_service)
            steps = [[s.capacity, s.updates, pause if i else 0.0]
                     for i, s in enumerate(batches)]
        else:
            pause = 0.0
        steps.append([self.target_size(new_properties, live), 0, 0.0])
        try:
            minutes = step_timeout(self.runtime.nested.action_timeout(self), len(steps) - 1,
                                   pause)
        except ValueError as exc:
            raise ResourceFailure(str(exc), exc_type="ValueError") from None
        token = {"stack_id": child, "steps": steps, "member": member, "running": False,
                 "resume_at": None, "timeout_mins": minutes}
        return token

    def _definition_changed(self, prop_diff: Mapping[str, Any]) -> bool:
        return bool(prop_diff)

    async def check_update_complete(self, token: Token) -> bool:
        if not _stepped(token):
            return await super().check_update_complete(token)
        if not await self._advance(token):
            return False
        self._mark_finished(f"ExactCapacity : {self.current_size()}")
        return True

    def poll_delay(self, token: Token) -> float | None:
        if _stepped(token) and token.get("resume_at") is not None:
            return max(float(token["resume_at"]) - self.runtime.now(), 0.0)
        return None

    async def _advance(self, token: dict[str, Any]) -> bool:
        while True:
            if token["running"]:
                await self._finish(token)
                token = self.next_token(token, running=False)
            if not token["steps"]:
                return True
            pause = float(token["steps"][0][2])
            if pause > 0:
                if token["resume_at"] is None:
                    token = self.next_token(token, resume_at=self.runtime.now() + pause)
                    await self.runtime.nested.checkpoint(self, token)
                if self.runtime.now() < token["resume_at"]:
                    return False
            (size, changes, _), *rest = token["steps"]
            child = token["stack_id"]
            members = member_definitions(await self._existing(child), token["member"],
                                         int(size), int(changes), short_id)
            await self.runtime.nested.update(
                self, child, template=self._template(members),
                parameters=self.child_parameters(self.properties), files=self.child_files(),
                timeout_mins=token["timeout_mins"])
            token = self.next_token(token, steps=rest, running=True, resume_at=None)
            await self.runtime.nested.checkpoint(self, token)

    async def handle_delete(self) -> Token:
        token = await super().handle_delete()
        return {**token, "deleting": True} if isinstance(token, dict) else token

    # -- scaling outside an action -------------------------------------------------------
    def _mark_finished(self, reason: str, *, size_changed: bool = True) -> None:
        if self.records_cooldown():
            self.metadata = cooldown.finished(self.metadata, cooldown=self.scaling_cooldown(),
                                              reason=reason, now=self.runtime.now(),
                                              size_changed=size_changed)

    async def check_scaling(self, cooldown_secs: float | None) -> None:
        """Refuse a scaling request (:class:`cooldown.ScalingRefused`) while another runs
        or the cooldown lasts; otherwise mark scaling as started. A mark left by a
        process that died mid-scale is dropped once the members stack is no longer
        being changed (its action was resumed or failed by recovery)."""
        metadata = dict(self.metadata)
        if metadata.get(cooldown.IN_PROGRESS) and not await self._child_busy():
            metadata[cooldown.IN_PROGRESS] = False
            metadata.pop(cooldown.STARTED, None)
        self.metadata = cooldown.check_allowed(
            metadata, group=self.name, cooldown=cooldown_secs, now=self.runtime.now(),
            stale_after=self.runtime.nested.action_timeout(self))

    async def _child_busy(self) -> bool:
        child = self.child_id
        if child is None:
            return False
        try:
            await asyncio.wait_for(self.runtime.nested.wait(child), BUSY_PROBE)
        except TimeoutError:
            return True
        return False

    async def refresh(self) -> None:
        """Re-read the members and outputs from the members stack (they may have moved
        while no action of the group ran: a resize cut short by a crash)."""
        child = self.child_id
        if child is None:
            return
        outputs = await self.runtime.nested.outputs(child)
        self.data[OUTPUTS_KEY] = json.dumps(outputs, sort_keys=True, default=str)
        await self._record_members()

    async def resize_to(self, size: int, *, cooldown_secs: float | None, reason: str) -> None:
        """Change the group to ``size`` members now (a policy's signal): one child
        update, then the group's members, outputs and cooldown recorded. A failure
        leaves the cooldown as it was and lets the next request scale."""
        child = self.child_id
        if child is None:
            raise ResourceFailure("The group has no members stack")
        changed = False
        try:
            members = member_definitions(await self._existing(child),
                                         self.member_snippet(self.properties), size, 0,
                                         short_id)
            await self.runtime.nested.update(
                self, child, template=self._template(members),
                parameters=self.child_parameters(self.properties), files=self.child_files(),
                timeout_mins=max(int(self.runtime.nested.action_timeout(self) // 60), 1))
            await self._finish({"stack_id": child})
            changed = True
        finally:
            try:
                await self._record_members()
            finally:
                if self.records_cooldown():
                    self.metadata = cooldown.finished(
                        self.metadata, cooldown=cooldown_secs, reason=reason,
                        now=self.runtime.now(), size_changed=changed)

    # -- attributes -----------------------------------------------------------------------
    def member_names(self) -> list[str]:
        raw = self.data.get(MEMBERS_KEY)
        return list(json.loads(raw)) if raw else []

    def current_size(self) -> int:
        return len(self.member_names())

    def refs_map(self) -> dict[str, Any]:
        refs = self.nested_outputs().get(REFS_OUTPUT) or {}
        return {n: refs[n] for n in self.member_names() if n in refs}

    def member_values(self, attr: str) -> dict[str, Any]:
        outputs = self.nested_outputs()
        key = ATTR_PREFIX + attr
        if not outputs:
            return {}
        if key not in outputs:
            raise InvalidTemplateAttribute(
                f"The Referenced Attribute ({self.name} {attr}) is incorrect.")
        values = outputs[key] or {}
        return {n: values.get(n) for n in self.member_names() if n in values}

    def member_attribute(self, index: str, path: tuple[Any, ...]) -> Any:
        """``resource.<i>[.attr...]``: the i-th live member's reference or attribute."""
        names = self.member_names()
        try:
            name = names[int(index)]
        except (ValueError, IndexError):
            from kiln.errors import EntityNotFound

            raise EntityNotFound(f"Member '{index}' not found in group resource "
                                 f"'{self.name}'.") from None
        if not path:
            return self.refs_map().get(name)
        return select_path(self.member_values(str(path[0])).get(name), path[1:])

    def reference_id(self) -> str:
        return self.resource_id or self.name

    @staticmethod
    def as_path(name: str, path: tuple[Any, ...]) -> tuple[str, tuple[Any, ...]]:
        """``resource.0.attr`` written as one key: split off the member index."""
        parts = name.split(".", 2)
        index = parts[1] if len(parts) > 1 else ""
        return index, (tuple(parts[2:]) + path)
