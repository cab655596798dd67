"""Software configs and deployments (what in-server agents read and signal), and the
servers whose metadata carries their deployments.

As in :mod:`.stacks`, each method is one transaction: a read on the reader pool, or a
write queued for the batching writer when called (its future is returned).
"""

from __future__ import annotations

import asyncio
from typing import Any

from sqlalchemy.orm import Session

from kiln.db import resources as db_resources
from kiln.db import software as db_software
from kiln.db import stacks as db_stacks
from kiln.db.facade import Database
from kiln.db.records import (
    ResourceRecord,
    SoftwareConfigRecord,
    SoftwareDeploymentRecord,
    SoftwareDeploymentValues,
)


class SoftwareStore:
    """Configs (immutable documents) and deployments (a config bound to a server)."""

    def __init__(self, db: Database) -> None:
        self._db = db

    # -- configs ------------------------------------------------------------------------
    async def config(self, config_id: str) -> SoftwareConfigRecord | None:
        return await self._db.run(db_software.get_software_config, config_id)

    def add_config(self, project_id: str, *, name: str, group: str,
                   document: Any) -> asyncio.Future[SoftwareConfigRecord]:
        """A new config holding ``document`` (``{"config", "inputs", "outputs",
        "options"}``, Heat's one JSON value)."""
        return self._db.write(db_software.create_software_config, project_id, name=name,
                              group=group, config=document)

    async def configs(self, project_id: str | None, *, limit: int | None,
                      marker: str | None) -> list[SoftwareConfigRecord]:
        """Newest first; ``project_id=None``: every project's."""
        return await self._db.run(db_software.list_software_configs, project_id,
                                  limit=limit, marker=marker)

    def remove_config(self, config_id: str) -> asyncio.Future[bool]:
        """Refused (``Conflict``) while a deployment uses it."""
        return self._db.write(db_software.delete_software_config, config_id)

    # -- deployments --------------------------------------------------------------------
    async def deployment(self, deployment_id: str) -> SoftwareDeploymentRecord | None:
        return await self._db.run(db_software.get_software_deployment, deployment_id)

    def add_deployment(self, project_id: str, *, config_id: str, server_id: str,
                       action: str, status: str, status_reason: str, input_values: Any,
                       stack_user_project_id: str | None, deployment_id: str | None,
                       ) -> asyncio.Future[SoftwareDeploymentRecord]:
        return self._db.write(
            db_software.create_software_deployment, project_id, config_id=config_id,
            server_id=server_id, action=action, status=status, status_reason=status_reason,
            input_values=input_values, stack_user_project_id=stack_user_project_id,
            id=deployment_id)

    async def deployments(self, project_id: str | None, *,
                          server_id: str | None = None) -> list[SoftwareDeploymentRecord]:
        """Oldest first; a project sees its own and those of its stack-user project
        (``project_id=None``: every project's)."""
        return await self._db.run(db_software.list_software_deployments, project_id,
                                  server_id=server_id)

    def change_deployment(self, deployment_id: str, values: SoftwareDeploymentValues,
                          ) -> asyncio.Future[SoftwareDeploymentRecord | None]:
        """The deployment with ``values`` applied (None: there is no such deployment)."""
        return self._db.write(db_software.update_software_deployment, deployment_id, values)

    def remove_deployment(self, deployment_id: str) -> asyncio.Future[bool]:
        return self._db.write(db_software.delete_software_deployment, deployment_id)

    # -- the servers deployments are pushed to ------------------------------------------
    async def live_servers(self, server_id: str,
                           project_id: str | None) -> list[ResourceRecord]:
        """The resource rows (not being deleted) whose physical id is ``server_id``, in
        stacks of ``project_id`` (None: any project), in one read: a deployment naming
        another project's server id must not rewrite that server's metadata."""
        def read(session: Session) -> list[ResourceRecord]:
            return [row for row in db_resources.find_resources_by_physical_id(
                        session, server_id)
                    if row.action != "DELETE" and db_stacks.get_stack(
                        session, row.stack_id, project_id=project_id) is not None]

        return await self._db.run(read)

    def set_server_metadata(self, resource_id: int, metadata: Any) -> asyncio.Future[bool]:
        """A server resource's metadata (its ``deployments`` rewritten)."""
        return self._db.write(db_resources.update_resource, resource_id,
                              {"metadata": metadata})
