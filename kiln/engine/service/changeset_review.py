"""EngineService: stacks in review (CloudFormation's ``REVIEW_IN_PROGRESS``), which exist
only as CREATE (or IMPORT into a new stack) change sets not executed yet. DescribeStacks,
ListStacks and DeleteStack show and remove them as stacks. And "update to version N",
which is a change set made from a kept version, to review before it runs."""

from __future__ import annotations

from typing import Any

from kiln.db.records import ChangeSetRecord
from kiln.engine.model.context import RequestContext
from kiln.engine.service.changesets import ChangeSetOps, kind
from kiln.engine.service.history import HistoryOps
from kiln.engine.service.interface import Identity
from kiln.engine.service.shared import ServiceCore
from kiln.errors import EntityNotFound


def _reviewing(cs: ChangeSetRecord) -> bool:
    """Whether the change set makes a stack in review (a nested one makes none alone)."""
    return kind(cs) == "CREATE" and cs.execution is None and not (cs.request or {}).get("root")


class ReviewOps:
    """Stacks in review, shown as ``changesets`` shows their change sets, and a kept
    version of ``history`` offered as a change set to review."""

    def __init__(self, core: ServiceCore, changesets: ChangeSetOps,
                 history: HistoryOps) -> None:
        self.core = core
        self.changesets = changesets
        self.history = history

    async def review_stack(self, ctx: RequestContext, stack_name: str) -> dict[str, Any] | None:
        """The stack a CREATE change set waits to make (CloudFormation's stack in
        ``REVIEW_IN_PROGRESS``): its newest such change set, or None."""
        try:
            await self.core.find(ctx, stack_name)
        except EntityNotFound:
            pending = [
                cs
                for cs in await self.core.store.change_sets.of_stack(ctx.project_id, stack_name)
                if _reviewing(cs)
            ]
            if not pending:
                return None
            return await self.changesets.shown(ctx, pending[-1], with_changes=False)
        return None

    async def review_stacks(self, ctx: RequestContext) -> list[dict[str, Any]]:
        """Every stack of the project in review (ListStacks shows them): per stack
        name with no stack yet, its newest CREATE change set."""
        newest: dict[str, ChangeSetRecord] = {}
        for cs in await self.core.store.change_sets.pending_creates(ctx.project_id):
            if not _reviewing(cs):
                continue
            newest[cs.stack_name] = cs
        out = []
        for name, cs in newest.items():
            try:
                await self.core.find(ctx, name)
            except EntityNotFound:
                out.append(await self.changesets.shown(ctx, cs, with_changes=False))
        return out

    async def delete_review_stack(self, ctx: RequestContext, stack_name: str) -> bool:
        """Delete a stack that exists only as CREATE change sets; whether there was one."""
        if await self.review_stack(ctx, stack_name) is None:
            return False
        for cs in await self.core.store.change_sets.of_stack(ctx.project_id, stack_name):
            if _reviewing(cs):
                for child in (cs.request or {}).get("children") or ():
                    await self.core.store.change_sets.remove(child)
                await self.core.store.change_sets.remove(cs.id)
        return True

    async def restore_version_change_set(
        self, ctx: RequestContext, stack_identity: Identity, version: int, name: str
    ) -> dict[str, Any]:
        """ "Update to version N", as a change set to review and then execute."""
        found = await self.history.version(ctx, stack_identity, version)
        rec = await self.core.find(ctx, stack_identity)
        env = {
            k: v for k, v in dict(found.environment or {}).items() if k != "encrypted_param_names"
        }
        return await self.changesets.create_change_set(
            ctx,
            rec.id,
            name,
            "UPDATE",
            found.template,
            env,
            dict(found.files or {}),
            {},
            description=f"back to version {version}",
        )
