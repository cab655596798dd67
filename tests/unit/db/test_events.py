"""Events: batch insert, Heat's list order/filters/pagination, per-stack purge."""

from __future__ import annotations

import datetime as dt
from typing import Any

from kiln.db import events
from kiln.db.records import EventQuery, NewEvent
from tests.unit.db.support import Tx, new_stack

T0 = dt.datetime(2024, 5, 1, 10, 0, 0)


def _seed(tx: Tx, stack_id: str) -> list[str]:
    """Six events, one second apart: r1/r2 CREATE IN_PROGRESS→COMPLETE, stack events."""
    rows = [
        ("s", "OS::Heat::Stack", "CREATE", "IN_PROGRESS"),
        ("r1", "OS::Heat::RandomString", "CREATE", "IN_PROGRESS"),
        ("r2", "OS::Heat::None", "CREATE", "IN_PROGRESS"),
        ("r1", "OS::Heat::RandomString", "CREATE", "COMPLETE"),
        ("r2", "OS::Heat::None", "CREATE", "FAILED"),
        ("s", "OS::Heat::Stack", "CREATE", "FAILED"),
    ]
    with tx() as s:
        return events.add_events(s, [
            NewEvent(stack_id, name, typ, action, status, f"{name} {status}",
                     physical_resource_id=f"phy-{name}",
                     created_at=T0 + dt.timedelta(seconds=i))
            for i, (name, typ, action, status) in enumerate(rows)])


def _list(tx: Tx, stack_id: str, **kw: Any) -> list[str]:
    with tx() as s:
        return [e.uuid for e in events.list_events(s, EventQuery([stack_id], **kw))]


def test_default_order_is_newest_first(tx: Tx) -> None:
    st = new_stack(tx)
    ids = _seed(tx, st.id)
    assert _list(tx, st.id) == ids[::-1]
    assert _list(tx, st.id, sort_dir="asc") == ids
    # Heat only honours event_time and resource_type; other keys fall back to the default
    assert _list(tx, st.id, sort_keys=["resource_name"]) == ids[::-1]
    assert _list(tx, st.id, sort_keys=["event_time"]) == ids


def test_same_timestamp_keeps_insertion_order(tx: Tx) -> None:
    st = new_stack(tx)
    with tx() as s:
        ids = events.add_events(s, [NewEvent(st.id, f"r{i}", "T", "CREATE", "COMPLETE",
                                             created_at=T0) for i in range(4)])
    assert _list(tx, st.id, sort_dir="asc") == ids
    assert _list(tx, st.id) == ids[::-1]


def test_sort_by_resource_type(tx: Tx) -> None:
    st = new_stack(tx)
    ids = _seed(tx, st.id)
    got = _list(tx, st.id, sort_keys=["resource_type", "event_time"])
    # None (2,4) < RandomString (1,3) < Stack (0,5), then by time
    assert got == [ids[2], ids[4], ids[1], ids[3], ids[0], ids[5]]


def test_filters(tx: Tx) -> None:
    st = new_stack(tx)
    ids = _seed(tx, st.id)
    asc: dict[str, Any] = {"sort_dir": "asc"}
    assert _list(tx, st.id, filters={"resource_name": "r1"}, **asc) == [ids[1], ids[3]]
    assert _list(tx, st.id, filters={"resource_status": "FAILED"}, **asc) == [ids[4], ids[5]]
    assert _list(tx, st.id, filters={"resource_status": ["COMPLETE", "FAILED"],
                                     "resource_name": ["r1", "r2"]}, **asc) == [ids[3], ids[4]]
    assert _list(tx, st.id, filters={"resource_type": "OS::Heat::None"}, **asc) == [
        ids[2], ids[4]]
    assert _list(tx, st.id, filters={"resource_action": "DELETE"}) == []


def test_limit_and_marker_pages(tx: Tx) -> None:
    st = new_stack(tx)
    ids = _seed(tx, st.id)
    assert _list(tx, st.id, limit=2) == [ids[5], ids[4]]
    assert _list(tx, st.id, limit=2, marker=ids[4]) == [ids[3], ids[2]]
    assert _list(tx, st.id, limit=10, marker=ids[1]) == [ids[0]]
    assert _list(tx, st.id, sort_dir="asc", limit=3, marker=ids[1]) == ids[2:5]


def test_events_of_several_stacks_and_get_one(tx: Tx) -> None:
    a, b = new_stack(tx, "a"), new_stack(tx, "b")
    ia, ib = _seed(tx, a.id), _seed(tx, b.id)
    with tx() as s:
        both = events.list_events(s, EventQuery([a.id, b.id]))
        assert {e.uuid for e in both} == set(ia) | set(ib)
        one = events.get_event(s, a.id, ia[3])
        assert one is not None
        assert (one.resource_name, one.resource_status, one.resource_status_reason,
                one.physical_resource_id) == ("r1", "COMPLETE", "r1 COMPLETE", "phy-r1")
        assert one.created_at == T0 + dt.timedelta(seconds=3)
        assert events.get_event(s, b.id, ia[3]) is None   # wrong stack
        assert events.count_events(s, a.id) == 6


def test_oldest_purged_beyond_max_events_per_stack(tx: Tx) -> None:
    st, other = new_stack(tx, "a"), new_stack(tx, "b")
    kept_other = _seed(tx, other.id)
    all_ids: list[str] = []
    for batch in range(4):
        with tx() as s:
            all_ids += events.add_events(
                s, [NewEvent(st.id, f"r{batch}-{i}", "T", "CREATE", "COMPLETE")
                    for i in range(5)], max_events_per_stack=12, purge_batch_size=4,
                purge_check_probability=1.0)
    with tx() as s:
        remaining = [e.uuid for e in events.list_events(s, EventQuery([st.id],
                                                                      sort_dir="asc"))]
    assert len(remaining) <= 12
    assert len(remaining) >= 12 - 4          # never more than a purge batch below the cap
    assert remaining == all_ids[-len(remaining):]   # the newest survive, in order
    assert _list(tx, other.id, sort_dir="asc") == kept_other   # other stacks untouched
    with tx() as s:
        assert events.purge_events(s, st.id, keep=100, batch_size=10) == 0
        assert events.purge_events(s, st.id, keep=2, batch_size=1) == len(remaining) - 2


def test_events_visible_in_their_own_transaction_and_gone_with_its_rollback(tx: Tx) -> None:
    st = new_stack(tx)
    with tx() as s:
        ids = events.add_events(s, [NewEvent(st.id, "r", "T", "CREATE", "COMPLETE")])
        assert [e.uuid for e in events.list_events(s, EventQuery([st.id]))] == ids
    try:
        with tx() as s:
            events.add_events(s, [NewEvent(st.id, "r2", "T", "CREATE", "COMPLETE")])
            raise RuntimeError("abort")
    except RuntimeError:
        pass
    with tx() as s:
        assert [e.uuid for e in events.list_events(s, EventQuery([st.id]))] == ids


def test_equal_properties_in_one_batch_are_encrypted_once_and_read_back(tx: Tx) -> None:
    import sqlalchemy as sa

    from kiln.db.models import Event

    st = new_stack(tx)
    same = {"password": "pa55", "length": 8}
    other = {"password": "0ther", "length": 9}
    with tx() as s:
        events.add_events(s, [
            NewEvent(st.id, name, "T", "CREATE", "COMPLETE", resource_properties=props)
            for name, props in (("a", same), ("b", dict(same)), ("c", other),
                                ("d", None))])
    with tx() as s:
        stored: dict[str, Any] = dict(s.execute(sa.select(Event.resource_name,
                                                          Event.resource_properties)).all())
        listed = {e.resource_name: e.resource_properties
                  for e in events.list_events(s, EventQuery([st.id]))}
    assert "pa55" not in str(stored) and "0ther" not in str(stored)
    # equal documents share one token; different ones do not
    assert stored["a"] == stored["b"] != stored["c"]
    assert stored["d"] is None
    assert listed == {"a": same, "b": same, "c": other, "d": None}
