"""EngineService: what the service knows without any stack — template validation, the
template versions and their functions, the resource types — and the physical-id lookup
the CFN API uses.

The bodies are Heat 27's, as its REST API shows them. Where Heat's answer is a plain
bug, Kiln gives the evident intended answer instead:

- ``template_versions/{v}/functions?with_condition_func=true`` mutates Heat's function
  table, so later listings *without* the flag show the condition functions too; Kiln's
  listings depend on the request only.
- an unknown version gives Heat's 404 ``NotFound`` but with the version in the message
  (Heat's says ``Template with version {} not found``).
- Heat's REST API never passes ``with_description`` on to ``resource_types/{type}``
  (its router does not map the query onto the argument), so that body never has a
  ``description``; Kiln's neither, whatever the query says.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from typing import Any

from kiln.clients import service_catalog
from kiln.clients.availability import service_filter
from kiln.engine.actions import validation as v
from kiln.engine.actions.service_check import check_services
from kiln.engine.model.context import RequestContext
from kiln.engine.model.live_stack import StackSupport
from kiln.engine.model.shapes import StackIdentityReply
from kiln.engine.service.interface import JSON
from kiln.engine.service.replies import identity
from kiln.engine.service.shapes import TemplateFunctionReply, TemplateVersionReply
from kiln.engine.service.shared import ServiceCore
from kiln.errors import (
    Conflict,
    EntityNotFound,
    HTTPBadRequest,
    KilnError,
    RequestLimitExceeded,
    StackValidationFailed,
)
from kiln.template import validation as tv
from kiln.template.versions import REGISTRY, TemplateVersion

#: Heat lists a HOT version's functions in the order of its class's table: the 2013
#: table has its own order, later versions start from the 2014 table's order and add
#: new names at the end (names not ranked here follow, in Kiln's table order).
_HOT_2013_ORDER = (
    "Fn::GetAZs", "get_param", "get_resource", "Ref", "get_attr", "Fn::Select", "Fn::Join",
    "list_join", "Fn::Split", "str_replace", "Fn::Replace", "Fn::Base64",
    "Fn::MemberListToMap", "resource_facade", "Fn::ResourceFacade", "get_file")
_HOT_ORDER = (
    "get_attr", "get_file", "get_param", "get_resource", "list_join", "repeat",
    "resource_facade", "str_replace", "Fn::Select", "digest", "str_split", "map_merge",
    "yaql", "map_replace", "if", "filter", "str_replace_strict", "make_url", "list_concat",
    "str_replace_vstrict", "list_concat_unique", "contains")


class TemplateVersionNotFound(EntityNotFound):
    heat_type = "NotFound"


class PhysicalResourceIDAmbiguity(Conflict):
    """Heat raises this unmapped (a 500); it is a conflict in the data, not a crash."""


def _listing_order(version: TemplateVersion, names: Sequence[str]) -> list[str]:
    if version.family != "hot":
        return list(names)
    order = _HOT_2013_ORDER if version.date == "2013-05-23" else _HOT_ORDER
    rank = {name: i for i, name in enumerate(order)}
    position = {name: i for i, name in enumerate(names)}
    return sorted(names, key=lambda n: (rank.get(n, len(order)), position[n]))


def find_version(template_version: str) -> TemplateVersion:
    """``heat_template_version.2016-10-14`` or an alias such as ``...newton``."""
    key, _, label = template_version.partition(".")
    for version in REGISTRY.all_versions():
        if version.key == key and label in (version.date, *version.aliases):
            return version
    raise TemplateVersionNotFound(f"Template with version {template_version} not found")


def function_listing(version: TemplateVersion,
                     with_condition_func: bool) -> list[TemplateFunctionReply]:
    """Heat's listing: the version's functions, then (with conditions) the condition
    functions laid over them — a name in both keeps its place and takes the condition
    function's description."""
    table = dict(version.available_functions())
    names = _listing_order(version, list(table))
    if with_condition_func:
        for name, cls in version.available_functions(conditions=True).items():
            if name not in table:
                names.append(name)
            table[name] = cls
    return [{"functions": name, "description": table[name].api_description}
            for name in names]


class CatalogOps:
    """Validation, the template and resource type catalogue, physical id lookup."""

    def __init__(self, core: ServiceCore) -> None:
        self.core = core

    # -- validation -----------------------------------------------------------------------
    async def validate_template(self, ctx: RequestContext, template: Mapping[str, Any] | str,
                                params: Mapping[str, Any] | None = None,
                                files: Mapping[str, str] | None = None,
                                environment_files: Sequence[str] | None = None,
                                show_nested: bool = False,
                                ignorable_errors: Sequence[str] | None = None,
                                deep: bool = False) -> JSON:
        """Heat's POST /validate body (see :mod:`kiln.engine.actions.validation` for what it does
        and does not check). ``deep=True`` (Kiln only) also runs everything a create
        would check, and fails with the very error the create would give."""
        if template is None or template == {} or template == "":
            raise HTTPBadRequest("No Template provided.")
        v.check_ignorable(ignorable_errors)
        conf = self.core.conf
        files = dict(files or {})
        catalog = await service_catalog(conf, ctx)
        # Off the event loop, as a create's checks are: a template's functions may take
        # a while within their bounds, and every other request is served meanwhile
        if deep:
            return await asyncio.to_thread(self._validate_deep, ctx, template, params, files,
                                           environment_files, show_nested, catalog)
        return await asyncio.to_thread(self._validate, ctx, template, params, files,
                                       environment_files, show_nested, catalog)

    def _validate(self, ctx: RequestContext, template: Mapping[str, Any] | str,
                  params: Mapping[str, Any] | None, files: dict[str, str],
                  environment_files: Sequence[str] | None, show_nested: bool,
                  catalog: frozenset[str]) -> JSON:
        conf = self.core.conf
        try:
            tmpl, env = v.parse(template, params, files, environment_files, conf)
            try:
                v.check_resource_count(tmpl, conf)
            except RequestLimitExceeded as exc:  # Heat answers this one as a bad request
                raise tv.ValidateBadRequest(exc.message) from None
            body, stack = v.api_validate(tmpl, env, files, self._support(),
                                         project_id=ctx.project_id, catalog=catalog)
            check_services(stack, catalog)
        except KilnError as exc:
            raise tv.as_validate_error(exc) from None
        # what show_nested meets in the children keeps its own error type, as in Heat
        return self._body(body, stack, show_nested)

    def _validate_deep(self, ctx: RequestContext, template: Mapping[str, Any] | str,
                       params: Mapping[str, Any] | None, files: dict[str, str],
                       environment_files: Sequence[str] | None, show_nested: bool,
                       catalog: frozenset[str]) -> JSON:
        conf = self.core.conf
        tmpl, env = v.parse(template, params, files, environment_files, conf)
        v.check_resource_count(tmpl, conf)
        stack = v.make_stack(tmpl, env, files, self._support(), project_id=ctx.project_id,
                             validate_params=True)
        stack.bound.validate()
        v.check_resources(stack, catalog)
        check_services(stack, catalog)
        v.deep_check(self.core.engine, stack)
        try:
            body = tv.validate_template(tmpl, env)
        except tv.ValidateBadRequest as exc:  # e.g. parameter groups: the create's type
            raise StackValidationFailed(exc.message, path=exc.path) from None
        return self._body(body, stack, show_nested)

    def _support(self) -> StackSupport:
        """The engine's (child stacks included) once started; validation may come first."""
        if self.core.started_engine is not None:
            return self.core.started_engine.support
        return StackSupport(conf=self.core.conf, plugins=self.core.plugins)

    @staticmethod
    def _body(body: JSON, stack: v.ValidationStack, show_nested: bool) -> JSON:
        if show_nested:
            nested = v.nested_parameters(stack)
            if nested:
                env = body.pop("Environment", None)
                body["NestedParameters"] = nested
                if env is not None:
                    body["Environment"] = env
        added = v.registry_additions(stack)
        if added and isinstance(body.get("Environment"), dict):
            registry = dict(body["Environment"].get("resource_registry") or {})
            for name, target in added.items():
                registry.setdefault(name, target)
            body["Environment"]["resource_registry"] = registry
        return body

    # -- template versions ------------------------------------------------------------
    async def list_template_versions(self, ctx: RequestContext,
                                     ) -> list[TemplateVersionReply]:
        return [{"version": name, "type": family, "aliases": aliases}
                for name, family, aliases in REGISTRY.listing()]

    async def list_template_functions(self, ctx: RequestContext, template_version: str,
                                      with_condition_func: bool = False,
                                      ) -> list[TemplateFunctionReply]:
        return function_listing(find_version(template_version), with_condition_func)

    # -- resource types -----------------------------------------------------------------
    async def list_resource_types(self, ctx: RequestContext, support_status: str | None = None,
                                  type_name: str | None = None,
                                  heat_version: str | None = None,
                                  with_description: bool = False) -> list[Any]:
        from kiln.resources.registry import global_registry

        available = service_filter(await service_catalog(self.core.conf, ctx))
        return global_registry().list_types(type_name=type_name, version=heat_version,
                                            support_status=support_status,
                                            with_description=with_description,
                                            available=available)

    async def resource_schema(self, ctx: RequestContext, type_name: str,
                              with_description: bool = False) -> JSON:
        from kiln.resources.registry import global_registry

        # with_description deliberately not passed: see the module docstring
        available = service_filter(await service_catalog(self.core.conf, ctx))
        return global_registry().schema(type_name, available=available)

    async def generate_template(self, ctx: RequestContext, type_name: str,
                                template_type: str = "cfn") -> JSON:
        from kiln.resources.registry import global_registry

        return global_registry().template(type_name, template_type)

    # -- physical resources -------------------------------------------------------------
    async def find_physical_resource(self, ctx: RequestContext,
                                     physical_resource_id: str) -> StackIdentityReply:
        """The identity of the resource with this physical id (CFN's
        DescribeStackResources by PhysicalResourceId), within the caller's projects."""
        found = [(row, rec) for row, rec in
                 await self.core.store.resources.by_physical_id(physical_resource_id)
                 if ctx.is_admin or ctx.project_id in (rec.project_id,
                                                       rec.stack_user_project_id)]
        if not found:
            raise EntityNotFound(f"The Resource ({physical_resource_id}) could not be found.")
        if len({rec.id for _, rec in found}) > 1:
            raise PhysicalResourceIDAmbiguity(
                f"Multiple resources were found with the physical ID ({physical_resource_id}).")
        row, rec = found[0]
        return identity(rec, f"/resources/{row.name}")
