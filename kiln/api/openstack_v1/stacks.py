"""Stack collection and stack routes: list, create, preview, lookup redirects, show,
update, delete, abandon, export, template/environment/files, outputs, snapshots."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from starlette.responses import RedirectResponse, Response

from kiln import errors
from kiln.api import identity as ident
from kiln.api import params as p
from kiln.api import views
from kiln.api.faults import bad_request
from kiln.api.instantiation import Instantiation
from kiln.api.openstack_v1.common import (
    Call,
    empty,
    forbidden_policy,
    json_response,
    stack_read,
)

# Filters of GET /stacks that select anything in Heat: its stack columns. Heat also takes
# the other REST field names (stack_name, stack_status, ...) and then ignores them; so
# does Kiln, by not passing them on.
_FILTER_KEYS: dict[str, p.ParamKind] = {
    k: "mixed" for k in ("id", "status", "name", "action", "tenant", "username", "owner_id",
                         "disable_rollback", "stack_user_project_id")}
_LIST_KEYS: dict[str, p.ParamKind] = {
    "limit": "single", "marker": "single", "sort_dir": "single", "sort_keys": "multi",
    "show_deleted": "single", "show_nested": "single", "show_hidden": "single",
    "tags": "single", "tags_any": "single", "not_tags": "single", "not_tags_any": "single"}
#: Kiln's own search (no Heat client sends it, and Heat ignores it): a stack name
#: containing the value in any case, as the dashboard's search box asks.
_NAME_CONTAINS = "name_contains"
_BOOL_PARAMS = ("show_deleted", "show_nested", "show_hidden")
_TAG_PARAMS = ("tags", "tags_any", "not_tags", "not_tags_any")


def _instantiation(call: Call, body: dict[str, Any], *, patch: bool = False) -> Instantiation:
    return Instantiation(body, patch=patch, max_template_size=call.conf.max_template_size)


async def _template(call: Call, data: Instantiation) -> dict[str, Any] | None:
    """The request's template; None only for a PATCH that keeps the stored one."""
    return await data.template(allowed_schemes=list(call.conf.template_url_allowed_schemes),
                               timeout=float(call.conf.template_url_timeout),
        allowed_hosts=list(call.conf.template_url_allowed_hosts))


async def _required_template(call: Call, data: Instantiation) -> dict[str, Any]:
    template = await _template(call, data)
    if template is None:  # data.template() refuses this itself unless it is a PATCH
        raise bad_request("No template specified")
    return template


_STATUSES = ("COMPLETE", "FAILED", "IN_PROGRESS")


def _split_status(filters: dict[str, Any]) -> dict[str, Any]:
    """``status=CREATE_COMPLETE`` filters on action CREATE and status COMPLETE, as Heat
    reads it (action and status are kept apart): each value's status part goes to the
    status filter and its action part joins the action filter (so, as in Heat, two values
    filter on every combination of their actions and statuses)."""
    if "status" not in filters:
        return filters
    values = filters["status"] if isinstance(filters["status"], list) else [filters["status"]]
    statuses: set[str] = set()
    actions: set[str] = set()
    for value in values:
        for status in _STATUSES:
            at = str(value).rfind(status)
            if at != -1:
                statuses.add(value[at:])
                if at > 1:
                    actions.add(value[:at - 1])
                break
    result = dict(filters)
    ordered = sorted(statuses)
    result["status"] = ordered[0] if len(ordered) == 1 else ordered
    if actions:
        given = result.get("action", [])
        merged = sorted(actions | set(given if isinstance(given, list) else [given]))
        result["action"] = merged[0] if len(merged) == 1 else merged
    return result


async def index(call: Call) -> Any:
    query = call.query
    global_tenant = False
    if "global_tenant" in query:
        global_tenant = p.extract_bool("global_tenant", query["global_tenant"])
    if global_tenant and not (call.ctx.is_admin or call.ctx.lists_all_projects):
        raise forbidden_policy("stacks:global_index")
    params = p.allowed(query, _LIST_KEYS)
    filters = _split_status(p.allowed(query, _FILTER_KEYS)) or None
    contains = query.get(_NAME_CONTAINS)
    if contains:
        filters = {**(filters or {}), _NAME_CONTAINS: str(contains)}
    if filters and "disable_rollback" in filters:
        flag = filters["disable_rollback"]
        filters["disable_rollback"] = (
            [p.extract_bool("disable_rollback", v) for v in flag] if isinstance(flag, list)
            else p.extract_bool("disable_rollback", flag))
    for key in _BOOL_PARAMS:
        if key in params:
            params[key] = p.extract_bool(key, params[key])
    if "limit" in params:
        params["limit"] = p.extract_int("limit", params["limit"])
    for key in _TAG_PARAMS:
        if key in params:
            params[key] = p.extract_tags(params[key])
    if "sort_dir" in params:
        params["sort_dir"] = p.extract_sort_dir(params["sort_dir"])
    if global_tenant:
        params["global_tenant"] = True
    with_count = False
    if query.get("with_count"):
        with_count = p.extract_bool("with_count", query["with_count"])
    return await stack_read(call, lambda: _listing(call, params, filters, with_count))


async def _listing(call: Call, params: dict[str, Any], filters: dict[str, Any] | None,
                   with_count: bool) -> Any:
    everywhere = bool(params.get("global_tenant"))
    # each stack's project is shown to whoever may list other projects' stacks, as Heat
    # shows it to its no-auth caller (an admin)
    include_project = call.ctx.is_admin or call.ctx.lists_all_projects
    if filters and "tenant" in filters and not everywhere:
        # a listing confined to the caller's project: a tenant filter either keeps
        # everything or nothing
        filters = dict(filters)
        wanted = filters.pop("tenant")
        if call.ctx.project_id not in (wanted if isinstance(wanted, list) else [wanted]):
            return views.stack_collection(call.request, call.api_root, call.tenant, [],
                                          count=0 if with_count else None,
                                          include_project=include_project)
        filters = filters or None
    stacks = await call.service.list_stacks(call.ctx, filters=filters, **params)
    count = None
    if with_count:
        count_args = {k: v for k, v in params.items()
                      if k not in ("limit", "marker", "sort_dir", "sort_keys")}
        count = await call.service.count_stacks(call.ctx, filters=filters, **count_args)
    return views.stack_collection(call.request, call.api_root, call.tenant, stacks,
                                  count=count, include_project=include_project)


async def detail(call: Call) -> Any:
    stacks = await call.service.list_stacks(call.ctx)
    return {"stacks": [views.format_stack(call.api_root, call.tenant, s) for s in stacks]}


async def create(call: Call) -> Any:
    data = _instantiation(call, await call.body())
    name = data.stack_name()
    args = data.args()
    template = await _required_template(call, data)
    env, files, env_files = data.environment(), data.files(), data.environment_files()
    result = await call.service.create_stack(
        call.ctx, stack_name=name, template=template, params=env, files=files, args=args,
        environment_files=env_files)
    identity = ident.coerce(result, call.tenant, name)
    if identity is None:
        identity = ident.coerce(result.get("stack_identity") if isinstance(result, dict)
                                else None, call.tenant, name)
    assert identity is not None, "create_stack returned no identity"
    stack = views.format_stack(call.api_root, call.tenant, {"stack_identity": identity})
    return json_response({"stack": stack}, 201,
                         headers={"Location": stack["links"][0]["href"]})


_PROPERTY_ERROR = "Property error: "


def _as_heat_api_words(exc: errors.StackValidationFailed) -> errors.StackValidationFailed:
    """A property error as Heat's API words it for a preview (heat-tempest-plugin's
    StackPreviewTest.test_basic_fail): Heat's engine raises ``Property error: <path>:
    <detail>``, and its API rebuilds that exception from the formatted parts oslo.messaging
    carries, which doubles each separator (``Property error: : <path>: : <detail>``, as
    Heat 27.0.1 answers over any real transport). Other errors are left as they are."""
    head = f"{_PROPERTY_ERROR}{errors.format_path(exc.path)}: " if exc.path else ""
    if not head or not exc.message.startswith(head):
        return exc
    detail = exc.message[len(head):]
    return errors.StackValidationFailed(
        f"{_PROPERTY_ERROR}: {errors.format_path(exc.path)}: : {detail}", path=exc.path,
        hint=errors.hint_of(exc))


async def preview(call: Call) -> Any:
    data = _instantiation(call, await call.body())
    name = data.stack_name()
    args = data.args()
    template = await _required_template(call, data)
    env, files, env_files = data.environment(), data.files(), data.environment_files()
    try:
        result = await call.service.preview_stack(
            call.ctx, stack_name=name, template=template, params=env, files=files,
            args=args, environment_files=env_files)
    except errors.StackValidationFailed as exc:
        worded = _as_heat_api_words(exc)
        if worded is exc:
            raise
        raise worded from exc
    stack = views.format_stack(call.api_root, call.tenant, result)
    if "resources" in stack:
        stack["resources"] = views.engine_resource(stack["resources"])
    return {"stack": stack}


async def _redirect(call: Call, identity: ident.Identity, subpath: str = "") -> Response:
    location = ident.make_url(call.api_root, identity)
    if subpath:
        location = f"{location}/{subpath}"
    if call.query:
        location += "?" + urlencode(list(call.query.multi_items()))
    return RedirectResponse(location, status_code=302)


async def lookup(call: Call) -> Response:
    """Redirect a stack name (or ARN) to its canonical ``/stacks/<name>/<id>`` URL."""
    name = call.path("stack_name")
    identity = ident.from_arn(name)
    if identity is not None and identity["tenant"] != call.ctx.project_id \
            and not call.ctx.is_admin:
        # another project's ARN: redirecting there would hand out its stack's URL
        raise errors.EntityNotFound(
            f"The Stack ({identity['stack_name']}) could not be found.")
    if identity is None:
        found = await call.service.identify_stack(call.ctx, stack_name=name)
        identity = ident.coerce(found, call.tenant, name)
        assert identity is not None, "identify_stack returned no identity"
    subpath = str(call.request.path_params.get("subpath", ""))
    return await _redirect(call, identity, subpath)


async def show(call: Call) -> Any:
    resolve = True
    if "resolve_outputs" in call.query:
        resolve = p.extract_bool("resolve_outputs", call.query["resolve_outputs"])
    return await stack_read(call, lambda: _show(call, resolve))


async def _show(call: Call, resolve: bool) -> Any:
    result = await call.service.show_stack(call.ctx, stack_identity=call.identity(),
                                           resolve_outputs=resolve)
    body = {"stack": views.format_stack(call.api_root, call.tenant, result)}
    if resolve and (result.get("outputs_live") or
                    str(result.get("stack_status", "")).endswith("_IN_PROGRESS")):
        # outputs resolved from resources (or a cloud) that change without a stack
        # write: this body must not be reused under the stack change number
        return json_response(body)
    return body


async def get_template(call: Call) -> Any:
    return await call.service.get_template(call.ctx, stack_identity=call.identity())


async def get_environment(call: Call) -> Any:
    return await call.service.get_environment(call.ctx, stack_identity=call.identity())


async def get_files(call: Call) -> Any:
    return await call.service.get_files(call.ctx, stack_identity=call.identity())


async def _update(call: Call, *, patch: bool, preview_only: bool) -> Any:
    data = _instantiation(call, await call.body(), patch=patch)
    args = data.args(is_update=True)
    if preview_only and "show_nested" in call.query:
        args["show_nested"] = p.extract_bool("show_nested", call.query["show_nested"])
    template = await _template(call, data)
    identity, params, files = call.identity(), data.environment(), data.files()
    env_files = data.environment_files()
    if preview_only:
        changes = await call.service.preview_update_stack(
            call.ctx, identity, template, params, files, args, env_files)
        if isinstance(changes, dict) and set(changes) == {"resource_changes"}:
            changes = changes["resource_changes"]
        if isinstance(changes, dict):
            changes = {k: views.engine_resource(v) for k, v in changes.items()}
        return {"resource_changes": changes}
    await call.service.update_stack(call.ctx, identity, template, params, files, args,
                                    env_files)
    return empty(202)


async def update(call: Call) -> Any:
    return await _update(call, patch=False, preview_only=False)


async def update_patch(call: Call) -> Any:
    return await _update(call, patch=True, preview_only=False)


async def preview_update(call: Call) -> Any:
    return await _update(call, patch=False, preview_only=True)


async def preview_update_patch(call: Call) -> Any:
    return await _update(call, patch=True, preview_only=True)


async def delete(call: Call) -> Any:
    await call.service.delete_stack(call.ctx, stack_identity=call.identity())
    return empty(204)


async def abandon(call: Call) -> Any:
    return await call.service.abandon_stack(call.ctx, stack_identity=call.identity())


async def export(call: Call) -> Any:
    return await call.service.export_stack(call.ctx, stack_identity=call.identity())


async def list_outputs(call: Call) -> Any:
    outputs = await call.service.list_outputs(call.ctx, stack_identity=call.identity())
    return {"outputs": outputs}


async def show_output(call: Call) -> Any:
    output = await call.service.show_output(call.ctx, stack_identity=call.identity(),
                                            output_key=call.path("output_key"))
    return {"output": output}


async def snapshot(call: Call) -> Any:
    body = await call.body()
    name = body.get("name")
    if name is not None and not isinstance(name, str):
        raise bad_request("Snapshot name must be a string")
    return await call.service.stack_snapshot(call.ctx, stack_identity=call.identity(),
                                             name=name)


async def list_snapshots(call: Call) -> Any:
    snaps = await call.service.list_snapshots(call.ctx, stack_identity=call.identity())
    return {"snapshots": snaps}


async def show_snapshot(call: Call) -> Any:
    snap = await call.service.show_snapshot(call.ctx, stack_identity=call.identity(),
                                            snapshot_id=call.path("snapshot_id"))
    return {"snapshot": snap}


async def delete_snapshot(call: Call) -> Any:
    await call.service.delete_snapshot(call.ctx, stack_identity=call.identity(),
                                       snapshot_id=call.path("snapshot_id"))
    return empty(204)


async def restore_snapshot(call: Call) -> Any:
    await call.service.stack_restore(call.ctx, stack_identity=call.identity(),
                                     snapshot_id=call.path("snapshot_id"))
    return empty(202)
