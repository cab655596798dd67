"""Every state transition the engine makes, turned into database writes.

A resource transition is ONE write job (row update + its data changes + its event)
queued on the database's batching writer; a stack transition likewise. Callers get the
writer's future and await it before anything that depends on the transition starts, so
"committed before dependants start" holds while a thousand parallel transitions still
share a handful of commits.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from typing import Any

from sqlalchemy.orm import Session

from kiln.db import events as db_events
from kiln.db import resources as db_resources
from kiln.db import stacks as db_stacks
from kiln.db.facade import Database
from kiln.db.records import NewEvent, ResourceValues, StackValues
from kiln.engine.stack import LiveStack, Slot

_NO_PROGRESS = object()


def _resource_transition(s: Session, resource_id: int, values: ResourceValues,
                         data_set: Mapping[str, str], data_del: Sequence[str],
                         event: NewEvent | None) -> None:
    db_resources.update_resource(s, resource_id, values)
    for key, value in data_set.items():
        db_resources.set_resource_data(s, resource_id, key, value)
    for key in data_del:
        db_resources.delete_resource_data(s, resource_id, key)
    if event is not None:
        db_events.add_events(s, [event])


def _stack_transition(s: Session, stack_id: str, values: StackValues,
                      event: NewEvent | None) -> None:
    db_stacks.update_stack(s, stack_id, values)
    if event is not None:
        db_events.add_events(s, [event])


class Recorder:
    """Queues transitions on the database writer; never blocks the event loop."""

    def __init__(self, db: Database, engine_id: str) -> None:
        self.db = db
        self.engine_id = engine_id

    def resource(self, stack: LiveStack, slot: Slot, action: str, status: str,
                 reason: str = "state changed", *, progress: Any = _NO_PROGRESS,
                 event: bool = True, extra: ResourceValues | None = None,
                 ) -> asyncio.Future[None]:
        """Set the slot's state, persist row + data + event in one write job."""
        state = slot.state
        state.action, state.status, state.status_reason = action, status, reason
        values: ResourceValues = {
            "action": action, "status": status, "status_reason": reason,
            "physical_resource_id": state.resource_id,
            "metadata": state.metadata,
            "properties_data": state.properties_data,
        }
        if progress is not _NO_PROGRESS:
            values["progress"] = progress
            values["progress_action"] = action if progress is not None else None
        if extra:
            values.update(extra)
        data_set = {k: v for k, v in state.data.items() if slot.saved_data.get(k) != v}
        data_del = [k for k in slot.saved_data if k not in state.data]
        slot.saved_data = dict(state.data)
        ev = None
        if event:
            ev = NewEvent(stack_id=stack.info.id, resource_name=slot.name,
                          resource_type=slot.definition.type, resource_action=action,
                          resource_status=status, resource_status_reason=reason,
                          physical_resource_id=state.resource_id,
                          resource_properties=state.properties_data)
        return self.db.write(_resource_transition, slot.db_id, values, data_set, data_del, ev)

    def progress(self, slot: Slot, token: Any) -> asyncio.Future[None]:
        """Persist the token (and whatever the handle call changed) before polling."""
        state = slot.state
        values: ResourceValues = {"progress": token, "progress_action": state.action,
                                  "physical_resource_id": state.resource_id,
                                  "metadata": state.metadata}
        data_set = {k: v for k, v in state.data.items() if slot.saved_data.get(k) != v}
        data_del = [k for k in slot.saved_data if k not in state.data]
        slot.saved_data = dict(state.data)
        return self.db.write(_resource_transition, slot.db_id, values, data_set, data_del, None)

    def stack(self, stack: LiveStack, action: str, status: str, reason: str, *,
              extra: StackValues | None = None, event: bool = True) -> asyncio.Future[None]:
        info = stack.info
        info.action, info.status, info.status_reason = action, status, reason
        values: StackValues = {"action": action, "status": status, "status_reason": reason}
        if extra:
            values.update(extra)
        ev = None
        if event:
            ev = NewEvent(stack_id=info.id, resource_name=info.name,
                          resource_type="OS::Heat::Stack",
                          resource_action=action, resource_status=status,
                          resource_status_reason=reason, physical_resource_id=info.id)
        return self.db.write(_stack_transition, info.id, values, ev)
