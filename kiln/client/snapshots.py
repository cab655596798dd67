"""``kiln stack snapshot create/list/show/restore/delete``: a stack's snapshots, the
``openstack stack snapshot ...`` commands on the same Orchestration API calls. A
snapshot is named by its id or by a name unique among the stack's snapshots; create and
restore follow the day-two actions' ``--wait`` rules (:mod:`kiln.client.day_two`)."""

from __future__ import annotations

import sys

import click

from kiln.client.api import JSON, APIError, HeatAPI, stack_ref
from kiln.client.commands import EXIT_FAILED, _api, _call, _lookup, fail, stack
from kiln.client.day_two import STACK_COLUMNS, _run_action, _stack_row
from kiln.client.output import format_option, show_list, show_one

#: ``openstack stack snapshot list``'s columns
SNAPSHOT_COLUMNS = ("id", "name", "status", "status_reason", "creation_time")


@stack.group()
def snapshot() -> None:
    """Snapshots of a stack: create, list, show, restore, delete."""


def _snapshot_id(api: HeatAPI, ref: str, stack_name: str, given: str) -> str:
    """A snapshot by id, or by name when exactly one has it."""
    snaps = _call(lambda: api.snapshots(ref))
    if any(s.get("id") == given for s in snaps):
        return given
    named = [s for s in snaps if s.get("name") == given]
    if len(named) == 1:
        return str(named[0]["id"])
    if named:
        fail(f"stack {stack_name} has {len(named)} snapshots named {given}: give its id")
    fail(f"stack {stack_name} has no snapshot {given}")


@snapshot.command("create")
@click.argument("name")
@click.option("--name", "snapshot_name", metavar="SNAPSHOT", help="The snapshot's name.")
@click.option("--wait", is_flag=True, help="Wait until the snapshot is complete.")
@format_option
@click.pass_context
def snapshot_create(ctx: click.Context, name: str, snapshot_name: str | None, wait: bool,
                    fmt: str) -> None:
    """Take a snapshot of stack NAME."""
    api = _api(ctx)
    found = _lookup(api, name)
    ref = stack_ref(found)
    made: list[JSON] = []
    ok = _run_action(api, found, "SNAPSHOT",
                     lambda: made.append(api.create_snapshot(ref, snapshot_name)), wait)
    shown = _call(lambda: api.snapshot(ref, str(made[0]["id"]))) if wait else made[0]
    show_one({k: shown.get(k) for k in SNAPSHOT_COLUMNS}, fmt)
    if not ok:
        sys.exit(EXIT_FAILED)


@snapshot.command("list")
@click.argument("name")
@format_option
@click.pass_context
def snapshot_list(ctx: click.Context, name: str, fmt: str) -> None:
    """List the snapshots of stack NAME."""
    api = _api(ctx)
    ref = stack_ref(_lookup(api, name))
    show_list(_call(lambda: api.snapshots(ref)), SNAPSHOT_COLUMNS, fmt)


@snapshot.command("show")
@click.argument("name")
@click.argument("snapshot_id", metavar="SNAPSHOT")
@format_option
@click.pass_context
def snapshot_show(ctx: click.Context, name: str, snapshot_id: str, fmt: str) -> None:
    """Show snapshot SNAPSHOT (id or name) of stack NAME, with its data."""
    api = _api(ctx)
    ref = stack_ref(_lookup(api, name))
    ident = _snapshot_id(api, ref, name, snapshot_id)
    show_one(_call(lambda: api.snapshot(ref, ident)), fmt)


@snapshot.command("restore")
@click.argument("name")
@click.argument("snapshot_id", metavar="SNAPSHOT")
@click.option("--wait", is_flag=True, help="Wait, showing progress, until restored.")
@format_option
@click.pass_context
def snapshot_restore(ctx: click.Context, name: str, snapshot_id: str, wait: bool,
                     fmt: str) -> None:
    """Restore stack NAME to snapshot SNAPSHOT (id or name)."""
    api = _api(ctx)
    found = _lookup(api, name)
    ref = stack_ref(found)
    ident = _snapshot_id(api, ref, name, snapshot_id)
    ok = _run_action(api, found, "RESTORE", lambda: api.restore_snapshot(ref, ident), wait)
    show_list([_stack_row(_call(lambda: api.get_stack(ref)))], STACK_COLUMNS, fmt)
    if not ok:
        sys.exit(EXIT_FAILED)


@snapshot.command("delete")
@click.argument("name")
@click.argument("snapshot_ids", metavar="SNAPSHOT...", nargs=-1, required=True)
@click.pass_context
def snapshot_delete(ctx: click.Context, name: str, snapshot_ids: tuple[str, ...]) -> None:
    """Delete snapshots (ids or names) of stack NAME."""
    api = _api(ctx)
    ref = stack_ref(_lookup(api, name))
    for given in snapshot_ids:
        ident = _snapshot_id(api, ref, name, given)
        try:
            api.delete_snapshot(ref, ident)
        except APIError as exc:
            fail(exc.message)


# -- template, abandon, adopt ---------------------------------------------------------
