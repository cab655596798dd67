"""The signals a resource keeps (a wait-condition handle's), one row per signal id.

A signal used to be stored by rewriting the resource's whole metadata document, so the
n-th signal wrote all n: 300 signals of 900 KB to one handle wrote some 130 GB of
row versions and left a 5.6 GB write-ahead log. Here a signal writes its own row only
(a signal repeating an id rewrites that id's row), and readers merge the rows into the
metadata (:func:`kiln.db.records.merged_metadata`). How much a resource may keep is the
plugin's check (``[kiln_engine] max_signals_per_resource`` and friends); ``size`` lets a
loader total what is kept without encoding it again.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, cast

import sqlalchemy as sa
from sqlalchemy.orm import Session

from kiln.db import sqlite_fast
from kiln.db.models import ResourceSignal

_TABLE = cast(sa.Table, ResourceSignal.__table__)
_INSERT = sa.insert(_TABLE)
_UPDATE = (sa.update(_TABLE)
           .where(_TABLE.c.resource_id == sa.bindparam("rid"),
                  _TABLE.c.key == sa.bindparam("k"))
           .values(entry=sa.bindparam("e"), size=sa.bindparam("n")))
#: one resource's signals, in the order they came (agents' reads, :mod:`agent_view`)
OF_RESOURCE = (sa.select(_TABLE.c.key, _TABLE.c.entry, _TABLE.c.size)
               .where(_TABLE.c.resource_id == sa.bindparam("resource_id"))
               .order_by(_TABLE.c.id))


@dataclass(frozen=True, slots=True)
class SignalWrite:
    """One signal to keep: ``new`` when its id is not stored for the resource yet."""

    key: str
    entry: Any
    size: int
    new: bool


def keep_signals(s: Session, resource_id: int, writes: Sequence[SignalWrite]) -> None:
    """Store what the signals add: an INSERT per new id, an UPDATE per repeated one.

    An id new to the caller may have been stored meanwhile by another process (which
    loaded the stack to take a signal while this one runs it), so a new id's row is
    inserted only where an UPDATE finds none."""
    inserts: list[dict[str, Any]] = []
    updates = [{"rid": resource_id, "k": w.key, "e": w.entry, "n": w.size}
               for w in writes if not w.new]
    conn = s.connection()
    for w in writes:
        if w.new and not conn.execute(_UPDATE, {"rid": resource_id, "k": w.key,
                                                "e": w.entry, "n": w.size}).rowcount:
            inserts.append({"resource_id": resource_id, "key": w.key, "entry": w.entry,
                            "size": w.size})
    # on SQLite straight to the driver, as the event INSERT beside it (kiln.db.sqlite_fast)
    if inserts and not sqlite_fast.execute(s, _INSERT, inserts):
        s.connection().execute(_INSERT, inserts)
    if updates and not sqlite_fast.execute(s, _UPDATE, updates):
        s.connection().execute(_UPDATE, updates)


def fill_signals(s: Session, signals: Mapping[int, dict[str, Any]],
                 sizes: Mapping[int, dict[str, int]]) -> None:
    """Fill each resource's (empty) maps with its signals, oldest first."""
    ids = list(signals)
    for i in range(0, len(ids), 500):
        rows = s.execute(sa.select(_TABLE.c.resource_id, _TABLE.c.key, _TABLE.c.entry,
                                   _TABLE.c.size)
                         .where(_TABLE.c.resource_id.in_(ids[i:i + 500]))
                         .order_by(_TABLE.c.id))
        for rid, key, entry, size in rows:
            signals[rid][key] = entry
            sizes[rid][key] = size


def get_signals(s: Session, resource_id: int) -> dict[str, Any]:
    """One resource's signals, by id in the order they came."""
    out: dict[int, dict[str, Any]] = {resource_id: {}}
    fill_signals(s, out, {resource_id: {}})
    return out[resource_id]


def count_signals(s: Session, resource_id: int) -> tuple[int, int]:
    """How many signals the resource keeps, and their bytes."""
    count, size = s.execute(sa.select(sa.func.count(_TABLE.c.id),
                                      sa.func.coalesce(sa.func.sum(_TABLE.c.size), 0))
                            .where(_TABLE.c.resource_id == resource_id)).one()
    return int(count), int(size)
