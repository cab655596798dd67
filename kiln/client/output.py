"""Printing results: a table for people, ``-f json`` / ``-f yaml`` for scripts.

The JSON shapes follow the ``openstack`` CLI's for the same command (``stack list -f
json`` is a list of objects keyed by the column titles ``ID``, ``Stack Name``...; ``stack
show -f json`` one object keyed by the stack's fields), so a script written against one
reads the other. Results go to stdout; progress and messages go to stderr, so the output
of ``--wait -f json`` stays one parseable document.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

import click
import yaml
from rich import box
from rich.console import Console
from rich.table import Table

F = TypeVar("F", bound=Callable[..., Any])

FORMATS = ("table", "json", "yaml", "value")


#: where ``-c/--column`` leaves the columns asked for (the click context's ``meta``), so
#: :func:`show_list` and :func:`show_one` apply them without each command passing them on
_COLUMNS = "kiln.client.columns"


def _remember_columns(ctx: click.Context, _param: click.Parameter,
                      value: tuple[str, ...]) -> tuple[str, ...]:
    ctx.meta[_COLUMNS] = value
    return value


def format_option(fn: F) -> F:
    """``-f/--format`` and ``-c/--column`` (the openstack CLI's pair: ``-c`` repeated picks
    the columns, or the fields of one record, in the order given)."""
    fn = click.option("-c", "--column", "columns", multiple=True, metavar="COLUMN",
                      expose_value=False, callback=_remember_columns,
                      help="Show only this column (repeatable, in the order given).")(fn)
    return click.option("-f", "--format", "fmt", type=click.Choice(FORMATS),
                        default="table", show_default=True,
                        help="Output format.")(fn)


def _selected(available: Sequence[str]) -> list[str] | None:
    """The columns ``-c`` asked for (None without it); an unknown one is a usage error
    naming those there are."""
    ctx = click.get_current_context(silent=True)
    wanted: tuple[str, ...] = ctx.meta.get(_COLUMNS, ()) if ctx is not None else ()
    if not wanted:
        return None
    unknown = [c for c in wanted if c not in available]
    if unknown:
        raise click.BadParameter(
            f"no column {unknown[0]!r}; the columns are: {', '.join(available)}",
            param_hint="'-c' / '--column'")
    return list(dict.fromkeys(wanted))


def stdout_console() -> Console:
    """The console for results: wide enough not to fold ids when piped."""
    console = Console(file=sys.stdout, highlight=False, soft_wrap=False)
    if not console.is_terminal:
        console = Console(file=sys.stdout, highlight=False, width=500, color_system=None)
    return console


def _cell(value: Any) -> str:
    if value is None:
        return "None"
    if isinstance(value, str):
        return value
    if isinstance(value, dict | list):
        if not value:
            return "[]" if isinstance(value, list) else "{}"
        return yaml.safe_dump(value, default_flow_style=False, sort_keys=False).rstrip()
    return str(value)


def _dump(data: Any, fmt: str) -> None:
    if fmt == "json":
        click.echo(json.dumps(data, indent=2))
    else:
        click.echo(yaml.safe_dump(data, default_flow_style=False, sort_keys=False), nl=False)


def show_list(rows: Sequence[Mapping[str, Any]], columns: Sequence[str], fmt: str) -> None:
    """Rows keyed by column title, as a table or a JSON/YAML list (``-c`` may also pick a
    key the rows have beyond the default ``columns``)."""
    extra = [k for row in rows for k in row if k not in columns]
    columns = _selected([*columns, *dict.fromkeys(extra)]) or columns
    if fmt in ("json", "yaml"):
        _dump([{c: row.get(c) for c in columns} for row in rows], fmt)
        return
    if fmt == "value":
        for row in rows:
            click.echo(" ".join(_cell(row.get(c)) for c in columns))
        return
    table = Table(box=box.ASCII2, show_lines=False, header_style="bold")
    for column in columns:
        table.add_column(column, overflow="fold")
    for row in rows:
        table.add_row(*(_cell(row.get(c)) for c in columns))
    stdout_console().print(table)


def show_one(record: Mapping[str, Any], fmt: str) -> None:
    """One object, as a Field/Value table or a JSON/YAML mapping."""
    record = {key: record.get(key) for key in _selected(list(record)) or record}
    if fmt in ("json", "yaml"):
        _dump(dict(record), fmt)
        return
    if fmt == "value":
        for value in record.values():
            click.echo(_cell(value))
        return
    table = Table(box=box.ASCII2, header_style="bold")
    table.add_column("Field", no_wrap=True)
    table.add_column("Value", overflow="fold")
    for key, value in record.items():
        table.add_row(key, _cell(value))
    stdout_console().print(table)
