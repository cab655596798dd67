"""The ``kiln stack`` commands: the ``openstack stack`` ones people use most, with a live
progress display for long actions and a plan before an update.

Option names follow ``openstack stack ...`` (``-t``, ``-e``, ``--parameter``, ``--wait``,
``--timeout`` in minutes, ``--enable-rollback``, ``--rollback``, ``--existing``,
``--tags``, ``-y/--yes``, ``-f``). Exit status: 0 when the request (and, with ``--wait``,
the action) succeeded; 1 when the endpoint refused it, the action ended FAILED, or the
user declined; 2 for a usage error.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Mapping
from typing import Any, NoReturn, TypeVar

import click

from kiln.client import plan as plans
from kiln.client.api import JSON, APIError, HeatAPI, NotFound, stack_ref
from kiln.client.connection import (
    AuthFailed,
    connect,
    connection_options,
    pop_connection_options,
)
from kiln.client.output import format_option, show_list, show_one, stdout_console
from kiln.client.progress import follow, stderr_console
from kiln.client.templates import Bundle, load, parameter_files, parameters
from kiln.client.watch import ActionWatch

F = TypeVar("F", bound=Callable[..., Any])

EXIT_FAILED = 1
#: Ctrl-C while following an action (the shell's 128 + SIGINT)
EXIT_INTERRUPTED = 130

#: the fields ``openstack stack create/update`` print, in its order
SUMMARY_FIELDS = ("id", "stack_name", "description", "creation_time", "updated_time",
                  "stack_status", "stack_status_reason")
#: the fields ``openstack stack show`` prints first, in its order
SHOW_FIELDS = (*SUMMARY_FIELDS, "parameters", "outputs", "links", "parent", "disable_rollback",
               "deletion_time", "stack_user_project_id", "capabilities", "notification_topics",
               "stack_owner", "timeout_mins", "tags")


#: the one prefix of every error line ``kiln`` prints (kiln.cli's own errors use it too)
PREFIX = "kiln: error:"


def fail(message: str) -> NoReturn:
    click.echo(f"{PREFIX} {message}", err=True)
    sys.exit(EXIT_FAILED)


def _report(exc: click.ClickException, ctx: click.Context | None) -> NoReturn:
    """Click's own errors (a usage error, a template that cannot be read) in the same one
    line as ours: ``kiln: error: ...`` where click would print ``Error: ...`` after the
    usage text."""
    if isinstance(exc, AuthFailed):
        exc.show()
    elif isinstance(exc, click.UsageError):
        where = exc.ctx or ctx
        helped = f" (see '{where.command_path} --help')" if where is not None else ""
        click.echo(f"{PREFIX} {exc.format_message()}{helped}", err=True)
    else:
        click.echo(f"{PREFIX} {exc.format_message()}", err=True)
    sys.exit(exc.exit_code)


class _StackGroup(click.Group):
    """The ``stack`` group: every error under it, click's included, is one
    ``kiln: error:`` line."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        try:
            return super().parse_args(ctx, args)
        except click.exceptions.NoArgsIsHelpError:
            raise
        except click.ClickException as exc:
            _report(exc, ctx)

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except click.exceptions.NoArgsIsHelpError:
            raise
        except click.ClickException as exc:
            _report(exc, ctx)


class _StackPartGroup(click.Group):
    """A ``kiln stack <part>`` group (history, changeset, snapshot, resource...): each
    command takes the stack's name after it, so a name given first (``kiln stack history
    app``) is the likeliest slip; say so, with the command that would have worked."""

    def resolve_command(
        self, ctx: click.Context, args: list[str],
    ) -> tuple[str | None, click.Command | None, list[str]]:
        try:
            return super().resolve_command(ctx, args)
        except click.UsageError as exc:
            given = args[0] if args else ""
            if not given or given.startswith("-") or self.get_command(ctx, given):
                raise
            if "Did you mean" in exc.format_message() and len(args) > 1:
                raise  # a command's typo (`history lisst app`), not a name put first
            first = "list" if "list" in self.commands else next(iter(self.commands))
            raise click.UsageError(
                f"{exc.format_message()} The stack's name goes after the command, as in "
                f"'{ctx.command_path} {first} {given}'.", ctx) from None


_StackGroup.group_class = _StackPartGroup


def _api(ctx: click.Context) -> HeatAPI:
    api: HeatAPI = ctx.ensure_object(dict)["api"]()
    return api


def _lookup(api: HeatAPI, name: str) -> JSON:
    try:
        return api.get_stack(name)
    except NotFound:
        fail(f"Stack not found: {name}")


@click.group("stack", cls=_StackGroup)
@connection_options
@click.pass_context
def stack(ctx: click.Context, /, **kwargs: Any) -> None:
    """Create, update, watch and inspect stacks on a Heat-compatible endpoint.

    Point it at Kiln or Heat as you would the openstack CLI: --os-endpoint
    http://127.0.0.1:8004/v1/<project> (no authentication, as `kiln serve` runs by
    default), or OS_AUTH_URL, OS_USERNAME, OS_PASSWORD, OS_PROJECT_NAME... for Keystone.
    """
    options = pop_connection_options(kwargs)
    cache: list[HeatAPI] = []

    def api() -> HeatAPI:
        if not cache:
            cache.append(connect(options))
            ctx.call_on_close(cache[0].close)
        return cache[0]

    ctx.ensure_object(dict)["api"] = api


def _template_options(required: bool) -> Callable[[F], F]:
    def decorate(fn: F) -> F:
        for option in reversed((
            click.option("-t", "--template", "template", required=required, metavar="FILE|URL",
                         help="Template: a path or a URL."),
            click.option("-e", "--environment", "environments", multiple=True,
                         metavar="FILE|URL",
                         help="Environment file (repeatable; later files win)."),
            click.option("--parameter", "params", multiple=True, metavar="KEY=VALUE",
                         help="Parameter value (repeatable, or KEY1=V1;KEY2=V2)."),
            click.option("--parameter-file", "param_files", multiple=True,
                         metavar="KEY=FILE", help="Parameter value read from a file."),
        )):
            fn = option(fn)
        return fn
    return decorate


def _body(bundle: Bundle, params: tuple[str, ...], param_files: tuple[str, ...]) -> JSON:
    body: JSON = {"files": bundle.files, "environment": {}}
    if bundle.template is not None:
        body["template"] = bundle.template
    if bundle.environment_files:
        body["environment_files"] = bundle.environment_files
    values = {**parameters(params), **parameter_files(param_files)}
    body["parameters"] = values
    return body


def _types(template: Any) -> dict[str, str]:
    resources = plans._resources(template if isinstance(template, dict) else None)
    return {name: str(plans._field(d, "type", "Type") or "") for name, d in resources.items()}


def _call(fn: Callable[[], Any]) -> Any:
    try:
        return fn()
    except APIError as exc:
        _fail_with(exc)


def _fail_with(exc: APIError) -> NoReturn:
    fail(exc.message if exc.hint is None else f"{exc.message}\n  hint: {exc.hint}")


def _follow(watch: ActionWatch) -> None:
    """Follow the action; Ctrl-C stops watching (exit 130), never the action itself."""
    try:
        _call(lambda: follow(watch))
    except KeyboardInterrupt:
        click.echo(f"\nkiln: stopped watching; the {watch.action.lower()} of stack "
                   f"{watch.stack_name} goes on (kiln stack show {watch.stack_name})",
                   err=True)
        sys.exit(EXIT_INTERRUPTED)


def _finish(api: HeatAPI, watch: ActionWatch | None, stack: JSON, fmt: str,
            *, show: bool = True) -> None:
    """Follow the action (if waiting), print the stack, exit 1 if it ended FAILED."""
    if watch is not None:
        _follow(watch)
        final = watch.final or {}
        if watch.action != "DELETE":
            stack = _call(lambda: api.get_stack(stack_ref(stack)))
        else:
            stack = {**stack, **{k: final[k] for k in ("stack_status", "stack_status_reason")
                                 if k in final}}
    if show:
        show_one({k: stack.get(k) for k in SUMMARY_FIELDS}, fmt)
    if watch is not None and not watch.succeeded:
        sys.exit(EXIT_FAILED)


@stack.command()
@click.argument("name")
@_template_options(required=True)
@click.option("--timeout", type=click.IntRange(min=1), metavar="MINUTES",
              help="Stack action timeout in minutes (the server fails the stack after it).")
@click.option("--enable-rollback", is_flag=True, help="Roll back if the create fails.")
@click.option("--tags", metavar="TAG1,TAG2", help="Comma-separated tags.")
@click.option("--wait", is_flag=True, help="Wait, showing progress, until the create ends.")
@format_option
@click.pass_context
def create(ctx: click.Context, name: str, template: str, environments: tuple[str, ...],
           params: tuple[str, ...], param_files: tuple[str, ...], timeout: int | None,
           enable_rollback: bool, tags: str | None, wait: bool, fmt: str) -> None:
    """Create stack NAME from a template."""
    bundle = load(template, environments)
    checked = _body(bundle, params, param_files)
    body = {"stack_name": name, **checked, "disable_rollback": not enable_rollback}
    if timeout:
        body["timeout_mins"] = timeout
    if tags:
        body["tags"] = tags
    api = _api(ctx)
    started = time.monotonic()
    try:
        created = api.create_stack(body)
    except APIError as exc:
        _refused(api, checked, exc)
    stack = _call(lambda: api.get_stack(f"{name}/{created['id']}"))
    watch = None
    if wait:
        watch = ActionWatch(api, stack_ref(stack), name, str(stack["id"]), "CREATE",
                            expected=set(_types(bundle.parsed)), types=_types(bundle.parsed),
                            rollback=enable_rollback, started=started)
    _finish(api, watch, stack, fmt)


def _plan(api: HeatAPI, stack: JSON, bundle: Bundle, body: JSON, existing: bool) -> plans.Plan:
    ref = stack_ref(stack)
    preview = _call(lambda: api.preview_update(ref, body, patch=existing))
    old_template = _call(lambda: api.template(ref))
    new_template = bundle.parsed if bundle.template is not None else old_template
    old_params = {k: v for k, v in (stack.get("parameters") or {}).items()
                  if not k.startswith(("OS::", "AWS::"))}
    new_params: Mapping[str, Any] = body.get("parameters") or {}
    if existing:
        new_params = {**old_params, **new_params}
    return plans.build(str(stack["stack_name"]), preview, old_template, new_template,
                       old_params, new_params)


def _update_body(bundle: Bundle, params: tuple[str, ...], param_files: tuple[str, ...],
                 existing: bool, rollback: str | None, timeout: int | None,
                 tags: str | None, template: str | None) -> JSON:
    if template is None and not existing:
        raise click.UsageError("give a template (-t) or --existing to keep the current one")
    body = _body(bundle, params, param_files)
    if rollback in ("enabled", "disabled"):
        body["disable_rollback"] = rollback == "disabled"
    if timeout:
        body["timeout_mins"] = timeout
    if tags is not None:
        body["tags"] = tags
    return body


def _update_options(fn: F) -> F:
    for option in reversed((
        click.argument("name"),
        _template_options(required=False),
        click.option("--existing", is_flag=True,
                     help="Keep the stack's template and parameters, changing only what is "
                          "given (a PATCH update)."),
        click.option("--rollback", type=click.Choice(["enabled", "disabled", "keep"]),
                     help="Rollback on update failure (keep: the stack's setting)."),
        click.option("--timeout", type=click.IntRange(min=1), metavar="MINUTES",
                     help="Stack action timeout in minutes."),
        click.option("--tags", metavar="TAG1,TAG2", help="Replace the stack's tags."),
    )):
        fn = option(fn)
    return fn


@stack.command()
@_update_options
@click.option("--dry-run", is_flag=True, help="Print the plan only (as `kiln stack preview`).")
@click.option("--save-as", metavar="CHANGESET",
              help="Store the plan as a change set of this name instead of applying it "
                   "(`kiln stack changeset execute` runs it as shown).")
@click.option("--converge", is_flag=True,
              help="Read each resource's live state first, so that what drifted from the "
                   "template is brought back to it (Heat's converge flag).")
@click.option("-y", "--yes", is_flag=True, help="Apply without asking for confirmation.")
@click.option("--wait", is_flag=True, help="Wait, showing progress, until the update ends.")
@format_option
@click.pass_context
def update(ctx: click.Context, name: str, template: str | None,
           environments: tuple[str, ...], params: tuple[str, ...],
           param_files: tuple[str, ...], existing: bool, rollback: str | None,
           timeout: int | None, tags: str | None, dry_run: bool, save_as: str | None,
           converge: bool, yes: bool, wait: bool, fmt: str) -> None:
    """Update stack NAME: print the plan, confirm, apply."""
    bundle = load(template, environments)
    body = _update_body(bundle, params, param_files, existing, rollback, timeout, tags,
                        template)
    if converge:
        if save_as is not None:
            raise click.UsageError("--converge applies to an update, not to a change set")
        body["converge"] = True
    if save_as is not None:
        from kiln.client.changesets import save_plan

        save_plan(_api(ctx), name, body, save_as, existing, fmt)
        return
    api = _api(ctx)
    stack = _lookup(api, name)
    plan = _plan(api, stack, bundle, body, existing)
    structured = fmt in ("json", "yaml", "value")  # the plan then goes to stderr
    plans.render(plan, stderr_console() if structured else stdout_console())
    if dry_run:
        if structured:
            show_one(plan.as_json(), fmt)
        return
    if not yes:
        if not sys.stdin.isatty():
            fail("the update needs confirmation: run it on a terminal or pass --yes")
        if not click.confirm("Apply this update?", default=False, err=True):
            fail("update cancelled; nothing was changed")
    ref = stack_ref(stack)
    marker = _call(lambda: ActionWatch.last_event_id(api, ref)) if wait else None
    started = time.monotonic()
    _call(lambda: api.update_stack(ref, body, patch=existing))
    watch = None
    if wait:
        enabled = (rollback == "enabled" if rollback in ("enabled", "disabled")
                   else not stack.get("disable_rollback", True))
        types = {**_types(api.template(ref)), **_types(bundle.parsed)}
        watch = ActionWatch(api, ref, str(stack["stack_name"]), str(stack["id"]), "UPDATE",
                            marker=marker, expected=plan.names, types=types, rollback=enabled,
                            started=started)
    else:
        stack = _call(lambda: api.get_stack(ref))
    _finish(api, watch, stack, fmt)


@stack.command()
@_update_options
@format_option
@click.pass_context
def preview(ctx: click.Context, name: str, template: str | None,
            environments: tuple[str, ...], params: tuple[str, ...],
            param_files: tuple[str, ...], existing: bool, rollback: str | None,
            timeout: int | None, tags: str | None, fmt: str) -> None:
    """Print the plan of an update of stack NAME, changing nothing."""
    bundle = load(template, environments)
    body = _update_body(bundle, params, param_files, existing, rollback, timeout, tags,
                        template)
    api = _api(ctx)
    stack = _lookup(api, name)
    plan = _plan(api, stack, bundle, body, existing)
    if fmt in ("json", "yaml"):
        show_one(plan.as_json(), fmt)
    else:
        plans.render(plan, stdout_console())


@stack.command()
@click.argument("names", nargs=-1, required=True)
@click.option("-y", "--yes", is_flag=True, help="Delete without asking for confirmation.")
@click.option("--wait", is_flag=True, help="Wait, showing progress, until deleted.")
@click.pass_context
def delete(ctx: click.Context, names: tuple[str, ...], yes: bool, wait: bool) -> None:
    """Delete one or more stacks."""
    if not yes and sys.stdin.isatty() and not click.confirm(
            f"Delete stack{'s' if len(names) > 1 else ''} {', '.join(names)}?",
            default=False, err=True):
        fail("delete cancelled; nothing was changed")
    api = _api(ctx)
    results = [_delete_one(api, name, wait) for name in names]
    if not all(results):
        sys.exit(EXIT_FAILED)


def _delete_one(api: HeatAPI, name: str, wait: bool) -> bool:
    """Delete one stack (following it with ``wait``); False when the delete failed."""
    stack = _lookup(api, name)
    ref = stack_ref(stack)
    marker: str | None = None
    expected: set[str] = set()
    if wait:
        marker = _call(lambda: ActionWatch.last_event_id(api, ref))
        expected = {str(r["resource_name"]) for r in _call(lambda: api.resources(ref))}
    started = time.monotonic()
    _call(lambda: api.delete_stack(ref))
    if not wait:
        return True
    watch = ActionWatch(api, ref, str(stack["stack_name"]), str(stack["id"]), "DELETE",
                        marker=marker, expected=expected, started=started)
    _follow(watch)
    return watch.succeeded


@stack.command()
@click.argument("name")
@format_option
@click.pass_context
def show(ctx: click.Context, name: str, fmt: str) -> None:
    """Show stack NAME (or id)."""
    stack = _lookup(_api(ctx), name)
    ordered = {k: stack.get(k) for k in SHOW_FIELDS}
    ordered.update({k: v for k, v in stack.items() if k not in ordered})
    show_one(ordered, fmt)


@stack.command("list")
@click.option("--all-projects", is_flag=True, help="Every project's stacks (admin).")
@click.option("--tags", metavar="TAG1,TAG2", help="Only stacks with all these tags.")
@click.option("--property", "properties", multiple=True, metavar="KEY=VALUE",
              help="Filter, e.g. status=CREATE_COMPLETE (repeatable).")
@click.option("--limit", type=click.IntRange(min=1), help="At most this many stacks.")
@click.option("--sort", metavar="KEY[:asc|desc]", help="Sort key and direction.")
@format_option
@click.pass_context
def list_(ctx: click.Context, all_projects: bool, tags: str | None,
          properties: tuple[str, ...], limit: int | None, sort: str | None,
          fmt: str) -> None:
    """List stacks."""
    query: dict[str, Any] = {}
    for prop in properties:
        key, sep, value = prop.partition("=")
        if not sep:
            raise click.BadParameter(f"{prop!r} is not KEY=VALUE", param_hint="--property")
        query.setdefault(key, []).append(value)
    if all_projects:
        query["global_tenant"] = "True"
    if tags:
        query["tags"] = tags
    if limit:
        query["limit"] = limit
    if sort:
        key, _, direction = sort.partition(":")
        query["sort_keys"] = key
        if direction:
            query["sort_dir"] = direction
    stacks = _call(lambda: _api(ctx).list_stacks(query))
    columns = ["ID", "Stack Name", "Stack Status", "Creation Time", "Updated Time"]
    if any("project" in s for s in stacks):
        columns.insert(2, "Project")
    rows = [{"ID": s.get("id"), "Stack Name": s.get("stack_name"), "Project": s.get("project"),
             "Stack Status": s.get("stack_status"), "Creation Time": s.get("creation_time"),
             "Updated Time": s.get("updated_time")} for s in stacks]
    show_list(rows, columns, fmt)


EVENT_FIELDS = ("resource_name", "id", "resource_status", "resource_status_reason",
                "event_time", "physical_resource_id", "logical_resource_id")


@stack.command()
@click.argument("name")
@click.option("--limit", type=click.IntRange(min=1), help="At most this many events.")
@click.option("--sort-dir", type=click.Choice(["asc", "desc"]), default="asc",
              show_default=True)
@click.option("--nested-depth", type=click.IntRange(min=0), help="Include nested stacks' "
              "events to this depth.")
@format_option
@click.pass_context
def events(ctx: click.Context, name: str, limit: int | None, sort_dir: str,
           nested_depth: int | None, fmt: str) -> None:
    """List the events of stack NAME, oldest first."""
    api = _api(ctx)
    ref = stack_ref(_lookup(api, name))
    query: dict[str, Any] = {"sort_dir": sort_dir}
    if limit:
        query["limit"] = limit
    if nested_depth:
        query["nested_depth"] = nested_depth
    show_events(api, ref, query, fmt)


def show_events(api: HeatAPI, ref: str, query: dict[str, Any], fmt: str) -> None:
    """One page of a stack's events: every field in a machine format, the four a reader
    scans in a table (`stack events` and `stack event list`)."""
    rows = _call(lambda: api.events(ref, query))
    if fmt in ("json", "yaml", "value"):
        show_list(rows, EVENT_FIELDS, fmt)
    else:
        show_list(rows, ("event_time", "resource_name", "resource_status",
                         "resource_status_reason"), fmt)


@stack.command()
@click.argument("name")
@click.argument("key", required=False)
@format_option
@click.pass_context
def outputs(ctx: click.Context, name: str, key: str | None, fmt: str) -> None:
    """Show stack NAME's outputs with their values (or the one output KEY)."""
    api = _api(ctx)
    stack = _lookup(api, name)
    if key is not None:
        output = _call(lambda: api.output(stack_ref(stack), key))
        if output.get("output_error"):
            fail(f"output {key}: {output['output_error']}")
        show_one({k: output.get(k) for k in ("output_key", "output_value", "description")},
                 fmt)
        return
    rows = [{k: o.get(k) for k in ("output_key", "output_value", "description",
                                   "output_error") if k in o or k != "output_error"}
            for o in stack.get("outputs") or []]
    show_list(rows, ("output_key", "output_value", "description"), fmt)


@stack.command()
@_template_options(required=True)
@click.option("--show-nested", is_flag=True, help="Validate nested templates too.")
@format_option
@click.pass_context
def validate(ctx: click.Context, template: str, environments: tuple[str, ...],
             params: tuple[str, ...], param_files: tuple[str, ...], show_nested: bool,
             fmt: str) -> None:
    """Validate a template (with its environment and parameters) without creating it."""
    bundle = load(template, environments)
    body = _body(bundle, params, param_files)
    # all_errors (Kiln only): every resource's error and the warnings, not just Heat's one
    path_query = "?all_errors=true" + ("&show_nested=true" if show_nested else "")
    api = _api(ctx)
    try:
        result = api.request("POST", "/validate" + path_query, json=body)
    except APIError as exc:
        if not exc.errors:
            _fail_with(exc)
        _fail_with_every(exc.errors, exc.warnings)
    _warn(result.pop("Warnings", []) if isinstance(result, dict) else [])
    show_one(result, "yaml" if fmt == "table" else fmt)


def _refused(api: HeatAPI, body: JSON, exc: APIError) -> NoReturn:
    """A create refused as invalid: Heat's one error first, then every other error a
    create would meet, as Kiln's ``/validate?all_errors=true&deep=true`` finds them (an
    endpoint without it, Heat, gives only the first)."""
    if exc.status != 400:
        _fail_with(exc)
    try:
        api.request("POST", "/validate?all_errors=true&deep=true", json=body)
    except APIError as found:
        first = {"message": exc.message, "hint": exc.hint}
        others = [e for e in found.errors if e.get("message") != exc.message]
        if others:
            _fail_with_every([first, *others], found.warnings)
    _fail_with(exc)


def _fail_with_every(errors: list[dict[str, Any]], warnings: list[str]) -> NoReturn:
    _warn(warnings)
    for error in errors:
        hint = f"\n  hint: {error['hint']}" if error.get("hint") else ""
        click.echo(f"{PREFIX} {error.get('message')}{hint}", err=True)
    sys.exit(EXIT_FAILED)


def _warn(warnings: list[str]) -> None:
    for warning in warnings:
        click.echo(f"kiln: warning: {warning}", err=True)


# the day-two commands (resources, actions, snapshots...) add themselves to ``stack``
from kiln.client import changesets as _changesets  # noqa: E402, F401
from kiln.client import day_two as _day_two  # noqa: E402, F401
from kiln.client import drift as _drift  # noqa: E402, F401
from kiln.client import history as _history  # noqa: E402, F401
from kiln.client import snapshots as _snapshots  # noqa: E402, F401
