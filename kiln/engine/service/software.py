"""EngineService's software configs and deployments, for the APIs: the part below,
``self.core.software`` (:class:`kiln.engine.actions.software.SoftwareConfigs`, on the store),
does the work, and plugins' stores call that part directly. What only the API needs stays
here: an agent reading its server's deployments is confined to its stack first.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from kiln.engine.model.context import RequestContext
from kiln.engine.model.shapes import (
    SoftwareConfigReply,
    SoftwareConfigSummaryReply,
    SoftwareDeploymentReply,
)
from kiln.engine.service import stack_user_reach
from kiln.engine.service.shared import ServiceCore
from kiln.errors import HTTPBadRequest


class SoftwareOps:
    """Software configs and deployments: the API's half of
    :mod:`kiln.engine.actions.software`."""

    def __init__(self, core: ServiceCore) -> None:
        self.core = core

    # -- configs --------------------------------------------------------------------------
    async def create_software_config(self, ctx: RequestContext, group: str, name: str,
                                     config: Any, inputs: Sequence[Any],
                                     outputs: Sequence[Any], options: Mapping[str, Any],
                                     ) -> SoftwareConfigReply:
        return await self.core.software.create_software_config(ctx, group, name, config, inputs,
                                                               outputs, options)

    async def show_software_config(self, ctx: RequestContext,
                                   config_id: str) -> SoftwareConfigReply:
        return await self.core.software.show_software_config(ctx, config_id)

    async def list_software_configs(self, ctx: RequestContext, limit: int | None = None,
                                    marker: str | None = None,
                                    ) -> list[SoftwareConfigSummaryReply]:
        return await self.core.software.list_software_configs(ctx, limit, marker)

    async def delete_software_config(self, ctx: RequestContext, config_id: str) -> None:
        await self.core.software.delete_software_config(ctx, config_id)

    # -- deployments ----------------------------------------------------------------------
    async def create_software_deployment(self, ctx: RequestContext, server_id: str,
                                         config_id: str | None, input_values: Any,
                                         action: str, status: str, status_reason: str,
                                         stack_user_project_id: str | None = None,
                                         deployment_id: str | None = None,
                                         ) -> SoftwareDeploymentReply:
        return await self.core.software.create_software_deployment(
            ctx, server_id, config_id, input_values, action, status, status_reason,
            stack_user_project_id=stack_user_project_id, deployment_id=deployment_id)

    async def show_software_deployment(self, ctx: RequestContext,
                                       deployment_id: str) -> SoftwareDeploymentReply:
        return await self.core.software.show_software_deployment(ctx, deployment_id)

    async def list_software_deployments(self, ctx: RequestContext,
                                        server_id: str | None = None,
                                        ) -> list[SoftwareDeploymentReply]:
        return await self.core.software.list_software_deployments(ctx, server_id)

    async def update_software_deployment(self, ctx: RequestContext, deployment_id: str,
                                         config_id: str | None, input_values: Any,
                                         output_values: Any, action: str | None,
                                         status: str | None, status_reason: str | None,
                                         updated_at: str | None = None,
                                         ) -> SoftwareDeploymentReply:
        return await self.core.software.update_software_deployment(
            ctx, deployment_id, config_id, input_values, output_values, action, status,
            status_reason, updated_at)

    async def delete_software_deployment(self, ctx: RequestContext, deployment_id: str) -> None:
        await self.core.software.delete_software_deployment(ctx, deployment_id)

    async def get_software_deployment_metadata(self, ctx: RequestContext,
                                               server_id: str) -> list[SoftwareConfigReply]:
        """The configs deployed to a server, ordered by config name (as agents expect)."""
        if not server_id:
            raise HTTPBadRequest("server_id must be specified")
        await stack_user_reach.confine_server(self.core, ctx, server_id)
        return await self.core.software.metadata(ctx, server_id)

    async def signal_software_deployment(self, ctx: RequestContext, deployment_id: str,
                                         details: Any, updated_at: str | None = None) -> Any:
        return await self.core.software.signal_software_deployment(ctx, deployment_id, details,
                                                                   updated_at)
