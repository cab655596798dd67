"""Drift detections: the service adds one when a detection starts, the walk settles it
(:mod:`kiln.engine.actions.drift`), the APIs read them back."""

from __future__ import annotations

import asyncio
from typing import Any

from kiln.db import drift as db_drift
from kiln.db.facade import Database
from kiln.engine.model.drift import DETECTION_COMPLETE, DETECTION_IN_PROGRESS, DriftRun


def _run(row: dict[str, Any]) -> DriftRun:
    return DriftRun(id=row["id"], stack_id=row["stack_id"], scope=row["scope"],
                    status=row["status"], drift_status=row["drift_status"],
                    drifted_count=int(row["drifted_count"] or 0),
                    status_reason=row["status_reason"] or "",
                    resources=list(row["resources"] or []), created_at=row["created_at"],
                    updated_at=row["updated_at"])


class DriftStore:
    def __init__(self, db: Database) -> None:
        self._db = db

    async def add(self, detection_id: str, stack_id: str, *, scope: str, status: str,
                  keep: int) -> DriftRun:
        """A new detection (the stack keeps its newest *keep*)."""
        row = await self._db.write(db_drift.add_detection, detection_id, stack_id,
                                   scope=scope, status=status, keep=keep)
        return _run(row)

    def settle(self, detection_id: str, *, status: str, drift_status: str | None,
               drifted_count: int, reason: str,
               resources: list[dict[str, Any]] | None) -> asyncio.Future[bool]:
        return self._db.write(db_drift.settle_detection, detection_id, status=status,
                              drift_status=drift_status, drifted_count=drifted_count,
                              status_reason=reason, resources=resources)

    async def get(self, detection_id: str) -> DriftRun | None:
        row = await self._db.run(db_drift.get_detection, detection_id)
        return None if row is None else _run(row)

    async def of_stack(self, stack_id: str, *, complete_only: bool = False) -> list[DriftRun]:
        """The stack's detections, newest first."""
        rows = await self._db.run(db_drift.list_detections, stack_id,
                                  status=DETECTION_COMPLETE if complete_only else None)
        return [_run(r) for r in rows]

    async def stack_status(self, stack_ids: list[str]) -> dict[str, tuple[str, Any]]:
        """(drift status, time) of each stack's newest complete whole-stack detection."""
        return await self._db.run(db_drift.latest_stack_status, stack_ids,
                                  DETECTION_COMPLETE)

    def claim(self, detection_id: str, *, lease: float) -> asyncio.Future[bool]:
        """Take a queued (or abandoned) whole-stack detection to run it here."""
        return self._db.write(db_drift.claim_detection, detection_id,
                              status=DETECTION_IN_PROGRESS, lease=lease)

    async def claimable(self, *, lease: float, stack_id: str | None = None) -> list[str]:
        """Ids of whole-stack detections nobody runs, oldest first."""
        return await self._db.run(db_drift.claimable_detections,
                                  status=DETECTION_IN_PROGRESS, lease=lease,
                                  stack_id=stack_id)

    def renew(self, detection_ids: list[str]) -> asyncio.Future[None]:
        """Renew this process's claims on the detections it runs."""
        return self._db.write(db_drift.renew_detections, detection_ids,
                              status=DETECTION_IN_PROGRESS)
