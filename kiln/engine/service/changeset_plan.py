"""What a change set shows: the resources an update (or a create) would add, modify or
remove, property by property, as CloudFormation's ``Changes`` describe them.

Built from the same planning the update runs (``plan.decide``), so the plan shown is the
plan executed; execution recomputes it and refuses to run if it differs. Values that are
(or contain) a hidden parameter's value are masked, as stack show masks the parameters.
"""

from __future__ import annotations

import json
from typing import Any

from kiln.engine.actions.plan import decide
from kiln.engine.model.live_stack import LiveStack, Slot
from kiln.engine.model.states import Change
from kiln.template.definitions import ResourceDefinition

MASK = "******"

#: CloudFormation's Replacement values for a modified resource
REPLACE_TRUE, REPLACE_FALSE, REPLACE_CONDITIONAL = "True", "False", "Conditional"


def hidden_values(*stacks: LiveStack) -> set[str]:
    """The text of every hidden parameter's value in these stacks (old and new)."""
    out: set[str] = set()
    for stack in stacks:
        try:
            params = stack.bound.parameters
            for name in params.hidden:
                value = params[name]
                if value not in (None, ""):
                    out.add(value if isinstance(value, str) else json.dumps(value))
        except Exception:  # parameters that do not bind hide nothing  # noqa: BLE001
            continue
    return out


def masked(value: Any, secrets: set[str]) -> Any:
    """``value`` with every string holding a hidden value replaced by the mask."""
    if isinstance(value, str):
        return MASK if any(s and s in value for s in secrets) else value
    if isinstance(value, dict):
        return {k: masked(v, secrets) for k, v in value.items()}
    if isinstance(value, list):
        return [masked(v, secrets) for v in value]
    if value is not None and secrets and any(s in json.dumps(value) for s in secrets):
        return MASK
    return value


def _detail(
    attribute: str, name: str | None, recreation: str, before: Any, after: Any, secrets: set[str]
) -> dict[str, Any]:
    return {
        "target": {"attribute": attribute, "name": name, "requires_recreation": recreation},
        "before": masked(before, secrets),
        "after": masked(after, secrets),
        "change_source": "DirectModification",
        "evaluation": "Static",
    }


def _property_details(
    slot: Slot, prop_diff: dict[str, Any], new_props: Any, secrets: set[str]
) -> list[dict[str, Any]]:
    plugin = slot.plugin
    old = plugin.properties
    details = []
    for name in sorted(prop_diff):
        try:
            recreate = plugin.needs_replace({name: prop_diff[name]})
        except Exception:  # a plugin that cannot tell: it may  # noqa: BLE001
            recreate = True
        details.append(
            _detail(
                "Properties",
                name,
                "Always" if recreate else "Never",
                old.get(name),
                new_props.get(name) if new_props else None,
                secrets,
            )
        )
    return details


def _metadata_changed(slot: Slot, definition: ResourceDefinition) -> bool:
    return bool(
        json.dumps(slot.definition.metadata, sort_keys=True, default=str)
        != json.dumps(definition.metadata, sort_keys=True, default=str)
    )


def _added(name: str, type_name: str) -> dict[str, Any]:
    return {
        "action": "Add",
        "logical_resource_id": name,
        "physical_resource_id": None,
        "resource_type": type_name,
        "replacement": None,
        "scope": [],
        "details": [],
    }


def create_changes(stack: LiveStack) -> list[dict[str, Any]]:
    """A CREATE change set: every resource of the new stack is added."""
    return [_added(name, slot.type_name) for name, slot in stack.slots.items()]


def update_changes(current: LiveStack, new: LiveStack) -> list[dict[str, Any]]:
    """An UPDATE change set's changes, in template order then removals. Changes
    ``new``'s slots (it takes the stored resources, as the update does): use a stack
    built for this alone."""
    secrets = hidden_values(current, new)
    definitions = new.bound.resource_definitions()
    for name, slot in current.slots.items():
        slot.plugin.runtime = new.runtime
        new.slots[name] = slot
    out: list[dict[str, Any]] = []
    for name, definition in definitions.items():
        existing = current.slots.get(name)
        new_type, _cls = new.plugin_class(definition)
        if existing is None:
            out.append(_added(name, new_type))
            continue
        try:
            decision = decide(new, existing, definition, new_type)
        except Exception as exc:  # noqa: BLE001 - plugin code: unknown means replaced
            decision = None
            reason = str(exc)
        change = decision.change if decision is not None else Change.REPLACE_CBD
        scope: list[str] = []
        details: list[dict[str, Any]] = []
        if decision is not None and decision.prop_diff:
            scope.append("Properties")
            details += _property_details(existing, decision.prop_diff, decision.properties, secrets)
        if _metadata_changed(existing, definition):
            scope.append("Metadata")
            details.append(_detail("Metadata", None, "Never", None, None, secrets))
        if change is Change.NOOP and not scope:
            continue
        if change in (Change.REPLACE_CBD, Change.REPLACE_DBC):
            replacement = REPLACE_TRUE
            why = decision.reason if decision is not None else reason
            if not details:
                details.append(
                    _detail(
                        "Properties" if why != "type changed" else "Type",
                        None,
                        "Always",
                        None,
                        None,
                        secrets,
                    )
                )
        else:
            replacement = REPLACE_FALSE
        out.append(
            {
                "action": "Modify",
                "logical_resource_id": name,
                "physical_resource_id": existing.physical_id,
                "resource_type": new_type,
                "replacement": replacement,
                "scope": scope,
                "details": details,
            }
        )
    for name, slot in current.slots.items():
        if name not in definitions:
            out.append(
                {
                    "action": "Remove",
                    "logical_resource_id": name,
                    "physical_resource_id": slot.physical_id,
                    "resource_type": slot.type_name,
                    "replacement": None,
                    "scope": [],
                    "details": [],
                }
            )
    return out
