"""The event INSERT and resource UPDATE sent straight to SQLite's driver store exactly
what SQLAlchemy stores; a statement SQLAlchemy must complete, and every other database,
are left to SQLAlchemy; a driver error is SQLAlchemy's exception for it."""

from __future__ import annotations

import datetime as dt
from typing import Any, cast

import pytest
import sqlalchemy as sa

from kiln.db import driver_dml, resources
from kiln.db.models import Event, Resource
from kiln.db.records import NewResource
from tests.unit.db.support import Tx, new_stack

_EVENTS = cast(sa.Table, Event.__table__)
_RESOURCES = cast(sa.Table, Resource.__table__)
WHEN = dt.datetime(2026, 11, 24, 18, 30, 1, 234567)


def _event(stack_id: str, uuid: str) -> dict[str, Any]:
    return {"uuid": uuid, "stack_id": stack_id, "resource_name": "r",
            "physical_resource_id": None, "resource_type": "T", "resource_action": "SIGNAL",
            "resource_status": "COMPLETE", "resource_status_reason": "why",
            "resource_properties": {"a": [1, "x"], "b": None}, "created_at": WHEN}


def _stored(tx: Tx, uuid: str) -> dict[str, Any]:
    with tx() as s:
        row = s.execute(sa.select(_EVENTS).where(_EVENTS.c.uuid == uuid)).mappings().one()
        return {k: v for k, v in row.items() if k not in ("id", "uuid")}


def test_an_event_row_is_stored_as_sqlalchemy_stores_it(tx: Tx) -> None:
    sid = new_stack(tx).id
    insert = sa.insert(_EVENTS)
    with tx() as s:
        by_driver = driver_dml.execute(s, insert, [_event(sid, "by-driver")])
        s.connection().execute(insert, [_event(sid, "by-sqlalchemy")])
        sqlite = s.connection().dialect.name == "sqlite"
    assert by_driver is sqlite        # elsewhere nothing was done, and the caller does it
    if by_driver:
        assert _stored(tx, "by-driver") == _stored(tx, "by-sqlalchemy")
        assert _stored(tx, "by-driver")["created_at"] == WHEN


def test_a_resource_update_is_stored_as_sqlalchemy_stores_it(tx: Tx) -> None:
    sid = new_stack(tx).id
    with tx() as s:
        one, two = resources.create_resources(s, [NewResource(sid, sid, "a", "T"),
                                                  NewResource(sid, sid, "b", "T")])
    stmt = sa.update(_RESOURCES).where(_RESOURCES.c.id == sa.bindparam("_rid")).values(
        rsrc_metadata=sa.bindparam("v_m"), updated_at=sa.bindparam("v_u"))
    metadata = {"c1": {"status": "SUCCESS", "data": None}}
    with tx() as s:
        first = [{"_rid": one.id, "v_m": metadata, "v_u": WHEN}]
        if not driver_dml.execute(s, stmt, first):
            s.connection().execute(stmt, first)   # as the callers do elsewhere
        s.connection().execute(stmt, [{"_rid": two.id, "v_m": metadata, "v_u": WHEN}])
    with tx() as s:
        rows = s.execute(sa.select(_RESOURCES.c.rsrc_metadata, _RESOURCES.c.updated_at)
                         .where(_RESOURCES.c.id.in_([one.id, two.id]))
                         .order_by(_RESOURCES.c.id)).all()
    assert [tuple(r) for r in rows] == [(metadata, WHEN)] * 2


def test_a_statement_sqlalchemy_must_complete_is_left_to_it(tx: Tx) -> None:
    sid = new_stack(tx).id
    row = _event(sid, "defaulted")
    del row["created_at"]                    # SQLAlchemy fills in the column's default
    with tx() as s:
        assert not driver_dml.execute(s, sa.insert(_EVENTS), [row])
        assert s.execute(sa.select(sa.func.count()).select_from(_EVENTS)).scalar() == 0


def test_a_driver_error_is_sqlalchemys_exception(tx: Tx) -> None:
    sid = new_stack(tx).id
    with tx() as s:
        if s.connection().dialect.name != "sqlite":
            pytest.skip("only SQLite's statements go to its driver")
    with pytest.raises(sa.exc.IntegrityError), tx() as s:
        driver_dml.execute(s, sa.insert(_EVENTS), [_event(sid, "twice"), _event(sid, "twice")])
