"""``kiln stack history list/show/diff/restore``: the templates, environments and files
a stack has had (Kiln's history routes), and "update to version N" as a change set
that ``kiln stack changeset execute`` then runs."""

from __future__ import annotations

import click

from kiln.client.api import JSON, stack_ref
from kiln.client.changesets import _show
from kiln.client.commands import _api, _call, _lookup, stack
from kiln.client.output import format_option, show_list, show_one

COLUMNS = ("version", "action", "created_at")


@stack.group()
def history() -> None:
    """A stack's history: list, show, diff, restore (as a change set)."""


@history.command("list")
@click.argument("name")
@format_option
@click.pass_context
def history_list(ctx: click.Context, name: str, fmt: str) -> None:
    """The versions of stack NAME kept, oldest first."""
    api = _api(ctx)
    ref = stack_ref(_lookup(api, name))
    show_list(
        _call(lambda: api.request("GET", f"/stacks/{ref}/versions"))["versions"], COLUMNS, fmt
    )


@history.command("show")
@click.argument("name")
@click.argument("version", type=click.IntRange(min=1))
@format_option
@click.pass_context
def history_show(ctx: click.Context, name: str, version: int, fmt: str) -> None:
    """Version VERSION of stack NAME: its template, environment and file names."""
    api = _api(ctx)
    ref = stack_ref(_lookup(api, name))
    shown: JSON = _call(lambda: api.request("GET", f"/stacks/{ref}/versions/{version}"))
    show_one(shown["version"], fmt)


@history.command("diff")
@click.argument("name")
@click.argument("old", type=click.IntRange(min=1))
@click.argument("new", type=click.IntRange(min=1))
@click.pass_context
def history_diff(ctx: click.Context, name: str, old: int, new: int) -> None:
    """What changed in stack NAME from version OLD to version NEW (a unified diff)."""
    api = _api(ctx)
    ref = stack_ref(_lookup(api, name))
    found: JSON = _call(
        lambda: api.request("GET", f"/stacks/{ref}/versions/{new}/diff", params={"from": old})
    )
    click.echo(found["diff"], nl=False)


@history.command("restore")
@click.argument("name")
@click.argument("version", type=click.IntRange(min=1))
@click.option(
    "--name", "changeset_name", required=True, metavar="CHANGESET", help="The change set's name."
)
@format_option
@click.pass_context
def history_restore(
    ctx: click.Context, name: str, version: int, changeset_name: str, fmt: str
) -> None:
    """Make a change set that updates stack NAME back to version VERSION (review it,
    then run it with ``kiln stack changeset execute``)."""
    api = _api(ctx)
    ref = stack_ref(_lookup(api, name))
    made: JSON = _call(
        lambda: api.request(
            "POST", f"/stacks/{ref}/versions/{version}/changeset", json={"name": changeset_name}
        )
    )
    _show(made["changeset"], fmt)
