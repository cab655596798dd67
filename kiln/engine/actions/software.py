"""Software configs and deployments (what in-server agents read and signal), on the store.

A part below the service layer: the plugins' config and deployment stores
(:mod:`kiln.resources.stores`, handed out by :class:`~kiln.engine.actions.nested.NestedOps`)
call it directly, and EngineService's software methods (the API's) are this same part.

Configs are immutable documents; the database keeps ``config`` as Heat does, one JSON
value holding ``{"config", "inputs", "outputs", "options"}``. Deployments bind a config to
a server; an agent lists its server's configs through :meth:`SoftwareConfigs.metadata`
(the service confines the caller first) and reports back through
:meth:`SoftwareConfigs.signal_software_deployment`. Shapes and messages follow Heat 27's
REST answers (observed on the live peer).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from kiln.db.records import (
    SoftwareConfigRecord,
    SoftwareDeploymentRecord,
    SoftwareDeploymentValues,
)
from kiln.engine.model.context import RequestContext
from kiln.engine.model.shapes import (
    SoftwareConfigReply,
    SoftwareConfigSummaryReply,
    SoftwareDeploymentReply,
    isotime,
)
from kiln.engine.store import Store
from kiln.errors import EntityNotFound, HTTPBadRequest, KilnError, StackValidationFailed
from kiln.resources.base import Properties
from kiln.resources.heat.software_config import INPUT_SCHEMA, OUTPUT_SCHEMA

#: the outputs every deployment signal may carry, besides the config's own
STATUS_CODE = "deploy_status_code"
STANDARD_OUTPUTS = ("deploy_stdout", "deploy_stderr", STATUS_CODE)


class NotFound(EntityNotFound):
    """Heat answers a missing config/deployment with the generic ``NotFound`` type."""


class InvalidRestrictedAction(KilnError):
    """Deleting a config still deployed: Heat 27 answers 500 with this type."""


def config_body(rec: SoftwareConfigRecord) -> SoftwareConfigReply:
    stored = rec.config if isinstance(rec.config, Mapping) else {}
    return {"id": rec.id, "name": rec.name, "group": rec.group,
            "creation_time": isotime(rec.created_at), "config": stored.get("config"),
            "inputs": list(stored.get("inputs") or []),
            "outputs": list(stored.get("outputs") or []), "options": stored.get("options")}


def config_summary(rec: SoftwareConfigRecord, *,
                   include_project: bool = False) -> SoftwareConfigSummaryReply:
    out: SoftwareConfigSummaryReply = {"id": rec.id, "name": rec.name, "group": rec.group,
                                       "creation_time": isotime(rec.created_at)}
    if include_project:
        out["project"] = rec.project_id
    return out


def deployment_body(rec: SoftwareDeploymentRecord) -> SoftwareDeploymentReply:
    out: SoftwareDeploymentReply = {
        "id": rec.id, "server_id": rec.server_id, "input_values": rec.input_values,
        "output_values": rec.output_values, "action": rec.action, "status": rec.status,
        "status_reason": rec.status_reason, "config_id": rec.config_id,
        "creation_time": isotime(rec.created_at)}
    if rec.updated_at is not None:
        out["updated_time"] = isotime(rec.updated_at)
    return out


def _io_schema(items: Any, schema: Mapping[str, Any], *, is_input: bool) -> list[dict[str, Any]]:
    """Inputs/outputs with Heat's defaults applied (``type: String``, ...), unset keys
    dropped; ``replace_on_change`` is only kept when true, as Heat stores it."""
    if not isinstance(items, Sequence) or isinstance(items, str | bytes):
        raise HTTPBadRequest("Software Config I/O Schema must be in a list")
    if not all(isinstance(i, Mapping) for i in items):
        raise HTTPBadRequest("Software Config I/O Schema must be a dict")
    out: list[dict[str, Any]] = []
    for item in items:
        extra = {k: v for k, v in item.items() if k not in schema}
        try:
            props = Properties(schema, {k: v for k, v in item.items() if k in schema})
            values = {k: props[k] for k in schema}
        except StackValidationFailed as exc:
            raise HTTPBadRequest(str(exc)) from None
        entry = {k: v for k, v in values.items() if v is not None}
        if is_input and not entry.get("replace_on_change"):
            entry.pop("replace_on_change", None)
        if is_input and "value" in extra:
            entry["value"] = extra["value"]
        out.append(entry)
    return out


class SoftwareConfigs:
    """Configs and deployments of every project, as the caller (``ctx``) may see them;
    method names and arguments are EngineService's, so a plugin's store and the API
    make the same calls."""

    def __init__(self, store: Store) -> None:
        self.store = store

    # -- configs --------------------------------------------------------------------------
    async def _config(self, ctx: RequestContext, config_id: str) -> SoftwareConfigRecord:
        rec = await self.store.software.config(config_id)
        if rec is None or (not ctx.is_admin and rec.project_id != ctx.project_id):
            raise NotFound(f"Software config with id {config_id} not found")
        return rec

    async def create_software_config(self, ctx: RequestContext, group: str, name: str,
                                     config: Any, inputs: Sequence[Any],
                                     outputs: Sequence[Any], options: Mapping[str, Any],
                                     ) -> SoftwareConfigReply:
        document = {"inputs": _io_schema(inputs or [], INPUT_SCHEMA, is_input=True),
                    "outputs": _io_schema(outputs or [], OUTPUT_SCHEMA, is_input=False),
                    "options": options, "config": config}
        rec = await self.store.software.add_config(ctx.project_id, name=name, group=group,
                                                   document=document)
        return config_body(rec)

    async def show_software_config(self, ctx: RequestContext,
                                   config_id: str) -> SoftwareConfigReply:
        return config_body(await self._config(ctx, config_id))

    async def list_software_configs(self, ctx: RequestContext, limit: int | None = None,
                                    marker: str | None = None,
                                    ) -> list[SoftwareConfigSummaryReply]:
        project = None if ctx.is_admin else ctx.project_id
        rows = await self.store.software.configs(project, limit=limit, marker=marker)
        return [config_summary(r, include_project=ctx.is_admin) for r in rows]

    async def delete_software_config(self, ctx: RequestContext, config_id: str) -> None:
        await self._config(ctx, config_id)
        try:
            await self.store.software.remove_config(config_id)
        except KilnError as exc:
            if isinstance(exc, EntityNotFound):
                raise
            raise InvalidRestrictedAction(str(exc)) from None

    # -- deployments ----------------------------------------------------------------------
    async def _deployment(self, ctx: RequestContext,
                          deployment_id: str) -> SoftwareDeploymentRecord:
        rec = await self.store.software.deployment(deployment_id)
        if rec is None or (not ctx.is_admin and ctx.project_id not in (
                rec.project_id, rec.stack_user_project_id)):
            raise NotFound(f"Deployment with id {deployment_id} not found")
        return rec

    async def create_software_deployment(self, ctx: RequestContext, server_id: str,
                                         config_id: str | None, input_values: Any,
                                         action: str, status: str, status_reason: str,
                                         stack_user_project_id: str | None = None,
                                         deployment_id: str | None = None,
                                         ) -> SoftwareDeploymentReply:
        if stack_user_project_id is not None and len(stack_user_project_id) > 64:
            raise HTTPBadRequest('"stack_user_project_id" should be no more than 64 '
                                 "characters")
        if config_id is None:
            raise HTTPBadRequest("config_id must be specified")
        await self._config(ctx, config_id)
        rec = await self.store.software.add_deployment(
            ctx.project_id, config_id=config_id, server_id=server_id, action=action,
            status=status, status_reason=str(status_reason or ""), input_values=input_values,
            stack_user_project_id=stack_user_project_id, deployment_id=deployment_id)
        await self._push_metadata(ctx, server_id)
        return deployment_body(rec)

    async def show_software_deployment(self, ctx: RequestContext,
                                       deployment_id: str) -> SoftwareDeploymentReply:
        return deployment_body(await self._deployment(ctx, deployment_id))

    async def list_software_deployments(self, ctx: RequestContext,
                                        server_id: str | None = None,
                                        ) -> list[SoftwareDeploymentReply]:
        project = None if ctx.is_admin else ctx.project_id
        rows = await self.store.software.deployments(project, server_id=server_id)
        return [deployment_body(r) for r in rows]

    async def update_software_deployment(self, ctx: RequestContext, deployment_id: str,
                                         config_id: str | None, input_values: Any,
                                         output_values: Any, action: str | None,
                                         status: str | None, status_reason: str | None,
                                         updated_at: str | None = None,
                                         ) -> SoftwareDeploymentReply:
        """Only the fields given (truthy, as Heat checks them) change."""
        rec = await self._deployment(ctx, deployment_id)
        values: SoftwareDeploymentValues = {}
        if config_id:
            await self._config(ctx, config_id)
            values["config_id"] = config_id
        if input_values:
            values["input_values"] = input_values
        if output_values:
            values["output_values"] = output_values
        if action:
            values["action"] = action
        if status:
            values["status"] = status
        if status_reason:
            values["status_reason"] = str(status_reason)
        updated = await self.store.software.change_deployment(deployment_id, values)
        if updated is None:
            raise NotFound(f"Deployment with id {deployment_id} not found")
        if config_id:
            await self._push_metadata(ctx, rec.server_id)
        return deployment_body(updated)

    async def delete_software_deployment(self, ctx: RequestContext, deployment_id: str) -> None:
        rec = await self._deployment(ctx, deployment_id)
        await self.store.software.remove_deployment(deployment_id)
        await self._push_metadata(ctx, rec.server_id)

    async def metadata(self, ctx: RequestContext, server_id: str) -> list[SoftwareConfigReply]:
        """The configs deployed to a server, ordered by config name (as agents expect)."""
        project = None if ctx.is_admin else ctx.project_id
        deployments = await self.store.software.deployments(project, server_id=server_id)
        configs: list[SoftwareConfigRecord] = []
        for dep in deployments:
            cfg = await self.store.software.config(dep.config_id)
            if cfg is not None:
                configs.append(cfg)
        configs.sort(key=lambda c: c.name or "")
        return [config_body(c) for c in configs]

    async def _push_metadata(self, ctx: RequestContext, server_id: str) -> None:
        """Heat copies the server's deployments into the server resource's metadata
        (``deployments``), which is what polling agents read."""
        project = None if ctx.is_admin else ctx.project_id
        # only the caller's own servers (the store's read confines them to the project)
        live = await self.store.software.live_servers(server_id, project)
        if not live:
            return
        deployments = await self.metadata(ctx, server_id)
        for row in live:
            metadata = dict(row.metadata or {})
            metadata["deployments"] = deployments
            await self.store.software.set_server_metadata(row.id, metadata)

    async def signal_software_deployment(self, ctx: RequestContext, deployment_id: str,
                                         details: Any, updated_at: str | None = None) -> Any:
        """An agent's result: outputs stored, COMPLETE or FAILED (non-zero status code or
        a value in an ``error_output``). Returns the event text Heat would log, or None
        when the deployment is not waiting for a signal."""
        if not deployment_id:
            raise HTTPBadRequest("deployment_id must be specified")
        rec = await self._deployment(ctx, deployment_id)
        if rec.status != "IN_PROGRESS":
            return None
        if not details:
            details = {}    # as Heat: no details (null, {}, even [] or 0) is a success
        elif not isinstance(details, Mapping):
            # Heat fails on it too (in its background signal thread): it is no result
            raise HTTPBadRequest("A deployment's signal is a map of its outputs "
                                 "(deploy_stdout, deploy_stderr, deploy_status_code, ...), "
                                 f"not a {type(details).__name__}")
        cfg = await self.store.software.config(rec.config_id)
        outputs = (cfg.config or {}).get("outputs") if cfg is not None else None
        values = dict(rec.output_values or {})
        failed_reasons: dict[str, str] = {}
        code = details.get(STATUS_CODE)
        if code and str(code) != "0":
            failed_reasons[STATUS_CODE] = f"Deployment exited with non-zero status code: {code}"
            event_reason = f"deployment {deployment_id} failed ({code})"
        else:
            event_reason = f"deployment {deployment_id} succeeded"
        for output in outputs or []:
            key = output["name"]
            if key in details:
                values[key] = details[key]
                if output.get("error_output", False):
                    failed_reasons[key] = str(details[key])
                    event_reason = f"deployment {deployment_id} failed"
        for key in STANDARD_OUTPUTS:
            values[key] = details.get(key)
        if failed_reasons:
            status = "FAILED"
            reason = ", ".join(f"{k} : {v}" for k, v in failed_reasons.items())
        else:
            status, reason = "COMPLETE", "Outputs received"
        update: SoftwareDeploymentValues = {"output_values": values, "status": status,
                                            "status_reason": reason}
        await self.store.software.change_deployment(deployment_id, update)
        return event_reason
