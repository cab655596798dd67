"""EngineService: the snapshot calls (create, show, list, delete, restore); the walks are
in :mod:`kiln.engine.actions.snapshot`.
"""

from __future__ import annotations

import logging

from kiln.db.records import SnapshotRecord, StackRecord
from kiln.engine.actions.adopt import stack_data
from kiln.engine.actions.snapshot import run_restore, run_snapshot
from kiln.engine.model.context import RequestContext
from kiln.engine.model.live_stack import LiveStack
from kiln.engine.model.states import (
    COMPLETE,
    CREATE,
    IN_PROGRESS,
    RESTORE,
    SNAPSHOT,
    stack_started,
)
from kiln.engine.runtime import acting
from kiln.engine.runtime.claims import Claim
from kiln.engine.service.forwarding import ForwardingOps
from kiln.engine.service.history import HistoryOps
from kiln.engine.service.interface import JSON, Identity
from kiln.engine.service.replies import isotime
from kiln.engine.service.shapes import SnapshotReply
from kiln.engine.service.shared import ServiceCore
from kiln.engine.store.loader import environment_from_stored
from kiln.errors import ActionInProgress, EntityNotFound, NotSupported, RequestLimitExceeded
from kiln.resources.base import ResourceFailure

LOG = logging.getLogger(__name__)


class NotFound(EntityNotFound):
    """Heat's generic not-found type for an unknown snapshot id."""


class SnapshotNotFound(EntityNotFound):
    pass


def snapshot_body(rec: SnapshotRecord) -> SnapshotReply:
    return {"id": rec.id, "name": rec.name, "action": rec.action, "status": rec.status,
            "status_reason": rec.status_reason or None, "data": rec.data,
            "creation_time": isotime(rec.created_at)}


class SnapshotOps:
    """Snapshots and restores; ``forwarding`` sends a restore to an engine, ``history``
    keeps the restored template as a version."""

    def __init__(self, core: ServiceCore, forwarding: ForwardingOps,
                 history: HistoryOps) -> None:
        self.core = core
        self.forwarding = forwarding
        self.history = history

    async def _snapshot(self, ctx: RequestContext, rec: StackRecord,
                        snapshot_id: str) -> SnapshotRecord:
        snap = await self.core.store.snapshots.get(snapshot_id)
        if snap is None or (snap.project_id != ctx.project_id and not ctx.is_admin):
            raise NotFound(f"Snapshot with id {snapshot_id} not found")
        if snap.stack_id != rec.id:
            raise SnapshotNotFound(f"The Snapshot ({snapshot_id}) for Stack ({rec.name}) "
                                   "could not be found.")
        return snap

    async def stack_snapshot(self, ctx: RequestContext, stack_identity: Identity,
                             name: str | None) -> SnapshotReply:
        engine = self.core.engine
        rec = await self.core.find(ctx, stack_identity)
        if rec.status == IN_PROGRESS:
            raise ActionInProgress(f"Stack {rec.name} already has an action ({rec.action}) "
                                   "in progress.")
        limit = self.core.conf.max_snapshots_per_stack
        if not ctx.is_admin and limit >= 0:
            count = await self.core.store.snapshots.count(rec.id)
            if count >= limit:
                raise RequestLimitExceeded(
                    "Request limit exceeded: You have reached the maximum snapshots per "
                    f"stack, {limit}. Please delete some snapshots.")
        await acting.for_request(engine, rec.root_stack_id, rec.name, ctx)
        async with engine.claim(rec.id, rec.name, SNAPSHOT) as claim:
            stack = await engine.load(rec.id)
            snap = await self.core.store.snapshots.add(rec.id, ctx.project_id, name,
                                                       action=CREATE, status=IN_PROGRESS,
                                                       data=stack_data(stack, no_resources=True))
            await engine.recorder.stack(stack, SNAPSHOT, IN_PROGRESS,
                                        stack_started(SNAPSHOT))
            claim.launch(lambda: run_snapshot(engine, stack, snap.id), stack)
        return snapshot_body(snap)

    async def show_snapshot(self, ctx: RequestContext, stack_identity: Identity,
                            snapshot_id: str) -> SnapshotReply:
        rec = await self.core.find(ctx, stack_identity)
        return snapshot_body(await self._snapshot(ctx, rec, snapshot_id))

    async def list_snapshots(self, ctx: RequestContext, stack_identity: Identity,
                             ) -> list[SnapshotReply]:
        rec = await self.core.find(ctx, stack_identity)
        rows = await self.core.store.snapshots.of_stack(rec.id)
        return [snapshot_body(r) for r in rows]

    async def delete_snapshot(self, ctx: RequestContext, stack_identity: Identity,
                              snapshot_id: str) -> None:
        rec = await self.core.find(ctx, stack_identity)
        snap = await self._snapshot(ctx, rec, snapshot_id)
        running = rec.action == SNAPSHOT and rec.status == IN_PROGRESS
        if snap.action in (None, CREATE) and snap.status == IN_PROGRESS and running:
            raise NotSupported("Deleting in-progress snapshot is not supported.")
        await self._delete_artefacts(ctx, rec, snap)
        await self.core.store.snapshots.remove(snapshot_id)

    async def _delete_artefacts(self, ctx: RequestContext, rec: StackRecord,
                                snap: SnapshotRecord) -> None:
        """What each resource's ``handle_snapshot`` made for the snapshot (a volume's
        backup, a server's image) is deleted with it, as Heat's handle_delete_snapshot
        does; only for the resources the stack still has."""
        saved = dict((snap.data or {}).get("resources") or {})
        if not saved:
            return
        engine = self.core.engine
        await acting.for_request(engine, rec.root_stack_id, rec.name, ctx,
                                 tolerate_broken=True)
        stack = await engine.load(rec.id)
        for name, data in saved.items():
            slot = stack.slots.get(name)
            if slot is not None and isinstance(data, dict) and slot.plugin.supports(
                    "delete_snapshot"):
                try:
                    await slot.plugin.handle_delete_snapshot(data)
                except ResourceFailure as exc:   # the snapshot goes; the cloud says why
                    LOG.warning("stack %s: snapshot %s of %s: %s", rec.name, snap.id,
                                name, exc)

    async def stack_restore(self, ctx: RequestContext, stack_identity: Identity,
                            snapshot_id: str) -> None:
        # the snapshot's resource data reaches the restore only in memory
        if await self.forwarding.forward_to_engine("stack_restore", ctx,
                                                   stack_identity=dict(stack_identity),
                                                   snapshot_id=snapshot_id):
            return
        engine = self.core.engine
        rec = await self.core.find(ctx, stack_identity)
        snap = await self._snapshot(ctx, rec, snapshot_id)
        if snap.status != COMPLETE:
            raise NotSupported("Restoring incomplete snapshot is not supported.")
        data = dict(snap.data or {})
        await acting.for_request(engine, rec.root_stack_id, rec.name, ctx)
        async with engine.claim(rec.id, rec.name, RESTORE) as claim:
            current = await engine.load(rec.id)
            new = await self._launch_restore(claim, current, data)
        self.history.remember_version(new, RESTORE)

    async def _launch_restore(self, claim: Claim, current: LiveStack, data: JSON) -> LiveStack:
        """Store the snapshot's template, mark the stack RESTORE_IN_PROGRESS and start."""
        engine = self.core.engine
        files = dict(data.get("files") or {})
        env = environment_from_stored(dict(data.get("environment") or {}), files)
        template_id = await self.core.store.stacks.add_template(dict(data.get("template") or {}),
                                                                env.env_as_dict(), files, ())
        raw = await self.core.store.stacks.raw_template(template_id)
        info = current.info
        new_info = type(info)(**{**info.__dict__, "raw_template_id": template_id,
                                 "prev_raw_template_id": info.raw_template_id})
        new = LiveStack(new_info, template=engine.template_cache.get(raw), environment=env,
                        user_params=env.parameters, files=files, support=engine.support,
                        parent_facade=current.parent_facade)
        new.bind(validate_params=False)
        await engine.recorder.stack(new, RESTORE, IN_PROGRESS, stack_started(RESTORE),
                                    extra={"raw_template_id": template_id,
                                           "prev_raw_template_id": info.raw_template_id})
        claim.launch(lambda: run_restore(engine, current, new, data), new)
        return new
