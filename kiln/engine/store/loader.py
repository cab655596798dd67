"""Building a :class:`LiveStack` from a request or from the database.

Both paths end in the same place: a bound template and one slot per resource with its
plugin instance. A stored stack's resources get their persisted state back (resource id,
data, metadata, status, properties_data), so a plugin continues exactly where the last
action left it.

A stored template that no longer gives definitions (the template layer became stricter
since the stack was stored) still loads: its resources are built from their rows, so
the stack can always be deleted or abandoned.
"""

from __future__ import annotations

import weakref
from collections.abc import Mapping, Sequence
from typing import Any

from kiln.db.records import RawTemplateRecord, ResourceRecord, StackRecord
from kiln.engine.model.live_stack import LiveStack, Slot, StackInfo, StackSupport
from kiln.engine.model.slots import make_slot
from kiln.errors import KilnError
from kiln.resources.base import Properties, Resource, ResourceState
from kiln.template import load_template
from kiln.template.definitions import ResourceDefinition, name_set
from kiln.template.environment import Environment, build_environment
from kiln.template.template import Template, internal_keys


class StoredProperties(Properties):
    """A resource's stored property values, validated only when a plugin first reads
    them: most actions on a loaded stack (delete above all) never do.

    The plugin owns its properties, so they refer back to it weakly (a strong reference
    made a cycle for the collector, see kiln.engine.model.stack_runtime); validating
    needs only the plugin's class (an update may hand the values on to a new plugin
    of the same resource). Only stored values that no longer validate need the plugin
    itself, to resolve its definition's properties instead."""

    def __init__(self, plugin: Resource, data: Mapping[str, Any]) -> None:
        # deliberately not calling Properties.__init__: that is the deferred work
        self.__dict__["_kiln_pending"] = (type(plugin), plugin.name, weakref.ref(plugin),
                                          data)

    def unvalidated(self) -> Mapping[str, Any] | None:
        pending = self.__dict__.get("_kiln_pending")
        return None if pending is None else pending[3]

    def __getattr__(self, name: str) -> Any:
        pending = self.__dict__.pop("_kiln_pending", None)
        if pending is None:
            raise AttributeError(name)
        cls, resource_name, plugin_ref, data = pending
        try:
            real = cls.make_properties(resource_name, data)
        except KilnError:  # stored values that predate a schema change: the template's
            plugin = plugin_ref()
            if plugin is None:
                raise
            real = plugin.make_properties(
                plugin.name, plugin.runtime.resolve(plugin.definition.properties))
        self.__dict__.update(real.__dict__)
        return getattr(self, name)


def info_from_record(rec: StackRecord) -> StackInfo:
    return StackInfo(
        id=rec.id, name=rec.name, project_id=rec.project_id, action=rec.action,
        status=rec.status, status_reason=rec.status_reason,
        raw_template_id=rec.raw_template_id, prev_raw_template_id=rec.prev_raw_template_id,
        timeout_mins=rec.timeout, disable_rollback=rec.disable_rollback, tags=rec.tags,
        owner_id=rec.owner_id, root_stack_id=rec.root_stack_id,
        nested_depth=rec.nested_depth, parent_resource_name=rec.parent_resource_name,
        username=rec.username, user_id=rec.user_id,
        stack_user_project_id=rec.stack_user_project_id,
        current_traversal=rec.current_traversal, created_at=rec.created_at,
        updated_at=rec.updated_at)


def environment_from_stored(stored: Mapping[str, Any], files: Mapping[str, str]) -> Environment:
    return build_environment(dict(stored), files=files)


def state_from_record(rec: ResourceRecord) -> ResourceState:
    return ResourceState(resource_id=rec.physical_resource_id, data=dict(rec.data),
                         metadata=dict(rec.metadata or {}), action=rec.action,
                         status=rec.status, status_reason=rec.status_reason,
                         properties_data=rec.properties_data, signals=dict(rec.signals),
                         signal_sizes=dict(rec.signal_sizes))


def stored_live_stack(rec: StackRecord, raw: RawTemplateRecord,
                      resources: Sequence[ResourceRecord], *, support: StackSupport,
                      parent_facade: Mapping[str, Any] | None = None,
                      template: Template | None = None) -> LiveStack:
    """The stack as stored: its current template bound, its rows as slots.

    Rows whose name the template no longer has (left by a failed update) keep a bare
    definition of their stored type so they can still be deleted.
    """
    env = environment_from_stored(raw.environment, raw.files)
    if template is None:
        with internal_keys():   # a stored template is one Kiln wrote
            template = load_template(raw.template, files=raw.files, max_size=1 << 62)
    tmpl = template
    stack = LiveStack(info_from_record(rec), template=tmpl, environment=env,
                      user_params=env.parameters, files=raw.files, support=support,
                      parent_facade=parent_facade)
    stack.bind(validate_params=False)
    definitions, deps = stored_definitions(stack)
    by_name: dict[str, list[ResourceRecord]] = {}
    for row in sorted(resources, key=lambda r: r.id):
        by_name.setdefault(row.name, []).append(row)
    current: dict[str, ResourceRecord] = {}
    for name, rows in by_name.items():
        live = [r for r in rows if r.replaced_by is None] or rows
        current[name] = live[-1]
        stack.stale.extend(r for r in rows if r is not live[-1])
    for row in current.values():
        definition = definitions.get(row.name) or bare_definition(stack, row)
        found = deps.get(row.name)
        slot = make_slot(stack, definition, state_from_record(row),
                         requires=name_set(row.requires or () if found is None else found))
        slot.db_id, slot.uuid = row.id, row.uuid
        slot.created_at, slot.updated_at = row.created_at, row.updated_at
        slot.replaces, slot.replaced_by = row.replaces, row.replaced_by
        if row.properties_data is not None:
            slot.plugin.properties = StoredProperties(slot.plugin, row.properties_data)
        stack.slots[row.name] = slot
    return stack


def stored_definitions(stack: LiveStack,
                       ) -> tuple[dict[str, ResourceDefinition], Mapping[str, frozenset[str]]]:
    """(definitions, dependencies) of a stored stack's template; both empty when the
    template no longer gives them, so every resource is then built from its row."""
    if not stack.is_bound:
        return {}, {}
    try:
        return stack.bound.resource_definitions(), stack.bound.dependencies()
    except KilnError:
        return {}, {}


def bare_definition(stack: LiveStack, row: ResourceRecord) -> ResourceDefinition:
    """A definition for a row the template does not define (any more): its stored type,
    and the deletion policy the template still gives it if it can (a resource to be
    retained must stay retained when its stack's template no longer loads)."""
    return ResourceDefinition(name=row.name, type=row.type,
                              deletion_policy=_written_policy(stack, row.name))


def _written_policy(stack: LiveStack, name: str) -> str:
    snippet = stack.template.resources.get(name)
    tree = None if snippet is None else snippet.deletion_policy
    if tree is None or not stack.is_bound:
        return "Delete"
    try:
        policy = stack.bound.resolve(tree)
    except KilnError:
        return "Delete"
    found = stack.template.version.deletion_policies.get(policy) \
        if isinstance(policy, str) else None
    return found if isinstance(found, str) else "Delete"


def stale_slots(stack: LiveStack) -> list[Slot]:
    """Slots for rows a replacement superseded but that were never deleted."""
    out: list[Slot] = []
    definitions, _ = stored_definitions(stack)
    for row in stack.stale:
        definition = definitions.get(row.name)
        if definition is None:
            definition = bare_definition(stack, row)
        elif definition.type != row.type:  # the current definition is not this row's
            definition = ResourceDefinition(name=row.name, type=row.type)
        slot = make_slot(stack, definition, state_from_record(row),
                         requires=name_set(row.requires or ()))
        slot.db_id, slot.uuid = row.id, row.uuid
        slot.created_at, slot.updated_at = row.created_at, row.updated_at
        slot.replaces, slot.replaced_by = row.replaces, row.replaced_by
        if row.properties_data is not None:
            slot.plugin.properties = StoredProperties(slot.plugin, row.properties_data)
        out.append(slot)
    return out
