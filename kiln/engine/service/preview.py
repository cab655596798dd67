"""Stack preview and update preview, built from the same planning as the real actions."""

from __future__ import annotations

from typing import Any

from kiln.db.records import StackRecord
from kiln.engine.actions.plan import decide
from kiln.engine.model.live_stack import LiveStack, Slot
from kiln.engine.model.states import Change
from kiln.engine.service import replies as fmt
from kiln.engine.service.shapes import PreviewResourceReply
from kiln.errors import KilnError
from kiln.resources.nested import NestedStackResource
from kiln.template.definitions import name_set


def _required_by(stack: LiveStack) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {n: [] for n in stack.slots}
    for name, slot in stack.slots.items():
        for req in slot.requires:
            if req in out:
                out[req].append(name)
    return out


def _properties(stack: LiveStack, slot: Slot) -> dict[str, Any]:
    try:
        props = slot.plugin.make_properties(slot.name,
                                            stack.runtime.resolve(slot.definition.properties))
    except Exception:  # plugin code: a preview shows what it can  # noqa: BLE001
        return {}
    return props.as_dict()


def stack_preview(stack: LiveStack) -> dict[str, Any]:
    """POST /stacks/preview's ``stack`` body: the stack as it would start, unsaved."""
    info = stack.info
    params: dict[str, str] = {}
    try:
        params = stack.bound.parameters.display_map()
    except KilnError:  # parameters that do not bind: the preview shows none
        params = {}
    description = stack.template.description or "No description"
    needed = _required_by(stack)
    return {
        "stack_identity": stack.identity_dict(),
        "id": info.id,
        "stack_name": info.name,
        "creation_time": fmt.isotime(_now()),
        "updated_time": None,
        "deletion_time": None,
        "notification_topics": [],
        "parameters": params,
        "description": description,
        "template_description": description,
        "capabilities": [],
        "disable_rollback": info.disable_rollback,
        "timeout_mins": info.timeout_mins,
        "stack_owner": info.username,
        "parent": info.owner_id,
        "stack_user_project_id": None,
        "tags": list(info.tags),
        "outputs": [],
        "resources": [
            fmt.slot_resource(slot, info, required_by=needed[name],
                              properties=_properties(stack, slot),
                              attributes=_attributes(slot), as_new=True)
            for name, slot in stack.slots.items()],
    }


def nested_previews(stack: LiveStack, body: dict[str, Any]) -> dict[str, Any]:
    """Heat's preview shape for nested stacks: a resource backed by a child stack
    (provider template, group, OS::Heat::Stack) is replaced in ``resources`` by the list of
    its child's own previewed resources, to any depth the nesting limit allows."""
    resources: list[Any] = []
    for entry, slot in zip(body["resources"], stack.slots.values(), strict=True):
        plugin = slot.plugin
        if not isinstance(plugin, NestedStackResource) or stack.nested is None:
            resources.append(entry)
            continue
        props = plugin.make_properties(slot.name,
                                       stack.runtime.resolve(slot.definition.properties))
        child = stack.nested.build_child(
            plugin, plugin.child_template(props), plugin.child_parameters(props),
            plugin.child_files(), name=f"{stack.info.name}-{slot.name}")
        resources.append(nested_previews(child, stack_preview(child))["resources"])
    body["resources"] = resources
    return body


def _now() -> Any:
    from kiln.engine.store import utcnow

    return utcnow()


def update_preview(rec: StackRecord, current: LiveStack, new: LiveStack) -> dict[str, Any]:
    """``{"resource_changes": {...}}`` as PUT .../preview answers."""
    changes: dict[str, list[PreviewResourceReply]] = {
        "unchanged": [], "updated": [], "replaced": [], "added": [], "deleted": []}
    definitions = new.bound.resource_definitions()
    deps = new.bound.dependencies()
    # resolve the new template against the resources as they are now
    for name, slot in current.slots.items():
        slot.plugin.runtime = new.runtime
        new.slots[name] = slot
    current_needed = _required_by(current)
    for name, definition in definitions.items():
        existing = current.slots.get(name)
        new_type, _cls = new.plugin_class(definition)
        try:
            change = decide(new, existing, definition, new_type).change
        except Exception:  # plugin code: unknown means replaced  # noqa: BLE001
            change = Change.REPLACE_CBD
        if existing is None:
            from kiln.engine.model.slots import make_slot

            slot = make_slot(new, definition, requires=name_set(deps.get(name, ())))
            changes["added"].append(fmt.slot_resource(slot, new.info, required_by=[],
                                                      attributes=_attributes(slot),
                                                      as_new=True))
            continue
        shown = fmt.slot_resource(existing, new.info,
                                  required_by=current_needed.get(name, []),
                                  attributes=_attributes(existing))
        if change is Change.NOOP:
            changes["unchanged"].append(shown)
        elif change is Change.UPDATE:
            changes["updated"].append(shown)
        else:
            changes["replaced"].append(
                fmt.slot_resource(existing, new.info, required_by=[],
                                  attributes=_attributes(existing), as_new=True))
    for name, slot in current.slots.items():
        if name not in definitions:
            changes["deleted"].append(
                fmt.slot_resource(slot, new.info, required_by=current_needed.get(name, []),
                                  attributes=_attributes(slot)))
    return {"resource_changes": changes}


def _attributes(slot: Slot) -> dict[str, Any]:
    """Each declared attribute as the plugin resolves it now (Heat's previews do so: a
    Value shows its value before it exists; what needs the resource is null)."""
    out: dict[str, Any] = {}
    for attr in type(slot.plugin).attributes_schema:
        try:
            out[attr] = slot.plugin.get_attribute(attr)
        except Exception:  # a plugin's failing attribute previews as null  # noqa: BLE001
            out[attr] = None
    return out
