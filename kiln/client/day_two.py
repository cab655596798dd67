"""The ``kiln stack`` commands for a stack that already runs: its resources, its actions
(suspend, resume, check, cancel), events followed live, watching an action
someone else started, its template, abandon and adopt, and lifecycle hooks.

Each is the ``openstack stack ...`` command of the same name (``resource list``,
``snapshot create``, ``hook clear``...), with the same option names where it has them, on
the same Orchestration API calls, so a script can move from one to the other. The
actions started here follow the same rules as create/update/delete: without ``--wait``
the command returns when the endpoint accepted the request; with it, the action's
progress is shown and the exit status says how it ended (0 when the action completed, 1
when it failed, was rolled back or the endpoint refused it). Snapshots are in
:mod:`kiln.client.snapshots`.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click
import yaml

from kiln.client.api import JSON, APIError, HeatAPI, NotFound, stack_ref
from kiln.client.commands import (
    EXIT_FAILED,
    EXIT_INTERRUPTED,
    PREFIX,
    _api,
    _body,
    _call,
    _finish,
    _follow,
    _lookup,
    _template_options,
    _types,
    fail,
    show_events,
    stack,
)
from kiln.client.events import EventSource, PollingSource, StreamUnavailable, open_source
from kiln.client.output import format_option, show_list, show_one
from kiln.client.progress import event_line
from kiln.client.templates import load
from kiln.client.watch import ActionWatch

#: the columns ``openstack stack suspend/resume/check`` print after the action
STACK_COLUMNS = ("ID", "Stack Name", "Stack Status", "Creation Time", "Updated Time")
#: ``openstack stack resource list``'s columns (the resource's own field names)
RESOURCE_COLUMNS = ("resource_name", "physical_resource_id", "resource_type",
                    "resource_status", "updated_time")
HOOKS = ("pre-create", "pre-update", "pre-delete")


def _stack_row(stack: JSON) -> dict[str, Any]:
    return {"ID": stack.get("id"), "Stack Name": stack.get("stack_name"),
            "Stack Status": stack.get("stack_status"),
            "Creation Time": stack.get("creation_time"),
            "Updated Time": stack.get("updated_time")}


def _marker(api: HeatAPI, ref: str) -> str | None:
    return _call(lambda: ActionWatch.last_event_id(api, ref))  # type: ignore[no-any-return]


def _run_action(api: HeatAPI, stack: JSON, action: str, start: Any, wait: bool,
                *, rollback: bool = False) -> bool:
    """Start ``action`` on ``stack`` with ``start()``; with ``wait`` follow it to its end.
    True when it completed (or, without ``wait``, was accepted)."""
    ref = stack_ref(stack)
    marker = _marker(api, ref) if wait else None
    started = time.monotonic()
    _call(start)
    if not wait:
        return True
    watch = ActionWatch(api, ref, str(stack["stack_name"]), str(stack["id"]), action,
                        marker=marker, rollback=rollback, started=started)
    _follow(watch)
    return watch.succeeded


# -- resources ------------------------------------------------------------------------


@stack.group()
def resource() -> None:
    """The resources of a stack: list, show, signal, mark unhealthy."""


@resource.command("list")
@click.argument("name")
@click.option("-n", "--nested-depth", type=click.IntRange(min=0),
              help="Include nested stacks' resources to this depth (adds stack_name).")
@click.option("--filter", "filters", multiple=True, metavar="KEY=VALUE",
              help="Only resources with this field value, e.g. status=FAILED "
                   "(repeatable).")
@format_option
@click.pass_context
def resource_list(ctx: click.Context, name: str, nested_depth: int | None,
                  filters: tuple[str, ...], fmt: str) -> None:
    """List the resources of stack NAME."""
    api = _api(ctx)
    ref = stack_ref(_lookup(api, name))
    query: dict[str, Any] = {}
    for item in filters:
        key, sep, value = item.partition("=")
        if not sep:
            raise click.BadParameter(f"{item!r} is not KEY=VALUE", param_hint="--filter")
        query.setdefault(key, []).append(value)
    if nested_depth:
        query["nested_depth"] = nested_depth
    rows = _call(lambda: api.request("GET", f"/stacks/{ref}/resources",
                                     params=query)["resources"])
    columns = [*RESOURCE_COLUMNS, *(["stack_name"] if nested_depth else [])]
    if nested_depth:
        for row in rows:
            row.setdefault("stack_name", _stack_name_of(row))
    show_list(rows, columns, fmt)


def _stack_name_of(resource: JSON) -> str | None:
    """The stack a resource belongs to, from its ``stack`` link (Heat's list has no field
    for it; the openstack CLI reads the link the same way)."""
    for link in resource.get("links") or []:
        if link.get("rel") == "stack":
            parts = str(link.get("href", "")).rstrip("/").split("/")
            return parts[-2] if len(parts) >= 2 else None
    return None


def _resource(api: HeatAPI, name: str, resource_name: str) -> tuple[str, JSON]:
    ref = stack_ref(_lookup(api, name))
    try:
        return ref, api.resource(ref, resource_name)
    except NotFound:
        fail(f"Stack {name} has no resource {resource_name}")
    except APIError as exc:
        fail(exc.message)


@resource.command("show")
@click.argument("name")
@click.argument("resource_name", metavar="RESOURCE")
@format_option
@click.pass_context
def resource_show(ctx: click.Context, name: str, resource_name: str, fmt: str) -> None:
    """Show resource RESOURCE of stack NAME."""
    _, found = _resource(_api(ctx), name, resource_name)
    show_one(found, fmt)


@resource.command("signal")
@click.argument("name")
@click.argument("resource_name", metavar="RESOURCE")
@click.option("--data", metavar="JSON", help="The signal's data, a JSON document.")
@click.option("--data-file", type=click.Path(exists=True, dir_okay=False),
              metavar="FILE", help="The signal's data, read from a JSON file.")
@click.pass_context
def resource_signal(ctx: click.Context, name: str, resource_name: str, data: str | None,
                    data_file: str | None) -> None:
    """Signal resource RESOURCE of stack NAME (a wait condition handle, a scaling policy,
    a software deployment...)."""
    if data is not None and data_file is not None:
        raise click.UsageError("give --data or --data-file, not both")
    text = Path(data_file).read_text() if data_file is not None else data
    details: Any = None
    if text is not None:
        try:
            details = json.loads(text)
        except ValueError as exc:
            raise click.BadParameter(f"not JSON: {exc}",
                                     param_hint="--data-file" if data_file else "--data",
                                     ) from None
    api = _api(ctx)
    ref, _ = _resource(api, name, resource_name)
    result = _call(lambda: api.signal(ref, resource_name, details))
    if result:
        show_one(result if isinstance(result, dict) else {"result": result}, "yaml")


@resource.command("mark-unhealthy")
@click.argument("name")
@click.argument("resource_name", metavar="RESOURCE")
@click.argument("reason", required=False, default="")
@click.option("--reset", is_flag=True, help="Mark the resource healthy again.")
@click.pass_context
def resource_mark_unhealthy(ctx: click.Context, name: str, resource_name: str,
                            reason: str, reset: bool) -> None:
    """Mark resource RESOURCE of stack NAME unhealthy (the next update replaces it), with
    an optional REASON; --reset takes the mark back."""
    api = _api(ctx)
    ref, _ = _resource(api, name, resource_name)
    _call(lambda: api.mark_unhealthy(ref, resource_name, not reset, reason))


# -- actions --------------------------------------------------------------------------


def _starter(api: HeatAPI, ref: str, action: str) -> Callable[[], None]:
    return lambda: api.action(ref, action)


def _stack_action(ctx: click.Context, names: tuple[str, ...], action: str,
                  wait: bool, fmt: str) -> None:
    api = _api(ctx)
    results = []
    for name in names:
        found = _lookup(api, name)
        ref = stack_ref(found)
        results.append(_run_action(api, found, action.upper(),
                                   _starter(api, ref, action), wait))
    show_list([_stack_row(_lookup(api, n)) for n in names], STACK_COLUMNS, fmt)
    if not all(results):
        sys.exit(EXIT_FAILED)


def _action_command(action: str, doc: str) -> None:
    @stack.command(action, help=doc)
    @click.argument("names", metavar="NAME...", nargs=-1, required=True)
    @click.option("--wait", is_flag=True, help=f"Wait, showing progress, until the "
                  f"{action} ends.")
    @format_option
    @click.pass_context
    def command(ctx: click.Context, names: tuple[str, ...], wait: bool, fmt: str) -> None:
        _stack_action(ctx, names, action, wait, fmt)


_action_command("suspend", "Suspend one or more stacks (their resources that can be).")
_action_command("resume", "Resume one or more suspended stacks.")
_action_command("check", "Check that the resources of one or more stacks still exist "
                "and are as recorded.")


@stack.command()
@click.argument("name")
@click.option("--no-rollback", is_flag=True,
              help="Stop the update where it is (UPDATE_FAILED) instead of rolling back.")
@click.option("--wait", is_flag=True, help="Wait until the update has stopped (and the "
              "rollback ended).")
@format_option
@click.pass_context
def cancel(ctx: click.Context, name: str, no_rollback: bool, wait: bool, fmt: str) -> None:
    """Cancel the update in progress on stack NAME: roll it back to the stack before the
    update, or with --no-rollback leave it as it is now (which also stops a create)."""
    api = _api(ctx)
    found = _lookup(api, name)
    ref = stack_ref(found)
    action = str(found.get("stack_status") or "").partition("_")[0]
    marker = _marker(api, ref) if wait else None
    started = time.monotonic()
    _call(lambda: api.action(ref, "cancel_without_rollback" if no_rollback
                             else "cancel_update"))
    ended = True
    if wait:
        watch = ActionWatch(api, ref, str(found["stack_name"]), str(found["id"]), action,
                            marker=marker, rollback=not no_rollback, started=started)
        _follow(watch)
        status = str((watch.final or {}).get("stack_status") or "")
        ended = status == (f"{action}_FAILED" if no_rollback else "ROLLBACK_COMPLETE")
        if not ended:
            click.echo(f"{PREFIX} the {action.lower()} of stack {name} ended {status}, "
                       "not cancelled", err=True)
    show_list([_stack_row(_call(lambda: api.get_stack(ref)))], STACK_COLUMNS, fmt)
    if not ended:
        sys.exit(EXIT_FAILED)


# -- watching an action that is already running ----------------------------------------


def _action_start(api: HeatAPI, found: JSON, action: str) -> str | None:
    """The marker just before the stack's event saying ``action`` began (its latest), so
    the watch counts the resources the action touched before we came."""
    ref = stack_ref(found)
    events = _call(lambda: api.events(ref, {"sort_dir": "desc", "limit": 500}))
    for index, item in enumerate(events):
        if (item.get("resource_status") == f"{action}_IN_PROGRESS"
                and item.get("physical_resource_id") == found["id"]
                and item.get("resource_name") == found["stack_name"]):
            return str(events[index + 1]["id"]) if index + 1 < len(events) else None
    return str(events[0]["id"]) if events else None


@stack.command()
@click.argument("name")
@format_option
@click.pass_context
def watch(ctx: click.Context, name: str, fmt: str) -> None:
    """Follow the action running on stack NAME (started by anyone) until it ends, showing
    its progress; exit 0 if it completed, 1 if it failed or was rolled back. A stack
    with no action running is shown as it is, with the same exit status."""
    api = _api(ctx)
    found = _lookup(api, name)
    ref = stack_ref(found)
    status = str(found.get("stack_status") or "")
    if status.endswith("_IN_PROGRESS"):
        action = status.removesuffix("_IN_PROGRESS")
        rollback = action == "ROLLBACK"
        watcher = ActionWatch(api, ref, str(found["stack_name"]), str(found["id"]), action,
                              marker=_action_start(api, found, action),
                              rollback=not found.get("disable_rollback", True))
        _follow(watcher)
        final = watcher.final or {}
        found = (_call(lambda: api.get_stack(ref)) if action != "DELETE"
                 else {**found, **final})
        status = str(found.get("stack_status") or "")
        ok = watcher.succeeded and not rollback
    else:
        click.echo(f"kiln: stack {name} has no action in progress; it is {status}",
                   err=True)
        ok = status.endswith("_COMPLETE") and not status.startswith("ROLLBACK")
    show_one({k: found.get(k) for k in ("id", "stack_name", "stack_status",
                                          "stack_status_reason", "updated_time")}, fmt)
    if not ok:
        sys.exit(EXIT_FAILED)


# -- events ---------------------------------------------------------------------------


@stack.group()
def event() -> None:
    """The events of a stack: list them, or follow them live."""


@event.command("list")
@click.argument("name")
@click.option("--resource", "resource_name", metavar="RESOURCE",
              help="Only this resource's events.")
@click.option("--limit", type=click.IntRange(min=1), help="At most this many events.")
@click.option("--sort-dir", type=click.Choice(["asc", "desc"]), default="asc",
              show_default=True)
@click.option("-n", "--nested-depth", type=click.IntRange(min=0),
              help="Include nested stacks' events to this depth.")
@click.option("--follow", is_flag=True, help="Print each new event as it happens, until "
              "the stack is deleted or Ctrl-C (one line per event).")
@format_option
@click.pass_context
def event_list(ctx: click.Context, name: str, resource_name: str | None, limit: int | None,
               sort_dir: str, nested_depth: int | None, follow: bool, fmt: str) -> None:
    """List the events of stack NAME, oldest first (as `kiln stack events`)."""
    api = _api(ctx)
    found = _lookup(api, name)
    ref = stack_ref(found)
    if follow:
        _follow_events(api, found, resource_name, nested_depth or 0)
        return
    query: dict[str, Any] = {"sort_dir": sort_dir}
    if limit:
        query["limit"] = limit
    if nested_depth:
        query["nested_depth"] = nested_depth
    if resource_name:
        query["resource_name"] = resource_name
    show_events(api, ref, query, fmt)


def _follow_events(api: HeatAPI, found: JSON, resource_name: str | None,
                   nested_depth: int) -> None:
    """Every event so far, then each new one, one line each on stdout: from Kiln's live
    stream, else by polling; ends when the stack is gone (exit 0) or on Ctrl-C (130)."""
    ref = stack_ref(found)
    name, stack_id = str(found["stack_name"]), str(found["id"])
    # a watch only for naming nested resources by their path (group.0.server)
    paths = ActionWatch(api, ref, name, stack_id, "")
    source: EventSource = PollingSource(api, ref)
    marker: str | None = None
    delay = 0.2
    try:
        source = open_source(api, ref, None, nested_depth)
        while True:
            try:
                new = source.fetch(marker, 1.0)
            except StreamUnavailable:
                source.close()
                source = PollingSource(api, ref)
                continue
            except NotFound:
                return   # deleted and gone: nothing more will happen
            except APIError as exc:
                fail(exc.message)
            for item in new:
                if not paths.is_nested(item):
                    marker = str(item["id"])
                if resource_name and item.get("resource_name") != resource_name:
                    continue
                click.echo(event_line(item, name, stack_id, paths.path(item)))
            if getattr(source, "ended", False):
                return   # the stream says the stack was deleted
            if not source.streaming:
                if not new and _deleted(api, ref):
                    return
                time.sleep(delay)  # poll interval of a display, not a synchronisation
                delay = 0.2 if new else min(delay * 1.5, 2.0)
    except KeyboardInterrupt:
        sys.exit(EXIT_INTERRUPTED)
    finally:
        source.close()


def _deleted(api: HeatAPI, ref: str) -> bool:
    try:
        return api.get_stack(ref).get("stack_status") == "DELETE_COMPLETE"
    except NotFound:
        return True


# -- snapshots ------------------------------------------------------------------------


@stack.group()
def template() -> None:
    """The template a stack runs."""


@template.command("show")
@click.argument("name")
@click.option("-f", "--format", "fmt", type=click.Choice(["yaml", "json"]),
              default="yaml", show_default=True, help="Output format.")
@click.pass_context
def template_show(ctx: click.Context, name: str, fmt: str) -> None:
    """Print the template stack NAME runs now (after its last update)."""
    api = _api(ctx)
    found = _call(lambda: api.template(stack_ref(_lookup(api, name))))
    if fmt == "json":
        click.echo(json.dumps(found, indent=2))
    else:
        click.echo(yaml.safe_dump(found, default_flow_style=False, sort_keys=False),
                   nl=False)


@stack.command()
@click.argument("name")
@click.option("--output-file", type=click.Path(dir_okay=False, writable=True),
              metavar="FILE", help="Write the stack's data to FILE instead of stdout.")
@click.pass_context
def abandon(ctx: click.Context, name: str, output_file: str | None) -> None:
    """Forget stack NAME while keeping its resources, printing the data `kiln stack adopt`
    takes them back with."""
    api = _api(ctx)
    data = _call(lambda: api.abandon(stack_ref(_lookup(api, name))))
    text = json.dumps(data, indent=2)
    if output_file is None:
        click.echo(text)
        return
    Path(output_file).write_text(text + "\n")
    click.echo(f"kiln: stack {name} abandoned; its data is in {output_file}", err=True)


@stack.command()
@click.argument("name")
@click.option("--adopt-file", required=True, type=click.Path(exists=True, dir_okay=False),
              metavar="FILE", help="The data `kiln stack abandon` printed.")
@_template_options(required=False)
@click.option("--timeout", type=click.IntRange(min=1), metavar="MINUTES",
              help="Stack action timeout in minutes.")
@click.option("--enable-rollback", is_flag=True, help="Roll back if the adopt fails.")
@click.option("--wait", is_flag=True, help="Wait, showing progress, until adopted.")
@format_option
@click.pass_context
def adopt(ctx: click.Context, name: str, adopt_file: str, template: str | None,
          environments: tuple[str, ...], params: tuple[str, ...],
          param_files: tuple[str, ...], timeout: int | None, enable_rollback: bool,
          wait: bool, fmt: str) -> None:
    """Create stack NAME from the resources of an abandoned stack (the template is the
    abandoned stack's unless -t gives one)."""
    text = Path(adopt_file).read_text()
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise click.BadParameter(f"{adopt_file} is not JSON: {exc}",
                                 param_hint="--adopt-file") from exc
    bundle = load(template, environments)
    body: JSON = {"stack_name": name, **_body(bundle, params, param_files),
                  "adopt_stack_data": text, "disable_rollback": not enable_rollback}
    if timeout:
        body["timeout_mins"] = timeout
    api = _api(ctx)
    started = time.monotonic()
    created = _call(lambda: api.create_stack(body))
    found = _call(lambda: api.get_stack(f"{name}/{created['id']}"))
    watcher = None
    if wait:
        types = _types(bundle.parsed if template else data.get("template"))
        watcher = ActionWatch(api, stack_ref(found), name, str(found["id"]), "ADOPT",
                              expected=set(types), types=types, started=started)
    _finish(api, watcher, found, fmt)


# -- hooks ----------------------------------------------------------------------------


@stack.group()
def hook() -> None:
    """Lifecycle hooks (breakpoints an environment sets on resources)."""


@hook.command("clear")
@click.argument("name")
@click.argument("resources", metavar="RESOURCE...", nargs=-1, required=True)
@click.option("--pre-create", is_flag=True, help="Clear the pre-create hook.")
@click.option("--pre-update", is_flag=True, help="Clear the pre-update hook.")
@click.option("--pre-delete", is_flag=True, help="Clear the pre-delete hook.")
@click.pass_context
def hook_clear(ctx: click.Context, name: str, resources: tuple[str, ...], pre_create: bool,
               pre_update: bool, pre_delete: bool) -> None:
    """Clear the hook a resource of stack NAME is paused at, so the action goes on
    (the one the flags name; without a flag, whichever is set)."""
    api = _api(ctx)
    ref = stack_ref(_lookup(api, name))
    chosen = [h for h, on in zip(HOOKS, (pre_create, pre_update, pre_delete), strict=True)
              if on]
    for resource_name in resources:
        cleared = False
        last: APIError | None = None
        for hook_type in chosen or HOOKS:
            try:
                api.signal(ref, resource_name, {"unset_hook": hook_type})
                cleared = True
            except APIError as exc:
                if chosen or exc.status != 400:
                    fail(exc.message)
                last = exc
        if not cleared:
            fail(f"resource {resource_name} of stack {name} is paused at no hook"
                 + (f" ({last.message})" if last is not None else ""))
