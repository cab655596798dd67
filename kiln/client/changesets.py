"""``kiln stack changeset create/list/show/execute/delete``: an update's plan stored on
the server (Kiln's change set routes), reviewed by anyone who can read the stack, then
executed exactly as shown, or refused if the stack changed since."""

from __future__ import annotations

import json
import sys
from functools import partial
from typing import Any
from urllib.parse import quote

import click

from kiln.client.api import JSON, APIError, HeatAPI, stack_ref
from kiln.client.commands import (
    EXIT_FAILED,
    _api,
    _call,
    _lookup,
    _update_body,
    _update_options,
    fail,
    stack,
)
from kiln.client.day_two import STACK_COLUMNS, _run_action, _stack_row
from kiln.client.output import _COLUMNS as COLUMN_CHOICE
from kiln.client.output import format_option, show_list, show_one
from kiln.client.templates import load

#: the summary columns (``list`` and the top of ``show``)
COLUMNS = (
    "id",
    "name",
    "status",
    "execution_status",
    "status_reason",
    "creation_time",
    "include_nested_stacks",
)
#: one row per changed property (or per added/removed resource)
CHANGE_COLUMNS = (
    "action",
    "resource",
    "type",
    "replacement",
    "property",
    "recreation",
    "before",
    "after",
)


@stack.group()
def changeset() -> None:
    """Change sets: an update's plan stored for review, then executed exactly."""


def _path(ref: str, ident: str = "") -> str:
    return f"/stacks/{ref}/changesets" + (f"/{quote(ident, safe='')}" if ident else "")


def _text(value: Any) -> str:
    if value is None:
        return ""
    return value if isinstance(value, str) else json.dumps(value)


def _row(change: JSON, depth: int) -> dict[str, Any]:
    return {
        "action": change.get("action"),
        "resource": "  " * depth + str(change.get("logical_resource_id")),
        "type": change.get("resource_type"),
        "replacement": change.get("replacement") or "",
    }


def change_rows(changes: list[JSON], depth: int = 0) -> list[dict[str, Any]]:
    """One row per property a change touches; an added or removed resource is one row.
    A nested stack's change set (``nested_change_set``, see :func:`with_nested`) follows
    its resource's rows: a row naming the nested stack and the change set, then its own
    rows, indented by two spaces a level."""
    rows: list[dict[str, Any]] = []
    for change in changes:
        base = _row(change, depth)
        details = change.get("details") or []
        if not details:
            rows.append({**base, "property": "", "recreation": "", "before": "", "after": ""})
        for detail in details:
            target = detail.get("target") or {}
            rows.append(
                {
                    **base,
                    "property": target.get("name") or target.get("attribute") or "",
                    "recreation": target.get("requires_recreation") or "",
                    "before": _text(detail.get("before")),
                    "after": _text(detail.get("after")),
                }
            )
        nested = change.get("nested_change_set")
        if nested:
            pad = "  " * (depth + 1)
            rows.append(
                {
                    "action": "",
                    "resource": f"{pad}stack {nested.get('stack_name')}",
                    "type": f"change set {nested.get('name')}",
                    **dict.fromkeys(CHANGE_COLUMNS[3:], ""),
                }
            )
            rows += change_rows(nested.get("changes") or [], depth + 1)
    return rows


def with_nested(api: HeatAPI, ref: str, shown: JSON, seen: set[str] | None = None) -> JSON:
    """The change set with each nested stack's change set (read under the stack ``ref``
    names, the one above it) as ``nested_change_set`` of the change that names it."""
    seen = seen if seen is not None else {str(shown.get("id"))}
    changes = []
    for change in shown.get("changes") or []:
        child_id = change.get("change_set_id")
        if child_id and child_id not in seen:
            seen.add(child_id)
            child = _call(partial(api.request, "GET", _path(ref, str(child_id))))["changeset"]
            change = {**change, "nested_change_set": with_nested(api, ref, child, seen)}
        changes.append(change)
    return {**shown, "changes": changes} if "changes" in shown else shown


@changeset.command("create")
@_update_options
@click.option(
    "--name",
    "changeset_name",
    required=True,
    metavar="CHANGESET",
    help="The change set's name (a letter, then letters, digits, hyphens).",
)
@click.option("--description", help="What the change is for.")
@click.option(
    "--include-nested",
    is_flag=True,
    help="Give each nested stack the update adds or changes a change set of its own "
    "(shown under its resource; executed with this one).",
)
@click.option(
    "--import",
    "imports",
    multiple=True,
    metavar="RESOURCE=PHYSICAL_ID",
    help="Import: the template's resource RESOURCE adopts the existing object "
    "PHYSICAL_ID instead of creating one (repeatable; the import changes nothing else).",
)
@format_option
@click.pass_context
def changeset_create(
    ctx: click.Context,
    name: str,
    template: str | None,
    environments: tuple[str, ...],
    params: tuple[str, ...],
    param_files: tuple[str, ...],
    existing: bool,
    rollback: str | None,
    timeout: int | None,
    tags: str | None,
    changeset_name: str,
    description: str | None,
    include_nested: bool,
    imports: tuple[str, ...],
    fmt: str,
) -> None:
    """Store the plan of an update of stack NAME as a change set, changing nothing."""
    bundle = load(template, environments)
    body = _update_body(bundle, params, param_files, existing, rollback, timeout, tags, template)
    if include_nested:
        body["include_nested_stacks"] = True
    if imports:
        body["resources_to_import"] = [_import_entry(item) for item in imports]
    save_plan(_api(ctx), name, body, changeset_name, existing, fmt, description)


def _import_entry(item: str) -> dict[str, str]:
    resource, sep, physical = item.partition("=")
    if not sep or not resource or not physical:
        raise click.BadParameter(f"{item!r} is not RESOURCE=PHYSICAL_ID",
                                 param_hint="'--import'")
    return {"logical_resource_id": resource, "physical_resource_id": physical}


def save_plan(
    api: HeatAPI,
    name: str,
    body: JSON,
    changeset_name: str,
    existing: bool,
    fmt: str,
    description: str | None = None,
) -> None:
    """Store an update's ``body`` as a change set of stack NAME and show it (exit 1 if
    the plan could not be made: the change set is FAILED, with the reason)."""
    body = {**body, "name": changeset_name}
    if existing:
        body["existing"] = True
    if description is not None:
        body["description"] = description
    ref = stack_ref(_lookup(api, name))
    made: JSON = _call(lambda: api.request("POST", _path(ref), json=body))["changeset"]
    _show(with_nested(api, ref, made), fmt)
    if made.get("status") == "FAILED":
        sys.exit(EXIT_FAILED)


def _show(shown: JSON, fmt: str) -> None:
    """The whole record as JSON/YAML/values (or the ``-c`` fields of it); as tables, the
    summary, the parameters, then one row per changed property (nested change sets'
    rows under their resource's)."""
    ctx = click.get_current_context(silent=True)
    if fmt != "table" or (ctx is not None and ctx.meta.get(COLUMN_CHOICE)):
        show_one(shown, fmt)
        return
    show_one({k: shown.get(k) for k in COLUMNS}, fmt)
    if shown.get("parameters"):
        show_one(shown["parameters"], fmt)
    show_list(change_rows(shown.get("changes") or []), CHANGE_COLUMNS, fmt)


@changeset.command("list")
@click.argument("name")
@format_option
@click.pass_context
def changeset_list(ctx: click.Context, name: str, fmt: str) -> None:
    """List the change sets of stack NAME."""
    api = _api(ctx)
    ref = stack_ref(_lookup(api, name))
    found = _call(lambda: api.request("GET", _path(ref)))["changesets"]
    show_list(found, COLUMNS, fmt)


@changeset.command("show")
@click.argument("name")
@click.argument("changeset_id", metavar="CHANGESET")
@format_option
@click.pass_context
def changeset_show(ctx: click.Context, name: str, changeset_id: str, fmt: str) -> None:
    """Show change set CHANGESET (id or name) of stack NAME, property by property."""
    api = _api(ctx)
    ref = stack_ref(_lookup(api, name))
    shown = _call(lambda: api.request("GET", _path(ref, changeset_id)))["changeset"]
    _show(with_nested(api, ref, shown), fmt)


@changeset.command("execute")
@click.argument("name")
@click.argument("changeset_id", metavar="CHANGESET")
@click.option("--wait", is_flag=True, help="Wait, showing progress, until the update ends.")
@format_option
@click.pass_context
def changeset_execute(
    ctx: click.Context, name: str, changeset_id: str, wait: bool, fmt: str
) -> None:
    """Execute change set CHANGESET of stack NAME, exactly as it shows (refused if the
    stack changed since it was made)."""
    api: HeatAPI = _api(ctx)
    found = _lookup(api, name)
    ref = stack_ref(found)
    ok = _run_action(
        api,
        found,
        "UPDATE",
        lambda: api.request("POST", _path(ref, changeset_id) + "/execute"),
        wait,
    )
    show_list([_stack_row(_call(lambda: api.get_stack(ref)))], STACK_COLUMNS, fmt)
    if not ok:
        sys.exit(EXIT_FAILED)


@changeset.command("delete")
@click.argument("name")
@click.argument("changeset_ids", metavar="CHANGESET...", nargs=-1, required=True)
@click.pass_context
def changeset_delete(ctx: click.Context, name: str, changeset_ids: tuple[str, ...]) -> None:
    """Delete change sets (ids or names) of stack NAME."""
    api = _api(ctx)
    ref = stack_ref(_lookup(api, name))
    for given in changeset_ids:
        try:
            api.request("DELETE", _path(ref, given))
        except APIError as exc:
            fail(exc.message)
