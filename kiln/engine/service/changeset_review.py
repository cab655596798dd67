"""EngineService: stacks in review (CloudFormation's ``REVIEW_IN_PROGRESS``), which exist
only as CREATE (or IMPORT into a new stack) change sets not executed yet. DescribeStacks,
ListStacks and DeleteStack show and remove them as stacks."""

from __future__ import annotations

from typing import Any

from kiln.db.records import ChangeSetRecord
from kiln.engine.model.context import RequestContext
from kiln.engine.service.changesets import ChangeSetOps, kind
from kiln.errors import EntityNotFound


def _reviewing(cs: ChangeSetRecord) -> bool:
    """Whether the change set makes a stack in review (a nested one makes none alone)."""
    return kind(cs) == "CREATE" and cs.execution is None and not (cs.request or {}).get("root")


class ReviewOps(ChangeSetOps):
    async def review_stack(self, ctx: RequestContext, stack_name: str) -> dict[str, Any] | None:
        """The stack a CREATE change set waits to make (CloudFormation's stack in
        ``REVIEW_IN_PROGRESS``): its newest such change set, or None."""
        try:
            await self._find(ctx, stack_name)
        except EntityNotFound:
            pending = [
                cs
                for cs in await self.store.change_sets.of_stack(ctx.project_id, stack_name)
                if _reviewing(cs)
            ]
            return await self._shown(ctx, pending[-1], with_changes=False) if pending else None
        return None

    async def review_stacks(self, ctx: RequestContext) -> list[dict[str, Any]]:
        """Every stack of the project in review (ListStacks shows them): per stack
        name with no stack yet, its newest CREATE change set."""
        newest: dict[str, ChangeSetRecord] = {}
        for cs in await self.store.change_sets.pending_creates(ctx.project_id):
            if not _reviewing(cs):
                continue
            newest[cs.stack_name] = cs
        out = []
        for name, cs in newest.items():
            try:
                await self._find(ctx, name)
            except EntityNotFound:
                out.append(await self._shown(ctx, cs, with_changes=False))
        return out

    async def delete_review_stack(self, ctx: RequestContext, stack_name: str) -> bool:
        """Delete a stack that exists only as CREATE change sets; whether there was one."""
        if await self.review_stack(ctx, stack_name) is None:
            return False
        for cs in await self.store.change_sets.of_stack(ctx.project_id, stack_name):
            if _reviewing(cs):
                for child in (cs.request or {}).get("children") or ():
                    await self.store.change_sets.remove(child)
                await self.store.change_sets.remove(cs.id)
        return True
