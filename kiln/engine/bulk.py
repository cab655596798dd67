"""Bulk row writes on the engine's hot path, in Core executemany form.

The repository's ORM-based ``create_resources`` costs about a millisecond per row; a
1,000-resource stack must be stored in a few. These helpers write the same columns the
repository would, through the published models, in one statement per table.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import Any, cast

import sqlalchemy as sa
from sqlalchemy.orm import Session

from kiln.db.models import Resource, utcnow
from kiln.db.records import NewResource

_RESOURCE = cast(sa.Table, Resource.__table__)
#: up to this many new rows are read back by uuid rather than by stack
_BY_UUID = 100


def insert_resources(s: Session, rows: Sequence[NewResource]) -> dict[str, tuple[int, str, Any]]:
    """Insert INIT rows; returns ``{name: (id, uuid, created_at)}``."""
    if not rows:
        return {}
    now = utcnow()
    values = [{"uuid": r.uuid or str(uuid.uuid4()), "stack_id": r.stack_id,
               "root_stack_id": r.root_stack_id, "name": r.name, "type": r.type,
               "physical_resource_id": r.physical_resource_id, "action": r.action,
               "status": r.status, "status_reason": r.status_reason,
               "properties_data": r.properties_data, "rsrc_metadata": r.metadata,
               "requires": None if r.requires is None else list(r.requires),
               "needed_by": None if r.needed_by is None else list(r.needed_by),
               "replaces": r.replaces, "traversal_id": r.traversal_id, "created_at": now}
              for r in rows]
    conn = s.connection()
    conn.execute(sa.insert(_RESOURCE), values)
    wanted = {v["uuid"]: v["name"] for v in values}
    # a few rows (one replacement) are read back by uuid: reading the whole stack for
    # each of N replacements made an update of N resources O(N^2)
    where = (_RESOURCE.c.uuid.in_(list(wanted)) if len(values) <= _BY_UUID
             else _RESOURCE.c.stack_id == rows[0].stack_id)
    found = conn.execute(sa.select(_RESOURCE.c.id, _RESOURCE.c.uuid).where(where))
    return {wanted[u]: (rid, u, now) for rid, u in found if u in wanted}
