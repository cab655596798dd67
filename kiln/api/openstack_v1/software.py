"""Software configs and deployments: stored records the in-server agents read."""

from __future__ import annotations

from typing import Any

from kiln.api import params as p
from kiln.api.faults import bad_request
from kiln.api.openstack_v1.common import Call, empty, forbidden_policy

_CONFIG_FIELDS = ("name", "group", "config", "inputs", "outputs", "options")
_DEPLOY_CREATE = ("config_id", "server_id", "input_values", "action", "status",
                  "status_reason", "stack_user_project_id")
_DEPLOY_UPDATE = ("config_id", "input_values", "output_values", "action", "status",
                  "status_reason")
_TYPES: dict[str, type | tuple[type, ...]] = {
    "name": str, "group": str, "config": (str, dict, list), "inputs": list, "outputs": list,
    "options": dict, "config_id": str, "server_id": str, "input_values": dict,
    "output_values": dict, "action": str, "status": str, "status_reason": str,
    "stack_user_project_id": str}


def _pick(body: dict[str, Any], fields: tuple[str, ...], *,
          drop_none: bool = False) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key in fields:
        value = body.get(key)
        if value is None:
            if not drop_none:
                out[key] = None
            continue
        if not isinstance(value, _TYPES[key]):
            raise bad_request(f'Invalid value for "{key}"')
        out[key] = value
    return out


async def list_configs(call: Call) -> Any:
    query = call.query
    if "global_tenant" in query and p.extract_bool("global_tenant", query["global_tenant"]):
        # listing every project's configs is not offered, whatever the policy says
        raise forbidden_policy("software_configs:global_index")
    params = p.allowed(query, {"limit": "single", "marker": "single"})
    if "limit" in params:
        params["limit"] = p.extract_int("limit", params["limit"])
    return {"software_configs": await call.service.list_software_configs(call.ctx, **params)}


async def show_config(call: Call) -> Any:
    sc = await call.service.show_software_config(call.ctx, config_id=call.path("config_id"))
    return {"software_config": sc}


async def create_config(call: Call) -> Any:
    data = _pick(await call.body(), _CONFIG_FIELDS)
    return {"software_config": await call.service.create_software_config(call.ctx, **data)}


async def delete_config(call: Call) -> Any:
    await call.service.delete_software_config(call.ctx, config_id=call.path("config_id"))
    return empty(204)


async def list_deployments(call: Call) -> Any:
    params = p.allowed(call.query, {"server_id": "single"})
    sds = await call.service.list_software_deployments(call.ctx, **params)
    return {"software_deployments": sds}


async def deployment_metadata(call: Call) -> Any:
    call.limit("metadata", f"server/{call.path('server_id')}")
    md = await call.service.get_software_deployment_metadata(
        call.ctx, server_id=call.path("server_id"))
    return {"metadata": md}


async def show_deployment(call: Call) -> Any:
    sd = await call.service.show_software_deployment(
        call.ctx, deployment_id=call.path("deployment_id"))
    return {"software_deployment": sd}


async def create_deployment(call: Call) -> Any:
    data = {"config_id": None, "input_values": {}, "action": "INIT", "status": "COMPLETE",
            "status_reason": "", **_pick(await call.body(), _DEPLOY_CREATE, drop_none=True)}
    if "server_id" not in data:
        raise bad_request("server_id is required")
    sd = await call.service.create_software_deployment(call.ctx, **data)
    return {"software_deployment": sd}


async def update_deployment(call: Call) -> Any:
    data = {key: None for key in _DEPLOY_UPDATE}
    data.update(_pick(await call.body(), _DEPLOY_UPDATE, drop_none=True))
    sd = await call.service.update_software_deployment(
        call.ctx, deployment_id=call.path("deployment_id"), **data)
    return {"software_deployment": sd}


async def delete_deployment(call: Call) -> Any:
    await call.service.delete_software_deployment(
        call.ctx, deployment_id=call.path("deployment_id"))
    return empty(204)
