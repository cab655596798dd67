"""Whole-stack drift detections as durable work (issues 24 and 28).

A detection is a row in the database (``drift_detection``, DETECTION_IN_PROGRESS) before
its id is answered. The process that runs it claims it first: a compare-and-set on the
row's ``updated_at`` (empty: nobody took it yet; older than the lease: its runner
stopped), renewed with every heartbeat while it runs, so of several engines exactly one
runs a detection and one that dies mid-detection has it taken over by another engine's
sweep once the lease (``[kiln_engine] engine_dead_after``) has passed.

Who runs it: in ``kiln serve`` and in a ``kiln engine`` process, the process that
accepted it, at once. An API process of a kiln.rpc deployment runs none: it wakes an
engine (the cast that hands stacks over, :meth:`Recovery.take`), and with the broker
down the engines' sweep finds the row. Before this, the accepting process ran it in a
task, and stopping that process left it DETECTION_IN_PROGRESS until it read as failed an
hour later.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from kiln.engine.actions.drift import detect
from kiln.engine.runtime.engine import Engine

LOG = logging.getLogger(__name__)


class DriftWork:
    """The detections this process runs, and taking queued or abandoned ones."""

    def __init__(self, engine: Engine, *, lease: float) -> None:
        self.engine = engine
        self.lease = lease
        self._running: dict[str, asyncio.Task[Any]] = {}

    async def run_here(self, stack_id: str, detection_id: str) -> bool:
        """Claim the detection and run it in this process; False if another took it."""
        if detection_id in self._running or not await self.engine.store.drift.claim(
                detection_id, lease=self.lease):
            return False
        keep = int(self.engine.conf.kiln_engine.drift_results_per_stack)
        task = asyncio.get_running_loop().create_task(
            detect(self.engine, stack_id, detection_id, keep=keep),
            name=f"drift-{detection_id}")
        self._running[detection_id] = task
        task.add_done_callback(lambda _t: self._running.pop(detection_id, None))
        return True

    async def take(self, stack_id: str | None = None) -> list[str]:
        """Run the detections nobody runs (of one stack, when woken for it): those an
        API process queued and those whose runner stopped."""
        taken: list[str] = []
        store = self.engine.store.drift
        for detection_id in await store.claimable(lease=self.lease, stack_id=stack_id):
            run = await store.get(detection_id)
            if run is None:
                continue
            if await self.run_here(run.stack_id, detection_id):
                LOG.info("running drift detection %s of stack %s", detection_id,
                         run.stack_id, extra={"stack_id": run.stack_id})
                taken.append(detection_id)
        return taken

    async def renew(self) -> None:
        """Keep this process's claims (called with each heartbeat)."""
        if self._running:
            await self.engine.store.drift.renew(list(self._running))

    async def stop(self) -> None:
        """Stop the detections running here; their claims lapse and another engine
        runs them again."""
        tasks = list(self._running.values())
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
