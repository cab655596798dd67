"""Stack update (and the rollback that re-applies the previous template).

One forward walk over the *new* template's graph decides and applies each resource's
:class:`~kiln.engine.model.states.Change` when its requirements are done. A resource a
replacement superseded is deleted during that walk as soon as nothing can need it
(:mod:`kiln.engine.actions.superseded`, as Heat's convergence engine does); a cleanup walk then
deletes, dependants first, the rest: everything the new template no longer has, and old
resources still waiting. Until deleted, a replaced resource keeps its row
(``replaced_by``), so a rollback after a failure puts back the old resources still there
(those whose dependants had not all been updated) instead of building them again.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from kiln.db.records import NewResource, StackValues
from kiln.engine.actions import converge, external
from kiln.engine.actions.create import create_resource, stored_properties
from kiln.engine.actions.delete import delete_resource, delete_with_row, needs_delete
from kiln.engine.actions.plan import decide, replace_kind
from kiln.engine.actions.superseded import SupersededCleaner
from kiln.engine.model import outputs
from kiln.engine.model.implicit import add_implicit_requirements
from kiln.engine.model.live_stack import LiveStack, Slot
from kiln.engine.model.slots import make_slot
from kiln.engine.model.states import (
    CHECK,
    COMPLETE,
    DELETE,
    FAILED,
    IN_PROGRESS,
    INIT,
    ROLLBACK,
    UPDATE,
    Change,
    resource_failed,
    stack_completed,
    stack_started,
)
from kiln.engine.runtime import hooks
from kiln.engine.runtime.engine import Engine
from kiln.engine.runtime.runner import is_nested, run_action
from kiln.engine.runtime.scheduler import Deadline, Outcome, traverse
from kiln.engine.store.loader import StoredProperties, stale_slots
from kiln.graph import Graph
from kiln.resources.base import Properties, ResourceFailure, UpdateReplace
from kiln.template.definitions import ResourceDefinition, name_set


@dataclass
class Target:
    """The stack as the new template wants it, plus what the update must remove."""

    stack: LiveStack
    definitions: dict[str, ResourceDefinition]
    #: slots to delete, by identity (in the order they were doomed)
    doomed: dict[int, Slot] = field(default_factory=dict)
    fresh: set[str] = field(default_factory=set)
    changes: dict[str, Change] = field(default_factory=dict)
    cleaner: SupersededCleaner | None = None
    #: the stack before the update: the slots it dooms keep its runtime, whose back
    #: reference to it is weak, so it must live until they are deleted
    previous: LiveStack | None = None
    #: resources whose update in place recovery finished from its persisted token (the
    #: engine that began it went away): they take the new definition without the plugin
    #: updating them a second time
    settled: frozenset[str] = frozenset()

    def doom(self, slot: Slot) -> None:
        self.doomed[id(slot)] = slot


def replacement_reason(slot: Slot, stack: LiveStack) -> str:
    """The reason Heat's convergence engine writes on a resource it is replacing."""
    kind = slot.definition.type.rsplit("::", 1)[-1]
    return (f'The Resource {kind} "{slot.name}" [{slot.physical_id}] Stack '
            f'"{stack.info.name}" [{stack.info.id}] requires replacement.')


def build_target(current: LiveStack, new: LiveStack, *, restore_replaced: bool) -> Target:
    """Move ``current``'s slots into ``new`` (already bound, no slots yet)."""
    definitions = new.bound.resource_definitions()
    deps = new.bound.dependencies()
    target = Target(new, definitions, previous=current)
    stale = stale_slots(current)
    # a replaced resource the restored template does not have is deleted, not restored
    restorable = {s.name: s for s in stale
                  if restore_replaced and needs_delete(s) and s.name in definitions}
    for slot in stale:
        if restorable.get(slot.name) is not slot:
            target.doom(slot)
    for name, slot in current.slots.items():
        if name not in definitions:
            target.doom(slot)
    for name, definition in definitions.items():
        found = current.slots.get(name)
        old = restorable.get(name)
        if old is not None:
            # rollback: the resource a failed replacement superseded comes back
            if found is not None:
                target.doom(found)
            found = old
            found.replaced_by = None
            # it was made from the template being restored, not the failed one
            found.definition = found.plugin.definition = definition
        if found is None:
            found = make_slot(new, definition)
            target.fresh.add(name)
        slot = found
        slot.plugin.runtime = new.runtime
        slot.requires = name_set(deps.get(name, ()))
        new.slots[name] = slot
    # before the new rows are stored, so that they keep the implicit requirements too
    add_implicit_requirements(new)
    return target


async def store_fresh(engine: Engine, target: Target) -> None:
    info = target.stack.info
    rows = [NewResource(stack_id=info.id, root_stack_id=info.root_stack_id, name=name,
                        type=target.definitions[name].type,
                        requires=sorted(target.stack.slots[name].requires))
            for name in target.fresh]
    restored = [s.db_id for s in target.stack.slots.values()
                if s.replaces is not None and s.replaced_by is None and s.db_id]
    created = await engine.store.resources.add(rows, restored=restored)
    for name, (rid, ruuid, created_at) in created.items():
        slot = target.stack.slots[name]
        slot.db_id, slot.uuid, slot.created_at = rid, ruuid, created_at


async def replace(engine: Engine, target: Target, old: Slot, definition: ResourceDefinition,
                  change: Change, deadline: Deadline,
                  resolved: Properties | None = None) -> None:
    """Replace ``old`` (whatever its update recorded is the caller's: see
    :func:`update_one`). ``resolved``: the new definition's properties as the plan
    resolved them, which the replacement's create then uses instead of resolving and
    validating them a second time."""
    stack = target.stack
    old_class = type(old.plugin)
    if old.state.properties_data is not None:
        # the old resource now only waits for its delete, which rarely reads its
        # properties: keep them as stored, validated again only if read
        old.plugin.properties = StoredProperties(old.plugin, old.state.properties_data)
    # nothing compares the old definition again: let the old template's snippets go
    old.definition = old.plugin.definition = old.definition.superseded()
    if change is Change.REPLACE_DBC:
        await delete_resource(engine, stack, old, deadline)
    new = make_slot(stack, definition, requires=old.requires)
    new.replaces = old.db_id
    row = NewResource(stack_id=stack.info.id, root_stack_id=stack.info.root_stack_id,
                      name=definition.name, type=definition.type,
                      requires=sorted(old.requires), replaces=old.db_id)
    new.db_id, new.uuid, new.created_at = await engine.store.resources.add_replacement(
        row, old.db_id)
    old.replaced_by = new.db_id
    stack.slots[definition.name] = new
    target.doom(old)
    if target.cleaner is not None:
        target.cleaner.superseded(definition.name, old)
    if type(new.plugin) is not old_class:
        resolved = None  # another class: its own schema decides
    await create_resource(engine, stack, new, deadline, resolved=resolved)


async def update_one(engine: Engine, target: Target, name: str, deadline: Deadline) -> None:
    stack = target.stack
    slot = stack.slots[name]
    definition = target.definitions[name]
    new_type, cls = stack.plugin_class(definition)
    existing = None if name in target.fresh else slot
    if existing is not None and new_type == slot.type_name and cls is not type(slot.plugin):
        # same type, new implementation (a provider template whose text changed): the
        # resource keeps its state and continues with the new class
        old_props = slot.plugin.properties
        slot.plugin = cls(name, slot.definition, stack.runtime, slot.state)
        slot.plugin.properties = old_props
    if (existing is not None and new_type == slot.type_name
            and not (existing.state.action == INIT and existing.state.status == COMPLETE)
            and external.skips_update(stack, slot, definition)):
        # before the properties are even resolved: Heat skips an external resource's
        # update without validating its new properties
        slot.definition = slot.plugin.definition = definition
        target.changes[name] = Change.NOOP
        return
    replace_failed = None
    if (existing is not None and existing.state.status == FAILED
            and existing.state.action != CHECK and new_type == slot.type_name):
        # Heat's needs_replace_failed: some plugins look at their object first
        try:
            replace_failed = await slot.plugin.replaces_when_failed()
        except ResourceFailure:
            replace_failed = True        # the object cannot be read: replace it
    decision = decide(stack, existing, definition, new_type,
                      replace_failed=replace_failed)
    target.changes[name] = decision.change
    # breakpoints for every resource the update reaches, even one it leaves unchanged
    # (Heat: inside Resource.update, before it decides whether anything changes)
    if decision.change is not Change.CREATE:
        await hooks.pause(engine, stack, slot, "pre", UPDATE)
    hooked = decision.change in (Change.UPDATE, Change.REPLACE_CBD, Change.REPLACE_DBC)
    plugin = slot.plugin
    if decision.change is Change.CREATE:
        if existing is not None:  # a row that was never created: rebuild on it
            fresh = make_slot(stack, definition, requires=slot.requires)
            fresh.db_id, fresh.uuid, fresh.created_at = slot.db_id, slot.uuid, slot.created_at
            fresh.saved_data = slot.saved_data
            stack.slots[name] = slot = fresh
        await create_resource(engine, stack, slot, deadline)
    elif decision.change is Change.NOOP:
        slot.definition = plugin.definition = definition
        if decision.properties is not None:
            plugin.properties = decision.properties
    elif decision.change is Change.UPDATE:
        props, diff = decision.properties, decision.prop_diff or {}
        assert props is not None

        settled = name in target.settled

        async def handle() -> Any:
            if settled:
                return None
            return await plugin.handle_update(definition, props, diff)

        async def check(token: Any) -> bool:
            return True if settled else await plugin.check_update_complete(token)

        def adopt() -> None:
            slot.definition = plugin.definition = definition
            plugin.properties = props
            slot.state.properties_data = stored_properties(props)
            if definition.metadata is not None:
                meta = stack.runtime.resolve(definition.metadata)
                if isinstance(meta, dict):
                    slot.state.metadata = plugin.updated_metadata(meta)

        try:
            await run_action(engine.recorder, engine.poller, stack, slot, UPDATE, handle,
                             check, on_complete=adopt,
                             abort_reason=deadline.reason)
        except UpdateReplace as exc:  # the plugin found out only now
            await engine.recorder.resource(stack, slot, UPDATE, COMPLETE, exc.status_reason
                                           or replacement_reason(slot, stack))
            target.changes[name] = replace_kind(plugin)
            await replace(engine, target, slot, definition, replace_kind(plugin), deadline)
    else:
        if not decision.reason:
            # a property change rules out an update in place: Heat records the old
            # resource's UPDATE ending in "requires replacement". A replacement decided
            # before any update is tried (a new type, a failed or deleted resource)
            # leaves its state as it was, so a rollback that restores it shows it
            # unchanged (Heat 27, seen on the peer)
            # both in one turn: one recorder flush, the row written once (its last
            # state), both events in order; nothing happens between the two
            began = engine.recorder.resource(stack, slot, UPDATE, IN_PROGRESS)
            await engine.recorder.resource(stack, slot, UPDATE, COMPLETE,
                                           replacement_reason(slot, stack))
            await began
        await replace(engine, target, slot, definition, decision.change, deadline,
                      decision.properties)
    if hooked:
        await hooks.pause(engine, stack, stack.slots[name], "post", UPDATE)


async def cleanup(engine: Engine, target: Target, deadline: Deadline) -> Outcome:
    """Delete the doomed slots, dependants first (by their old requirements)."""
    doomed = {str(s.db_id or id(s)): s for s in target.doomed.values()}
    by_name: dict[str, list[str]] = {}
    for key, slot in doomed.items():
        by_name.setdefault(slot.name, []).append(key)
    deps = {key: [k for req in slot.requires for k in by_name.get(req, []) if k != key]
            for key, slot in doomed.items()}
    graph = Graph.from_edges(list(doomed), deps).reversed()
    stack = target.stack
    target.doomed.clear()   # each slot is let go once deleted (``doomed`` holds them)

    async def visit(key: str) -> None:
        await delete_with_row(engine, stack, doomed[key], deadline)
        del doomed[key]

    return await traverse(graph, visit, action=UPDATE, limit=engine.limit,
                          deadline=deadline)


async def apply(engine: Engine, target: Target, *, action: str,
                deadline: Deadline, cancel: Any = None) -> Outcome:
    stack = target.stack
    await store_fresh(engine, target)
    graph = engine.graph(stack)
    cleaner = target.cleaner = SupersededCleaner(engine, stack, graph, target.doomed,
                                                 deadline)

    async def visit(name: str) -> None:
        try:
            await update_one(engine, target, name, deadline)
        except BaseException:
            cleaner.stop()   # the walk stops starting work: so do the early deletes
            raise
        cleaner.visited_ok(name)

    try:
        outcome = await traverse(graph, visit, action=action, limit=engine.limit,
                                 unlimited=lambda n: is_nested(stack.slots[n]),
                                 deadline=deadline, cancel=cancel)
    except BaseException:
        await asyncio.shield(cleaner.cancel())
        raise
    finally:
        target.cleaner = None
    if not outcome.ok:
        cleaner.stop()
    await cleaner.drain()
    if not outcome.ok:
        return outcome
    if cleaner.failure is not None:
        return Outcome(ok=False, reason=resource_failed(DELETE, cleaner.failure))
    return await cleanup(engine, target, deadline)


async def run_update(engine: Engine, current: LiveStack, new: LiveStack, *,
                     action: str = UPDATE, allow_rollback: bool = True,
                     settled: frozenset[str] = frozenset()) -> None:
    """``new`` is bound to the new template (no slots); the stack row is already
    ``<action>_IN_PROGRESS`` with the new raw template and locked. ``settled``: see
    :attr:`Target.settled`."""
    if new.info.raw_template_id:
        engine.template_cache.put(new.info.raw_template_id, new.template)
    if new.converge and action == UPDATE:
        # Heat's converge flag: drifted resources then differ from the template. Read
        # here, in the action the engine runs, so the request is answered at once
        await converge.take_live_state(engine, current)
    target = build_target(current, new, restore_replaced=(action == ROLLBACK))
    target.settled = settled
    del current   # its slots moved into ``new``; ``target.previous`` keeps it for the doomed
    deadline = Deadline(engine.timeout_seconds(new))
    cancel = engine.cancels.get(new.info.id)
    outcome = await apply(engine, target, action=action, deadline=deadline, cancel=cancel)
    values: StackValues = {"outputs": outputs.resolve_all(new)}
    if action == ROLLBACK:
        values["prev_raw_template_id"] = None  # the rollback is over (see run_rollback)
    if outcome.ok:
        await engine.recorder.stack(new, action, COMPLETE, stack_completed(action),
                                    extra=values)
        return
    if outcome.cancelled:
        rollback = allow_rollback and engine.cancel_rollback.pop(new.info.id, False)
    else:
        rollback = allow_rollback and not new.info.disable_rollback
    def record_failure() -> asyncio.Future[None]:
        return engine.recorder.stack(new, action, FAILED, outcome.reason, extra=values)

    if rollback:
        await run_rollback(engine, new.info.id, record_failure)
    else:
        await record_failure()


async def bound_to(engine: Engine, current: LiveStack, raw_template_id: int) -> LiveStack:
    """A stack with ``current``'s info, bound to a stored template (no slots yet): the
    target of a rollback, or of an update that recovery resumes."""
    raw = await engine.store.stacks.raw_template(raw_template_id)
    from kiln.engine.store.loader import environment_from_stored

    env = environment_from_stored(raw.environment, raw.files)
    new = LiveStack(current.info, template=engine.template_cache.get(raw), environment=env,
                    user_params=env.parameters, files=raw.files, support=engine.support,
                    parent_facade=current.parent_facade)
    new.bind(validate_params=False)
    return new


async def run_rollback(engine: Engine, stack_id: str,
                       record_failure: Callable[[], asyncio.Future[None]]) -> None:
    """Re-apply the previous template (Heat's update rollback).

    ``record_failure`` queues the failed update's own transition: it is queued in the
    same turn as ROLLBACK_IN_PROGRESS, so both are one write and nobody reads the stack
    as UPDATE_FAILED between them (a client waiting for the update to end would stop
    there, before the rollback it asked for; the corpus saw it).

    While the rollback runs, ``prev_raw_template_id`` names the template being rolled
    back from (it is cleared when the rollback ends): that is how recovery tells an
    update's rollback, which it resumes as an update to the restored template, from a
    create's rollback (no previous template), which deletes everything."""
    try:
        # the interrupted update's last writes first: a resource whose in-place update
        # completed as the cancel arrived was loaded IN_PROGRESS with its old
        # properties, so the rollback updated it with no difference and the new value
        # stayed (seen on MariaDB and PostgreSQL; test_queued.py)
        await engine.recorder.committed()
        current = await engine.load(stack_id)
        prev = current.info.prev_raw_template_id
        new = None if prev is None else await bound_to(engine, current, prev)
    except BaseException:
        await record_failure()  # the update's end is recorded whatever the rollback does
        raise
    if prev is None or new is None:
        await record_failure()
        return
    info = current.info
    failed = info.raw_template_id
    info.raw_template_id, info.prev_raw_template_id = prev, failed
    engine.cancels.get(stack_id, _NoCancel()).clear()
    recorded = record_failure()
    started = engine.recorder.stack(new, ROLLBACK, IN_PROGRESS, stack_started(ROLLBACK),
                                    extra={"raw_template_id": prev,
                                           "prev_raw_template_id": failed})
    await recorded
    await started
    await run_update(engine, current, new, action=ROLLBACK, allow_rollback=False)


class _NoCancel:
    def clear(self) -> None:
        pass
