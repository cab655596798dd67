"""The v1 route table, in Heat's matching order.

Order matters where paths overlap: ``/stacks/preview`` and ``/stacks/detail`` before the
``/stacks/{stack_name}`` lookup, ARNs (which contain ``/``) before everything under a
stack, and the ``/stacks/{name}/resources|events|...`` redirects before
``/stacks/{name}/{id}``. A path that matches with the wrong method answers 405.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable

from starlette.convertors import Convertor, register_url_convertor
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from kiln.api.openstack_v1 import changesets, drift, info, resources, software, stacks
from kiln.api.openstack_v1.common import Handler, endpoint
from kiln.api.openstack_v1.policy_names import rule_for


class _Arn(Convertor[str]):
    regex = "arn:.*"

    def convert(self, value: str) -> str:
        return value

    def to_string(self, value: str) -> str:
        return value


class _Subpath(Convertor[str]):
    regex = "resources|events|template|actions|environment|files"

    def convert(self, value: str) -> str:
        return value

    def to_string(self, value: str) -> str:
        return value


register_url_convertor("heat_arn", _Arn())
register_url_convertor("heat_subpath", _Subpath())

Endpoint = Callable[[Request], Awaitable[Response]]
ALL = ["GET", "POST", "PUT", "PATCH", "DELETE"]
T = "/v1/{tenant_id}"
S = T + "/stacks/{stack_name}/{stack_id}"

_TABLE: list[tuple[str, list[str], Handler]] = [
    (T + "/validate", ["POST"], info.validate),
    (T + "/resource_types", ["GET"], info.resource_types),
    (T + "/resource_types/{type_name}", ["GET"], info.resource_schema),
    (T + "/resource_types/{type_name}/template", ["GET"], info.generate_template),
    (T + "/template_versions", ["GET"], info.template_versions),
    (T + "/template_versions/{template_version}/functions", ["GET"],
     info.template_functions),
    (T + "/build_info", ["GET"], info.build_info),
    (T + "/services", ["GET"], info.services),
    (T + "/stacks", ["GET"], stacks.index),
    (T + "/stacks", ["POST"], stacks.create),
    (T + "/stacks/preview", ["POST"], stacks.preview),
    (T + "/stacks/detail", ["GET"], stacks.detail),
    (T + "/stacks/{stack_name:heat_arn}", ALL, stacks.lookup),
    (T + "/stacks/{stack_name}", ALL, stacks.lookup),
    (T + "/stacks/{stack_name}/{subpath:heat_subpath}", ["GET", "POST"], stacks.lookup),
    (S, ["GET"], stacks.show),
    (S, ["PUT"], stacks.update),
    (S, ["PATCH"], stacks.update_patch),
    (S, ["DELETE"], stacks.delete),
    (S + "/template", ["GET"], stacks.get_template),
    (S + "/environment", ["GET"], stacks.get_environment),
    (S + "/files", ["GET"], stacks.get_files),
    (S + "/preview", ["PUT"], stacks.preview_update),
    (S + "/preview", ["PATCH"], stacks.preview_update_patch),
    (S + "/abandon", ["DELETE"], stacks.abandon),
    (S + "/export", ["GET"], stacks.export),
    (S + "/snapshots", ["POST"], stacks.snapshot),
    (S + "/snapshots", ["GET"], stacks.list_snapshots),
    (S + "/snapshots/{snapshot_id}", ["GET"], stacks.show_snapshot),
    (S + "/snapshots/{snapshot_id}", ["DELETE"], stacks.delete_snapshot),
    (S + "/snapshots/{snapshot_id}/restore", ["POST"], stacks.restore_snapshot),
    # Kiln's own: change sets (docs/changesets.md)
    (S + "/changesets", ["POST"], changesets.create),
    (S + "/changesets", ["GET"], changesets.index),
    (S + "/changesets/{changeset}", ["GET"], changesets.show),
    (S + "/changesets/{changeset}", ["DELETE"], changesets.delete),
    (S + "/changesets/{changeset}/execute", ["POST"], changesets.execute),
    (S + "/versions", ["GET"], changesets.versions),
    (S + "/versions/{version}", ["GET"], changesets.show_version),
    (S + "/versions/{version}/diff", ["GET"], changesets.diff_versions),
    (S + "/versions/{version}/changeset", ["POST"], changesets.restore_version),
    (S + "/drift", ["POST"], drift.detect),
    (S + "/drift", ["GET"], drift.show),
    (S + "/resources/{resource_name}/drift", ["POST"], drift.detect_resource),
    (S + "/outputs", ["GET"], stacks.list_outputs),
    (S + "/outputs/{output_key}", ["GET"], stacks.show_output),
    (S + "/resources", ["GET"], resources.list_resources),
    (S + "/resources/{resource_name}", ["GET"], resources.show_resource),
    (S + "/resources/{resource_name}", ["PATCH"], resources.mark_unhealthy),
    (S + "/resources/{resource_name}/metadata", ["GET"], resources.resource_metadata),
    (S + "/resources/{resource_name}/signal", ["POST"], resources.signal),
    (S + "/events", ["GET"], resources.list_events),
    (S + "/resources/{resource_name}/events", ["GET"], resources.list_events),
    (S + "/resources/{resource_name}/events/{event_id}", ["GET"], resources.show_event),
    (S + "/actions", ["POST"], resources.action),
    (T + "/software_configs", ["GET"], software.list_configs),
    (T + "/software_configs", ["POST"], software.create_config),
    (T + "/software_configs/{config_id}", ["GET"], software.show_config),
    (T + "/software_configs/{config_id}", ["DELETE"], software.delete_config),
    (T + "/software_deployments", ["GET"], software.list_deployments),
    (T + "/software_deployments", ["POST"], software.create_deployment),
    (T + "/software_deployments/metadata/{server_id}", ["GET"],
     software.deployment_metadata),
    (T + "/software_deployments/{deployment_id}", ["GET"], software.show_deployment),
    (T + "/software_deployments/{deployment_id}", ["PUT"], software.update_deployment),
    (T + "/software_deployments/{deployment_id}", ["DELETE"], software.delete_deployment),
]


def _merged_table() -> list[tuple[str, list[str], list[Handler]]]:
    """Group by path so one Route per path dispatches on method (and 405 lists them)."""
    merged: dict[str, tuple[list[str], list[Handler]]] = {}
    for path, methods, handler in _TABLE:
        entry = merged.setdefault(path, ([], []))
        for method in methods:
            entry[0].append(method)
            entry[1].append(handler)
    return [(path, ms, hs) for path, (ms, hs) in merged.items()]


def v1_routes() -> list[BaseRoute]:
    routes: list[BaseRoute] = []
    for path, methods, handlers in _merged_table():
        by_method = {m: endpoint(h, rule_for(h))
                     for m, h in zip(methods, handlers, strict=True)}
        routes.append(Route(path, _dispatch(by_method), methods=[*by_method, "OPTIONS"],
                            name=re.sub(r"\W+", "_", path).strip("_")))
    return routes


def _dispatch(by_method: dict[str, Endpoint]) -> Endpoint:
    """Call the method's handler; OPTIONS answers 204 with the allowed methods, as Heat."""
    allow = ",".join(by_method)

    async def run(request: Request) -> Response:
        if request.method == "OPTIONS":
            return Response(status_code=204, headers={"Allow": allow})
        method = "GET" if request.method == "HEAD" else request.method
        return await by_method[method](request)

    return run
