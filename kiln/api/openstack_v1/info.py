"""Service-wide routes: build_info, services, validate, template versions and
functions, resource types with their schemas and generated templates."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from kiln import errors
from kiln.api import params as p
from kiln.api.faults import HTTPError, bad_request
from kiln.api.instantiation import Instantiation
from kiln.api.openstack_v1.common import Call
from kiln.template import lint

#: resources validated one at a time for ``all_errors`` (each is one more validation)
ALL_ERRORS_RESOURCES = 100


async def build_info(call: Call) -> Any:
    get_revision = getattr(call.service, "get_revision", None)
    engine = await get_revision(call.ctx) if get_revision is not None else "unknown"
    return {"api": {"revision": "unknown"}, "engine": {"revision": engine}}


async def services(call: Call) -> Any:
    return {"services": await call.service.list_services(call.ctx)}


async def validate(call: Call) -> Any:
    data = Instantiation(await call.body(), max_template_size=call.conf.max_template_size)
    query = call.query
    show_nested = False
    if query.get("show_nested"):
        show_nested = p.extract_bool("show_nested", query["show_nested"])
    ignorable = query["ignore_errors"].split(",") if query.get("ignore_errors") else None
    # Kiln only: deep=true also runs every check a create would (see EngineService)
    deep = p.extract_bool("deep", query["deep"]) if query.get("deep") else False
    template = await data.template(
        allowed_schemes=list(call.conf.template_url_allowed_schemes),
        timeout=float(call.conf.template_url_timeout),
        allowed_hosts=list(call.conf.template_url_allowed_hosts))
    if template is None:  # data.template() refuses this itself unless it is a PATCH
        raise bad_request("No template specified")
    # Kiln only: all_errors=true reports every resource's error and the warnings (a
    # misspelt function), for the clients where Kiln speaks for itself (kiln.template.lint)
    all_errors = (p.extract_bool("all_errors", query["all_errors"])
                  if query.get("all_errors") else False)
    env, files, env_files = data.environment(), data.files(), data.environment_files()

    async def check(tpl: dict[str, Any]) -> Any:
        result = await call.service.validate_template(
            call.ctx, template=tpl, params=env, files=files, environment_files=env_files,
            show_nested=show_nested, ignorable_errors=ignorable, deep=deep)
        if isinstance(result, dict) and "Error" in result:
            raise bad_request(str(result["Error"]))
        return result

    if not all_errors:
        return await check(template)
    warnings = lint.function_typos(template) + lint.unknown_parameters(template)
    try:
        result = await check(template)
    except errors.KilnError as exc:
        if _status(exc) != 400:
            raise
        raise await _every_error(exc, template, check, warnings) from exc
    if isinstance(result, dict):
        result = {**result, "Warnings": warnings}
    return result


def _status(exc: errors.KilnError) -> int:
    return exc.status if isinstance(exc, HTTPError) else exc.http_status


def _described(exc: errors.KilnError) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "type": exc.type_name if isinstance(exc, HTTPError) else exc.error_type,
        "message": exc.message}
    hint = errors.hint_of(exc)
    if hint:
        entry["hint"] = hint
    return entry


async def _every_error(first: errors.KilnError, template: dict[str, Any],
                       check: Callable[[dict[str, Any]], Awaitable[Any]],
                       warnings: list[str]) -> HTTPError:
    """Heat's fault for the first error, with ``errors`` listing it and every other
    error found by validating each resource on its own (the others made
    OS::Heat::None), and the rest of the template without any."""
    found = [_described(first)]
    variants = [lint.stripped(template)] + [
        lint.isolated(template, name)
        for name in lint.resource_names(template)[:ALL_ERRORS_RESOURCES]]
    for variant in variants:
        try:
            await check(variant)
        except errors.KilnError as exc:
            entry = _described(exc)
            if _status(exc) == 400 and entry not in found:
                found.append(entry)
    error = HTTPError(400, first.message, error_type=found[0]["type"])
    error.hint = found[0].get("hint")
    error.details = {"errors": found, "warnings": warnings}
    return error


async def template_versions(call: Call) -> Any:
    return {"template_versions": await call.service.list_template_versions(call.ctx)}


async def template_functions(call: Call) -> Any:
    with_condition = False
    if call.query.get("with_condition_func") is not None:
        with_condition = p.extract_bool("with_condition_func",
                                        call.query["with_condition_func"])
    functions = await call.service.list_template_functions(
        call.ctx, template_version=call.path("template_version"),
        with_condition_func=with_condition)
    return {"template_functions": functions}


async def resource_types(call: Call) -> Any:
    query = call.query
    with_description = False
    if query.get("with_description") is not None:
        with_description = p.extract_bool("with_description", query["with_description"])
    types = await call.service.list_resource_types(
        call.ctx, support_status=query.get("support_status"), type_name=query.get("name"),
        heat_version=query.get("version"), with_description=with_description)
    return {"resource_types": types}


async def resource_schema(call: Call) -> Any:
    with_description = p.extract_bool("with_description",
                                      call.query.get("with_description", "false"))
    return await call.service.resource_schema(call.ctx, type_name=call.path("type_name"),
                                              with_description=with_description)


async def generate_template(call: Call) -> Any:
    template_type = "cfn"
    if "template_type" in call.query:
        template_type = p.extract_template_type(call.query["template_type"])
    return await call.service.generate_template(call.ctx, type_name=call.path("type_name"),
                                                template_type=template_type)
