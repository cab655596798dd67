"""Adapters from the EngineService software-config/deployment operations to the stores
plugins use (:class:`~kiln.resources.base.SoftwareConfigStore`,
:class:`~kiln.resources.base.SoftwareDeploymentStore`).

Plugins must not import the engine, so the service is taken by shape: anything with
EngineService's ``create_software_config(ctx, group, name, config, inputs, outputs,
options)`` ... methods. The engine builds one pair per stack action with the request
context of the stack's owner::

    runtime.software_configs = ServiceConfigStore(service, ctx)
    runtime.software_deployments = ServiceDeploymentStore(service, ctx)
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any


class ServiceConfigStore:
    def __init__(self, service: Any, ctx: Any) -> None:
        self._service = service
        self._ctx = ctx

    async def create(self, *, name: str, group: str, config: Any,
                     inputs: Sequence[Mapping[str, Any]],
                     outputs: Sequence[Mapping[str, Any]],
                     options: Mapping[str, Any]) -> dict[str, Any]:
        return dict(await self._service.create_software_config(
            self._ctx, group, name, config, list(inputs), list(outputs), dict(options)))

    async def get(self, config_id: str) -> dict[str, Any]:
        return dict(await self._service.show_software_config(self._ctx, config_id))

    async def delete(self, config_id: str) -> None:
        await self._service.delete_software_config(self._ctx, config_id)


class ServiceDeploymentStore:
    def __init__(self, service: Any, ctx: Any, *,
                 stack_user_project_id: str | None = None) -> None:
        self._service = service
        self._ctx = ctx
        self._stack_user_project_id = stack_user_project_id

    async def create(self, *, deployment_id: str, server_id: str, config_id: str,
                     input_values: Mapping[str, Any] | None, action: str, status: str,
                     status_reason: str) -> dict[str, Any]:
        return dict(await self._service.create_software_deployment(
            self._ctx, server_id, config_id, dict(input_values or {}), action, status,
            status_reason, stack_user_project_id=self._stack_user_project_id,
            deployment_id=deployment_id))

    async def get(self, deployment_id: str) -> dict[str, Any]:
        return dict(await self._service.show_software_deployment(self._ctx, deployment_id))

    async def update(self, deployment_id: str, *, config_id: str | None = None,
                     input_values: Mapping[str, Any] | None = None,
                     output_values: Mapping[str, Any] | None = None,
                     action: str | None = None, status: str | None = None,
                     status_reason: str | None = None) -> dict[str, Any]:
        return dict(await self._service.update_software_deployment(
            self._ctx, deployment_id, config_id,
            dict(input_values) if input_values is not None else None,
            dict(output_values) if output_values is not None else None,
            action, status, status_reason))

    async def delete(self, deployment_id: str) -> None:
        await self._service.delete_software_deployment(self._ctx, deployment_id)

    async def signal(self, deployment_id: str, details: Any) -> str | None:
        reason = await self._service.signal_software_deployment(self._ctx, deployment_id,
                                                                details)
        return None if reason is None else str(reason)
