"""Kiln's change set routes beside Heat's (``/stacks/{name}/{id}/changesets...``): an
update's plan stored for review, shown property by property, executed exactly as shown
or refused. New paths only: no answer Heat's clients rely on changes."""

from __future__ import annotations

from typing import Any

from kiln.api import params as p
from kiln.api.faults import bad_request
from kiln.api.instantiation import Instantiation
from kiln.api.openstack_v1.common import Call, empty, json_response

#: body keys that are the change set's own (the rest is an update's body)
_OWN = ("name", "description", "use_previous_parameters", "include_nested_stacks",
        "resources_to_import")
_IMPORT = "resources_to_import"


def _imports(body: dict[str, Any]) -> list[dict[str, Any]]:
    """``resources_to_import``: each ``logical_resource_id``, ``physical_resource_id``
    and, optionally, ``resource_type`` (the template's otherwise), as the engine takes
    them (CloudFormation's ``ResourcesToImport``); a bad entry is a 400 naming it."""
    given = body.get(_IMPORT)
    if given is None:
        return []
    if not isinstance(given, list) or not given:
        raise bad_request(f'"{_IMPORT}" must be a non-empty list of resources to import')
    out = []
    for index, item in enumerate(given):
        field = f"{_IMPORT}[{index}]"
        if not isinstance(item, dict):
            raise bad_request(f"{field} must be an object")
        unknown = sorted(set(item) - {"logical_resource_id", "physical_resource_id",
                                      "resource_type"})
        if unknown:
            raise bad_request(f"{field}: unknown keys {unknown}")
        for key in ("logical_resource_id", "physical_resource_id", "resource_type"):
            value = item.get(key)
            if (value is not None or key != "resource_type") and (
                    not isinstance(value, str) or not value):
                raise bad_request(f"{field}.{key} must be a non-empty string")
        out.append({"logical_id": item["logical_resource_id"],
                    "resource_type": item.get("resource_type"),
                    "identifier": {"physical_resource_id": item["physical_resource_id"]},
                    "field": field})
    return out


def _view(call: Call, shown: dict[str, Any]) -> dict[str, Any]:
    """The engine's change set with its links (the one a second person opens)."""
    base = (
        f"{call.api_root}{call.tenant}/stacks/{shown['stack_name']}/"
        f"{shown['stack_id']}/changesets/{shown['id']}"
    )
    out = {k: v for k, v in shown.items() if k != "tenant"}
    out["links"] = [{"href": base, "rel": "self"}, {"href": base + "/execute", "rel": "execute"}]
    return out


async def _known_stack(call: Call) -> None:
    """An unknown stack (or another project's) is Heat's 404 for the stack, before the
    change set, the version or anything in the body is judged, as on Heat's routes."""
    await call.service.identify_stack(call.ctx, call.path("stack_id"))


async def create(call: Call) -> Any:
    body = await call.body()
    await _known_stack(call)
    name = body.get("name")
    if not isinstance(name, str) or not name:
        raise bad_request('The change set needs a "name"')
    description = body.get("description")
    if description is not None and not isinstance(description, str):
        raise bad_request('"description" must be a string')
    previous = body.get("use_previous_parameters") or []
    if not isinstance(previous, list) or not all(isinstance(n, str) for n in previous):
        raise bad_request('"use_previous_parameters" must be a list of names')
    imports = _imports(body)
    patch = p.extract_bool("existing", str(body.get("existing", False)))
    nested = p.extract_bool(
        "include_nested_stacks", str(body.get("include_nested_stacks", False))
    )
    data = Instantiation(
        {k: v for k, v in body.items() if k not in (*_OWN, "existing")},
        patch=patch,
        max_template_size=call.conf.max_template_size,
    )
    args = data.args(is_update=True)
    if patch:
        args["existing"] = True
    template = await data.template(
        allowed_schemes=list(call.conf.template_url_allowed_schemes),
        timeout=float(call.conf.template_url_timeout),
        allowed_hosts=list(call.conf.template_url_allowed_hosts),
    )
    shown = await call.service.create_change_set(
        call.ctx,
        call.path("stack_id"),
        name,
        "IMPORT" if imports else "UPDATE",
        template,
        data.environment(),
        data.files(),
        args,
        use_previous=previous,
        description=description,
        environment_files=data.environment_files(),
        include_nested=nested,
        imports=imports,
    )
    return json_response({"changeset": _view(call, shown)}, 201)


async def index(call: Call) -> Any:
    found = await call.service.list_change_sets(call.ctx, call.path("stack_name"))
    stack_id = call.path("stack_id")
    return {"changesets": [_view(call, s) for s in found if s["stack_id"] == stack_id]}


async def show(call: Call) -> Any:
    await _known_stack(call)
    shown = await call.service.describe_change_set(
        call.ctx, call.path("stack_id"), call.path("changeset")
    )
    return {"changeset": _view(call, shown)}


async def execute(call: Call) -> Any:
    await call.optional_body()  # takes none, but a sent one is bounded and must parse
    await _known_stack(call)
    await call.service.execute_change_set(call.ctx, call.path("stack_id"), call.path("changeset"))
    return empty(202)


async def delete(call: Call) -> Any:
    await _known_stack(call)
    await call.service.delete_change_set(call.ctx, call.path("stack_id"), call.path("changeset"))
    return empty(204)


# -- a stack's history ------------------------------------------------------------------
def _version(call: Call, key: str = "version") -> int:
    text = call.path(key)
    if not text.isdigit() or len(text) > 9:
        raise bad_request(f"The version must be a whole number, not {text[:40]!r}")
    return int(text)


async def versions(call: Call) -> Any:
    return {"versions": await call.service.list_stack_versions(call.ctx, call.identity())}


async def show_version(call: Call) -> Any:
    await _known_stack(call)
    shown = await call.service.show_stack_version(call.ctx, call.identity(), _version(call))
    return {"version": shown}


async def diff_versions(call: Call) -> Any:
    await _known_stack(call)
    against = call.query.get("from")
    if against is None or not against.isdigit() or len(against) > 9:
        raise bad_request("Give the version to compare with as ?from=N")
    return await call.service.diff_stack_versions(
        call.ctx, call.identity(), int(against), _version(call)
    )


async def restore_version(call: Call) -> Any:
    body = await call.body()
    await _known_stack(call)
    name = body.get("name")
    if not isinstance(name, str) or not name:
        raise bad_request('The change set needs a "name"')
    shown = await call.service.restore_version_change_set(
        call.ctx, call.identity(), _version(call), name
    )
    return json_response({"changeset": _view(call, shown)}, 201)
