"""Update planning: what a stack update does to each resource (one :class:`Change` each).

The same function decides for update preview (before anything runs) and for the update
itself (when the walk reaches the resource, so values of resources updated before it
are already the new ones), so the two cannot disagree.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kiln.engine.model.live_stack import LiveStack, Slot
from kiln.engine.model.states import CHECK, COMPLETE, DELETE, FAILED, INIT, Change
from kiln.resources.base import Properties, Resource
from kiln.template.definitions import ResourceDefinition


@dataclass
class Decision:
    change: Change
    properties: Properties | None = None
    prop_diff: dict[str, Any] | None = None
    #: why a replacement was decided before any update was tried ("" for a property
    #: that does not allow an update in place, which Heat finds out while updating)
    reason: str = ""


def replace_kind(plugin: type[Resource] | Resource) -> Change:
    """Create the new resource before deleting the old one, unless the plugin asks
    for the reverse (a name or address that two resources cannot hold at once)."""
    return Change.REPLACE_CBD if plugin.replace_create_first else Change.REPLACE_DBC


def new_properties(target: LiveStack, slot: Slot, definition: ResourceDefinition,
                   ) -> Properties:
    plugin = slot.plugin
    if not plugin.validates_definition:  # OS::Heat::None: no properties, nothing resolved
        return plugin.make_properties(definition.name, {})
    props = plugin.make_properties(definition.name,
                                   target.runtime.resolve(definition.properties))
    return props


def decide(target: LiveStack, existing: Slot | None, definition: ResourceDefinition,
           new_type: str, *, replace_failed: bool | None = None) -> Decision:
    """Heat's rules (Resource._needs_update): failed, deleted and never-created
    resources are replaced (never-created ones simply created); a type change replaces;
    otherwise changed properties update in place when all are update_allowed.
    *replace_failed*: what the plugin found of a FAILED resource's object (None: its
    class's ``needs_replace_failed``)."""
    if existing is None:
        return Decision(Change.CREATE)
    state = existing.state
    if state.action == INIT and state.status == COMPLETE:
        return Decision(Change.CREATE)
    plugin = existing.plugin
    if existing.type_name != new_type:
        return Decision(replace_kind(plugin), reason="type changed")
    if replace_failed is None:
        replace_failed = plugin.needs_replace_failed
    if state.status == FAILED and (state.action == CHECK or replace_failed):
        return Decision(replace_kind(plugin), reason="failed")
    if state.action == DELETE and state.status == COMPLETE:
        return Decision(replace_kind(plugin), reason="deleted")
    if plugin.replaced_on_every_update:
        return Decision(replace_kind(plugin), reason="replaced on every update")
    props = new_properties(target, existing, definition)
    old_props = plugin.properties
    prop_diff = plugin.diff_properties(old_props, props)
    # with converge a nested stack is always updated (as Heat updates every nested
    # stack): its own resources' live state decides what changes inside it
    converging = target.converge and plugin.is_nested_stack
    if not converging and not plugin.needs_update(definition, prop_diff):
        return Decision(Change.NOOP, props, prop_diff)
    if plugin.needs_replace(prop_diff):
        return Decision(replace_kind(plugin), props, prop_diff)
    return Decision(Change.UPDATE, props, prop_diff)
