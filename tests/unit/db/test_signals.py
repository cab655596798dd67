"""Signals a resource keeps: a row each, appended (a repeated id rewrites its row),
merged into the metadata readers show; and ``max_events_per_stack`` held by the writer
as events are written."""

from __future__ import annotations

import json
import uuid

import sqlalchemy as sa
from alembic import command
from sqlalchemy.orm import Session

from kiln.db import agent_view, events, migrate, resources, signals
from kiln.db.engine import make_engine
from kiln.db.facade import Database
from kiln.db.models import Resource, ResourceSignal, utcnow
from kiln.db.records import EventQuery, NewEvent, NewResource
from tests.unit.db.support import TEMPLATE, Tx, new_stack


def _handle(tx: Tx) -> tuple[str, int]:
    st = new_stack(tx)
    with tx() as s:
        (r,) = resources.create_resources(s, [NewResource(
            st.id, st.id, "h", "OS::Heat::WaitConditionHandle", metadata={"own": 1})])
    return st.id, r.id


def test_signals_are_appended_and_shown_in_the_metadata(tx: Tx) -> None:
    stack_id, rid = _handle(tx)
    with tx() as s:
        signals.keep_signals(s, rid, [signals.SignalWrite("1", {"data": "a"}, 10, True)])
    with tx() as s:
        signals.keep_signals(s, rid, [signals.SignalWrite("2", {"data": "b"}, 11, True),
                                      signals.SignalWrite("1", {"data": "c"}, 12, False)])
    with tx() as s:   # "new" to a process that had not seen another's signal: rewritten
        signals.keep_signals(s, rid, [signals.SignalWrite("1", {"data": "c"}, 12, True)])
    with tx() as s:
        rec = resources.get_resource(s, rid)
        assert rec is not None
        # the stored document is untouched; a repeated id kept its place
        assert rec.metadata == {"own": 1}
        assert list(rec.signals.items()) == [("1", {"data": "c"}), ("2", {"data": "b"})]
        assert rec.signal_sizes == {"1": 12, "2": 11}
        assert rec.shown_metadata() == {"own": 1, "1": {"data": "c"}, "2": {"data": "b"}}
        assert signals.count_signals(s, rid) == (2, 23)
        view = agent_view.read_agent_view(s, key=stack_id, scope=None, project_id="p1",
                                          resource_name="h")
        assert view.resource is not None
        assert view.resource.shown_metadata() == rec.shown_metadata()
        # each signal is its own row; the resource row was never rewritten with them
        assert s.execute(sa.select(sa.func.count()).select_from(ResourceSignal)).scalar() == 2
    with tx() as s:
        resources.delete_resource(s, rid)
    with tx() as s:
        assert signals.get_signals(s, rid) == {}
        assert s.get(Resource, rid) is None


async def test_the_writer_keeps_events_at_the_cap_while_they_are_written(
        db: Database, tx: Tx) -> None:
    """Without an action ending: every half purge batch of a stack's events, the oldest
    go, so the count never passes the cap by more than that."""
    st = new_stack(tx)
    events.cap_events(db, 30, 10)
    for i in range(200):
        await db.write(events.add_events, [NewEvent(st.id, "h", "T", "SIGNAL", "COMPLETE",
                                                    f"signal {i}")])
        count = await db.run(events.count_events, st.id)
        assert count <= 30 + 5, (i, count)
    kept = await db.run(events.list_events, EventQuery([st.id]))
    assert kept[0].resource_status_reason == "signal 199"     # the newest stay
    events.cap_events(db, 0, 10)
    assert not db.write_session_info


def _stack_at_0006(conn: sa.Connection) -> str:
    """A stack row written with the columns of revision 0006 (today's model has more)."""
    conn.execute(sa.text("INSERT INTO raw_template (template, environment, files, created_at)"
                         " VALUES (:t, '{}', '{}', :now)"),
                 {"t": json.dumps(TEMPLATE), "now": utcnow()})
    raw_id = conn.execute(sa.text("SELECT MAX(id) FROM raw_template")).scalar()
    stack_id = str(uuid.uuid4())
    conn.execute(sa.insert(sa.Table("stack", sa.MetaData(), autoload_with=conn)).values(
        id=stack_id, name="old", project_id="p1", root_stack_id=stack_id, nested_depth=0,
        action="CREATE", status="COMPLETE", status_reason="", raw_template_id=raw_id,
        disable_rollback=True, created_at=utcnow()))
    return stack_id


def test_the_upgrade_moves_a_handles_signals_out_of_its_metadata(url: str) -> None:
    """A wait condition waiting across the upgrade still counts its signals; other
    metadata, and other types' metadata, stay where they were (and the downgrade puts
    the signals back)."""
    migrate.upgrade(url, "0006_user_creds")
    eng = make_engine(url)
    try:
        signal = {"data": "d", "reason": "r", "status": "SUCCESS"}
        with eng.begin() as conn:   # the stack row as 0006's schema has it
            stack_id = _stack_at_0006(conn)
        with Session(eng, expire_on_commit=False) as s, s.begin():
            handle, other = resources.create_resources(s, [
                NewResource(stack_id, stack_id, "h", "OS::Heat::WaitConditionHandle",
                            metadata={"1": signal, "own": "x"}),
                NewResource(stack_id, stack_id, "n", "OS::Heat::None",
                            metadata={"1": signal})])
        # as the code of 0006's time stored it: JSON text (today's rows are sealed)
        with eng.begin() as conn:
            for row, meta in ((handle, {"1": signal, "own": "x"}), (other, {"1": signal})):
                conn.execute(sa.text("UPDATE resource SET rsrc_metadata = :m WHERE id = :i"),
                             {"m": json.dumps(meta), "i": row.id})
        migrate.upgrade(url)
        with Session(eng) as s:
            moved = resources.get_resource(s, handle.id)
            kept = resources.get_resource(s, other.id)
            assert moved is not None and kept is not None
            assert moved.metadata == {"own": "x"} and moved.signals == {"1": signal}
            assert moved.shown_metadata() == {"own": "x", "1": signal}
            assert kept.metadata == {"1": signal} and kept.signals == {}
        with eng.begin() as conn:
            command.downgrade(migrate._alembic_config(conn),  # type: ignore[arg-type]
                              "0006_user_creds")
        with eng.connect() as conn:
            metadata = conn.execute(sa.select(Resource.rsrc_metadata)
                                    .where(Resource.id == handle.id)).scalar()
            assert metadata == {"own": "x", "1": signal}
    finally:
        eng.dispose()
