"""Nested change sets (CloudFormation's ``IncludeNestedStacks``): a change set that adds
or modifies a nested-stack resource (provider template, ``OS::Heat::Stack``,
``AWS::CloudFormation::Stack``) gets a child change set showing the child stack's own
changes, to any depth; the parent's change names it (``change_set_id``).

Children are planned from the child template the new parent would give its resource,
against the child stack as it is (a modified resource) or as a new stack (an added
one). They are shown, never executed alone: executing the root runs the whole update,
which updates the child stacks as any update does.
"""

from __future__ import annotations

import asyncio
import json
import re
import uuid
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from kiln.db.records import ChangeSetRecord
from kiln.engine.model.context import RequestContext
from kiln.engine.model.live_stack import LiveStack
from kiln.engine.model.slots import make_slot
from kiln.engine.service import changeset_plan as plan
from kiln.errors import KilnError
from kiln.resources.base import Resource
from kiln.resources.nested import NestedStackResource

if TYPE_CHECKING:
    from kiln.engine.service.changesets import ChangeSetOps
    from kiln.engine.store.change_sets import ChangeSetStore

#: keys a nested change set adds to its parent's change (left out when plans compare)
LINK_KEYS = ("change_set_id", "change_set_name")


def bare(changes: Any) -> list[dict[str, Any]]:
    """Changes without the links to child change sets (what a plan recomputes)."""
    return [{k: v for k, v in c.items() if k not in LINK_KEYS} for c in changes or []]


def _names(cs: ChangeSetRecord, stack_name: str) -> bool:
    return stack_name in (cs.stack_name, cs.stack_id) or stack_name.endswith(f"/{cs.stack_id}")


async def named_by(store: ChangeSetStore, cs: ChangeSetRecord, stack_name: str) -> bool:
    """Whether ``stack_name`` (a name, an id or an ARN) names the change set's stack, or,
    for a nested change set, the stack of its parent, its parent's parent... up to its
    root: a nested change set is also opened under the stacks above it (a nested stack
    still to be created has no stack of its own yet)."""
    seen: set[str] = set()
    found: ChangeSetRecord | None = cs
    while found is not None and found.id not in seen and found.project_id == cs.project_id:
        if _names(found, stack_name):
            return True
        seen.add(found.id)
        parent_id = ((found.request or {}).get("parent") or {}).get("id")
        found = await store.get(str(parent_id)) if parent_id else None
    return False


def _child_name(parent: str, logical: str) -> str:
    name = re.sub(r"[^-a-zA-Z0-9]", "-", f"{parent}-{logical}")
    return name[:128]


async def _child_of(plugin: Resource, props_source: Any, stack: LiveStack, name: str
                    ) -> tuple[Mapping[str, Any], Mapping[str, Any], Mapping[str, str]] | None:
    """What child stack ``plugin`` would make with the definition's properties as they
    resolve now (None: not a nested stack)."""
    if not isinstance(plugin, NestedStackResource):
        return None
    props = plugin.make_properties(name, stack.runtime.resolve(props_source))
    load = getattr(plugin, "_load", None)
    if load is not None:  # AWS::CloudFormation::Stack fetches its TemplateURL
        await load(props)
    return (plugin.child_template(props), plugin.child_parameters(props),
            dict(plugin.child_files() or {}))


async def children(
    ops: ChangeSetOps,
    ctx: RequestContext,
    new: LiveStack,
    changes: list[dict[str, Any]],
    parent: Mapping[str, Any],
    root: Mapping[str, Any],
) -> list[dict[str, Any]]:
    """The child change set rows for ``changes`` (of the parent shown by ``parent``:
    ``id``, ``name``, ``stack_name``), their own children after them; each nested
    change gets ``change_set_id``/``change_set_name``."""
    rows: list[dict[str, Any]] = []
    definitions = new.bound.resource_definitions()
    for change in changes:
        logical = str(change["logical_resource_id"])
        if change["action"] not in ("Add", "Modify") or logical not in definitions:
            continue
        plugin = make_slot(new, definitions[logical]).plugin
        wanted = await _child_of(plugin, definitions[logical].properties, new, logical)
        if wanted is None:
            continue
        template, params, files = wanted
        row: dict[str, Any] = {
            "id": str(uuid.uuid4()),
            "name": _child_name(str(parent["name"]), logical),
            "project_id": ctx.project_id,
            "description": f"nested change set of {parent['name']} for {logical}",
            "status": "CREATE_COMPLETE",
            "status_reason": "",
        }
        child_id = change.get("physical_resource_id")
        if change["action"] == "Modify" and child_id:
            current_child = await ops.core.find(ctx, str(child_id))
            cur, child = await ops.stacks.prepare_update(
                ctx, {"stack_name": current_child.name, "stack_id": current_child.id},
                template, {"parameters": dict(params)}, files, {}, None)
            made = await asyncio.to_thread(plan.update_changes, cur, child)
            row.update(stack_id=current_child.id, stack_name=current_child.name,
                       change_type="UPDATE")
            from kiln.engine.service.changesets import fingerprint

            row["fingerprint"] = fingerprint(current_child)
        else:
            assert new.nested is not None
            child = new.nested.build_child(plugin, template, params, files or None,
                                           name=f"{new.info.name}-{logical}")
            made = plan.create_changes(child)
            row.update(stack_id=str(uuid.uuid4()), stack_name=f"{new.info.name}-{logical}",
                       change_type="CREATE", fingerprint="")
        made = [dict(c) for c in made]
        link = {"id": row["id"], "name": row["name"], "stack_name": row["stack_name"]}
        below = await children(ops, ctx, child, made, link, root)
        row["changes"] = made
        row["request"] = {
            "template": template, "environment": {"parameters": dict(params)},
            "files": {}, "args": {}, "include_nested": True,
            "parent": {"id": parent["id"], "name": parent["name"]},
            "root": {"id": root["id"], "name": root["name"]},
            "hidden": sorted(child.bound.parameters.hidden),
        }
        change["change_set_id"], change["change_set_name"] = row["id"], row["name"]
        rows.append(row)
        rows += below
    return rows


async def as_shown(ops: ChangeSetOps, rows: list[dict[str, Any]],
                   request: Mapping[str, Any]) -> bool:
    """Whether the nested change sets made again (``rows``) show what the stored ones
    (``request["children"]``) showed: a nested stack's template fetched from its
    ``TemplateURL`` is fetched again when the root runs, and may have changed since."""
    stored = list(request.get("children") or ())
    if len(rows) != len(stored):
        return False
    for row, child_id in zip(rows, stored, strict=True):
        child = await ops.core.store.change_sets.get(str(child_id))
        again = json.loads(json.dumps(row["changes"], default=str))
        if child is None or bare(again) != bare(child.changes):
            return False
    return True


async def still_shown(ops: ChangeSetOps, ctx: RequestContext, stack: LiveStack,
                      cs: ChangeSetRecord) -> bool:
    """Whether a ``CREATE`` change set's nested change sets, made again for ``stack``
    (the new stack as it would be made now), show what the stored ones show."""
    request = cs.request or {}
    if not request.get("children"):
        return True
    link = {"id": cs.id, "name": cs.name}
    changes = [dict(c) for c in plan.create_changes(stack)]
    try:
        rows = await children(ops, ctx, stack, changes, link, link)
    except KilnError:
        return False
    return await as_shown(ops, rows, request)
