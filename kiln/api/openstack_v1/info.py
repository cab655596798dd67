"""Service-wide routes: build_info, services, validate, template versions and
functions, resource types with their schemas and generated templates."""

from __future__ import annotations

from typing import Any

from kiln.api import params as p
from kiln.api.faults import bad_request
from kiln.api.instantiation import Instantiation
from kiln.api.openstack_v1.common import Call


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
    env, files, env_files = data.environment(), data.files(), data.environment_files()
    result = await call.service.validate_template(
        call.ctx, template=template, params=env, files=files, environment_files=env_files,
        show_nested=show_nested, ignorable_errors=ignorable, deep=deep)
    if isinstance(result, dict) and "Error" in result:
        raise bad_request(str(result["Error"]))
    return result


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
