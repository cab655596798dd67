"""EngineService: drift detection (start one, read its status and results) and the
drift status shown beside stacks and resources (kiln.engine.actions.drift does the
walk).

A whole-stack detection is asynchronous (DetectStackDrift: an id now, the result later)
and durable work: stored, then run by an engine (kiln.engine.service.drift_work), so it
survives the accepting process's exit; a one-resource detection
(DetectStackResourceDrift) is answered when done, run by an engine too: an API process
of a kiln.rpc deployment reads no cloud, it forwards the call to one engine and answers
with its result (``kiln serve`` runs it in-process). Neither takes the stack's lock: they
change nothing. Both are refused while an action runs on the stack (its resources are
changing under the reads), with Heat's "already has an action in progress".
"""

from __future__ import annotations

import asyncio
import datetime as dt
import uuid
from typing import Any

from kiln.engine.actions.drift import detect
from kiln.engine.model import drift as model
from kiln.engine.model.context import RequestContext
from kiln.engine.model.states import IN_PROGRESS
from kiln.engine.service.forwarding import ForwardingOps
from kiln.engine.service.interface import Identity
from kiln.engine.service.recovery import RecoveryOps
from kiln.engine.service.replies import isotime
from kiln.engine.service.shared import ResourceNotFound, ServiceCore
from kiln.engine.store import utcnow
from kiln.errors import ActionInProgress, EntityNotFound

#: a detection still in progress after this long was lost with its process: FAILED
STALE_AFTER = dt.timedelta(hours=1)
STALE_REASON = "The detection did not finish (the process running it stopped)."

JSON = dict[str, Any]


class DriftNotFound(EntityNotFound):
    """No such drift detection (in the caller's project)."""


def run_reply(run: model.DriftRun, stack_name: str, tenant: str) -> JSON:
    """A detection as the native API shows it (the CFN API renders the same fields)."""
    status = run.status
    reason = run.status_reason
    if status == model.DETECTION_IN_PROGRESS and run.created_at is not None \
            and utcnow() - run.created_at > STALE_AFTER:
        status, reason = model.DETECTION_FAILED, STALE_REASON
    return {"detection_id": run.id, "stack_id": run.stack_id, "stack_name": stack_name,
            "tenant": tenant, "scope": run.scope, "detection_status": status,
            "detection_status_reason": reason,
            "stack_drift_status": run.drift_status if status == model.DETECTION_COMPLETE
            else None,
            "drifted_resource_count": run.drifted_count,
            "timestamp": isotime(run.timestamp), "resources": run.resources}


class DriftOps:
    """Drift detection: stored here, run by this engine's ``engines.recovery`` (or woken
    on another engine), kept in the store; ``forwarding`` sends a one-resource detection
    from an API process to an engine."""

    def __init__(self, core: ServiceCore, engines: RecoveryOps,
                 forwarding: ForwardingOps) -> None:
        self.core = core
        self.engines = engines
        self.forwarding = forwarding
        #: detections running in this process (kept referenced until they end)
        self._drift_tasks: set[asyncio.Task[Any]] = set()

    async def _checkable(self, ctx: RequestContext, stack_identity: Identity) -> Any:
        rec = await self.core.find(ctx, stack_identity)
        if rec.status == IN_PROGRESS:
            raise ActionInProgress(f"Stack {rec.name} already has an action ({rec.action}) "
                                   "in progress.")
        return rec

    async def detect_stack_drift(self, ctx: RequestContext, stack_identity: Identity) -> JSON:
        """Start a detection of the whole stack (nested stacks included); returns the
        detection, ``DETECTION_IN_PROGRESS``."""
        rec = await self._checkable(ctx, stack_identity)
        keep = int(self.core.conf.kiln_engine.drift_results_per_stack)
        run = await self.core.store.drift.add(str(uuid.uuid4()), rec.id, scope="stack",
                                              status=model.DETECTION_IN_PROGRESS, keep=keep)
        # durable work (kiln.engine.service.drift_work): stored before the answer, run
        # by an engine; an API process of a kiln.rpc deployment wakes one
        dispatch = self.core.dispatch
        recovery = self.engines.recovery
        if dispatch is not None and not dispatch.runs_actions:
            await dispatch.wake(rec.id)
        elif recovery is not None:
            await recovery.drift.run_here(rec.id, run.id)
        else:  # a service not started (unit tests): run it in a task of its own
            task = asyncio.get_running_loop().create_task(
                detect(self.core.engine, rec.id, run.id, keep=keep), name=f"drift-{run.id}")
            self._drift_tasks.add(task)
            task.add_done_callback(self._drift_tasks.discard)
        return run_reply(run, rec.name, rec.project_id)

    async def detect_resource_drift(self, ctx: RequestContext, stack_identity: Identity,
                                    resource_name: str) -> JSON:
        """Detect one resource's drift now; returns its entry (a nested stack's
        resource: its own entries follow in ``nested``)."""
        # the cloud is read by an engine, never by an API process of a kiln.rpc deployment
        if fwd := await self.forwarding.forward_to_engine(
                "detect_resource_drift", ctx, stack_identity=dict(stack_identity),
                resource_name=resource_name):
            return dict(fwd.reply)
        rec = await self._checkable(ctx, stack_identity)
        stack = await self.core.engine.load(rec.id)
        if resource_name not in stack.slots:
            raise ResourceNotFound.in_stack(resource_name, rec.name)
        del stack
        keep = int(self.core.conf.kiln_engine.drift_results_per_stack)
        run = await self.core.store.drift.add(str(uuid.uuid4()), rec.id, scope="resource",
                                              status=model.DETECTION_IN_PROGRESS, keep=keep)
        result = await detect(self.core.engine, rec.id, run.id, only=resource_name, keep=keep)
        if result is None:
            done = await self.core.store.drift.get(run.id)
            reason = done.status_reason if done is not None else ""
            raise EntityNotFound(f"Drift detection of {resource_name} failed: {reason}")
        entries = result.all_entries()
        own = [e for e in entries if e["stack_id"] == rec.id]
        return {**own[0], "timestamp": isotime(utcnow()),
                "nested": [e for e in entries if e["stack_id"] != rec.id]}

    async def drift_detection(self, ctx: RequestContext, detection_id: str) -> JSON:
        """One detection (its status, and its results once complete)."""
        run = await self.core.store.drift.get(detection_id)
        if run is None:
            raise DriftNotFound(f"The drift detection ({detection_id}) could not be found.")
        try:
            rec = await self.core.find(ctx, run.stack_id)
        except EntityNotFound:
            raise DriftNotFound(
                f"The drift detection ({detection_id}) could not be found.") from None
        return run_reply(run, rec.name, rec.project_id)

    async def latest_drift(self, ctx: RequestContext, stack_identity: Identity) -> JSON:
        """The stack's newest detection (None fields when it has none), with, for each
        resource, its newest result (a one-resource detection since counts)."""
        rec = await self.core.find(ctx, stack_identity)
        runs = await self.core.store.drift.of_stack(rec.id)
        whole = [r for r in runs if r.scope == "stack"]
        if not whole:
            return {"detection_id": None, "stack_id": rec.id, "stack_name": rec.name,
                    "tenant": rec.project_id, "scope": "stack",
                    "detection_status": None, "detection_status_reason": "",
                    "stack_drift_status": model.NOT_CHECKED, "drifted_resource_count": 0,
                    "timestamp": None, "resources": self._newest_entries(runs)}
        reply = run_reply(whole[0], rec.name, rec.project_id)
        reply["resources"] = self._newest_entries(runs)
        return reply

    @staticmethod
    def _newest_entries(runs: list[model.DriftRun]) -> list[JSON]:
        """Per resource (stack id, name), the entry of the newest complete detection
        that checked it, with that detection's time."""
        seen: dict[tuple[str, str], JSON] = {}
        for run in runs:  # newest first
            if run.status != model.DETECTION_COMPLETE:
                continue
            for entry in run.resources:
                key = (str(entry.get("stack_id")), str(entry.get("resource_name")))
                if key not in seen:
                    seen[key] = {**entry, "timestamp": isotime(run.timestamp)}
        return list(seen.values())

    async def stacks_drift_status(self, stack_ids: list[str]) -> dict[str, tuple[str, str | None]]:
        """(StackDriftStatus, time) of each stack's newest complete detection; stacks
        never checked are left out (NOT_CHECKED)."""
        found = await self.core.store.drift.stack_status(stack_ids)
        return {k: (status, isotime(when)) for k, (status, when) in found.items()}

    async def resources_drift_status(self, ctx: RequestContext, stack_identity: Identity,
                                     ) -> dict[str, tuple[str, str | None]]:
        """Per resource name of the stack, (StackResourceDriftStatus, time) of its newest
        check; resources never checked are left out."""
        rec = await self.core.find(ctx, stack_identity)
        entries = self._newest_entries(await self.core.store.drift.of_stack(rec.id,
                                                                             complete_only=True))
        return {str(e["resource_name"]): (str(e["status"]), e.get("timestamp"))
                for e in entries if e.get("stack_id") == rec.id}
