"""The event INSERT and resource UPDATE sent straight to SQLite's driver store exactly
what SQLAlchemy stores; a statement SQLAlchemy must complete, and every other database,
are left to SQLAlchemy; a driver error is SQLAlchemy's exception for it. Both the
writes and the inline reads compile through SQLAlchemy's own statement cache."""

from __future__ import annotations

import datetime as dt
from typing import Any, cast

import pytest
import sqlalchemy as sa

from kiln.db import resources, sqlite_fast
from kiln.db.facade import Database
from kiln.db.models import Event, Resource, Stack
from kiln.db.records import NewResource
from tests.unit.db.support import Tx, new_stack

_EVENTS = cast(sa.Table, Event.__table__)
_RESOURCES = cast(sa.Table, Resource.__table__)
_STACKS = cast(sa.Table, Stack.__table__)
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
        by_driver = sqlite_fast.execute(s, insert, [_event(sid, "by-driver")])
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
        if not sqlite_fast.execute(s, stmt, first):
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
        assert not sqlite_fast.execute(s, sa.insert(_EVENTS), [row])
        assert s.execute(sa.select(sa.func.count()).select_from(_EVENTS)).scalar() == 0


def test_a_driver_error_is_sqlalchemys_exception(tx: Tx) -> None:
    sid = new_stack(tx).id
    with tx() as s:
        if s.connection().dialect.name != "sqlite":
            pytest.skip("only SQLite's statements go to its driver")
    with pytest.raises(sa.exc.IntegrityError), tx() as s:
        sqlite_fast.execute(s, sa.insert(_EVENTS), [_event(sid, "twice"), _event(sid, "twice")])


def test_the_statement_cache_is_sqlalchemys_own(tx: Tx) -> None:
    """A statement sent to the driver is compiled once, into the engine's compiled cache
    under the key ``Connection.execute`` uses: SQLAlchemy then sends the very same
    ``Compiled`` for it, adding nothing to the cache (one cache for both paths)."""
    sid = new_stack(tx).id
    stmt = sa.update(_EVENTS).where(_EVENTS.c.stack_id == sa.bindparam("sid")).values(
        resource_status_reason=sa.bindparam("why"))
    rows = [{"sid": sid, "why": "one"}, {"sid": sid, "why": "two"}]
    with tx() as s:
        conn = s.connection()
        if conn.dialect.name != "sqlite":
            pytest.skip("only SQLite's statements go to its driver")
        cache = conn.engine._compiled_cache
        assert cache is not None
        before = set(cache)
        assert sqlite_fast.execute(s, stmt, rows)
        added = set(cache) - before
        assert len(added) == 1                       # compiled into SQLAlchemy's cache
        compiled = cache[added.pop()]
        result = conn.execute(stmt, rows)
        assert len(set(cache) - before) == 1         # and found it there
        assert result.context.compiled is compiled   # SQLAlchemy sent the same object


async def test_inline_reads_share_sqlalchemys_cache_and_its_literals(tx: Tx, db: Database,
                                                                     ) -> None:
    """An inline read compiles into SQLAlchemy's cache, under the key SQLAlchemy then
    finds for an equal statement (one entry for both paths), and each statement sends
    its own literals (here its LIMIT, which the cache key leaves out)."""
    if not sqlite_fast.usable(db.engine):
        pytest.skip("inline reads exist only on a SQLite file")
    for name in ("a", "b", "c"):
        new_stack(tx, name)

    def ids(limit: int) -> sa.Select[Any]:
        return (sa.select(_STACKS.c.id, _STACKS.c.created_at)
                .where(_STACKS.c.project_id == sa.bindparam("p"))
                .order_by(_STACKS.c.id).limit(limit))

    cache = db.engine._compiled_cache
    assert cache is not None
    before = set(cache)
    first = await db.read_now(lambda rows: rows.all(ids(1), {"p": "p1"}))
    added = set(cache) - before
    assert len(first) == 1 and len(added) == 1   # compiled into SQLAlchemy's cache
    with db.engine.connect() as conn:           # which SQLAlchemy then uses (LIMIT 3)
        three = conn.execute(ids(3), {"p": "p1"}).mappings().all()
    assert [dict(r) for r in three[:1]] == first and len(three) == 3
    two = await db.read_now(lambda rows: rows.all(ids(2), {"p": "p1"}))
    assert two == [dict(r) for r in three[:2]]   # this statement's own LIMIT
    assert set(cache) - before == added          # one entry for the shape, both paths


def test_a_sqlalchemy_without_the_private_route_leaves_every_statement_to_it(
        tx: Tx, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    """Should a SQLAlchemy release drop or change ``_compile_w_cache``, the fast path
    steps aside with one warning instead of failing every write (the test above is the
    one that tells the developers)."""
    sid = new_stack(tx).id
    with tx() as s:
        if s.connection().dialect.name != "sqlite":
            pytest.skip("only SQLite's statements go to its driver")

    def changed(*args: Any, **kwargs: Any) -> Any:
        raise TypeError("_compile_w_cache() got an unexpected keyword argument 'linting'")

    monkeypatch.setattr(sa.sql.ClauseElement, "_compile_w_cache", changed)
    monkeypatch.setattr(sqlite_fast, "_PRIVATE_ROUTE_BROKEN", False)
    monkeypatch.setattr(sqlite_fast, "_KNOWN", {})
    stmt = sa.update(_EVENTS).where(_EVENTS.c.stack_id == sa.bindparam("sid")).values(
        resource_status_reason=sa.bindparam("why"))
    with tx() as s:
        assert not sqlite_fast.execute(s, stmt, [{"sid": sid, "why": "x"}])
        assert not sqlite_fast.execute(s, sa.insert(_EVENTS), [_event(sid, "later")])
    warnings = [r for r in caplog.records if "fast path off" in r.getMessage()]
    assert len(warnings) == 1
