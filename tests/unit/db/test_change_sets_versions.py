"""Change set and stack history rows: stored sealed, found by id and by name, executed
once (compare-and-set), and a stack's versions bounded to the newest ``keep``."""

from __future__ import annotations

import uuid

import sqlalchemy as sa

from kiln.db import change_sets, stack_versions
from kiln.db.models import ChangeSet, StackVersion
from tests.unit.db.support import Tx, new_stack


def _values(stack_id: str, name: str, **kw: object) -> dict[str, object]:
    return {
        "id": str(uuid.uuid4()),
        "name": name,
        "stack_id": stack_id,
        "stack_name": "s1",
        "project_id": "p1",
        "change_type": "UPDATE",
        "description": None,
        "status": "CREATE_COMPLETE",
        "status_reason": "",
        "fingerprint": "f",
        "request": {"environment": {"parameters": {"pw": "s3cret"}}},
        "changes": [{"action": "Add"}],
        **kw,
    }


def test_change_set_crud_and_execute_once(tx: Tx) -> None:
    st = new_stack(tx)
    with tx() as s:
        a = change_sets.create_change_set(s, _values(st.id, "a"))
        b = change_sets.create_change_set(s, _values(st.id, "b"))
    with tx() as s:
        assert change_sets.get_change_set(s, a.id) == a
        found = change_sets.find_change_set(s, "p1", "s1", "b")
        assert found is not None and found.id == b.id
        assert change_sets.find_change_set(s, "p2", "s1", "b") is None
        assert [c.name for c in change_sets.list_change_sets(s, "p1", "s1")] == ["a", "b"]
        assert change_sets.count_change_sets(s, "p1", "s1") == 2
        # the request's secrets are sealed at rest
        raw = s.execute(
            sa.select(sa.cast(ChangeSet.__table__.c.request, sa.Text)).where(ChangeSet.id == a.id)
        ).scalar_one()
        assert "s3cret" not in raw
    with tx() as s:
        assert change_sets.update_change_set(
            s, a.id, {"execution": "EXECUTED"}, only_if_execution=""
        )
    with tx() as s:
        assert not change_sets.update_change_set(
            s, a.id, {"execution": "EXECUTED"}, only_if_execution=""
        )
        assert change_sets.delete_change_set(s, b.id)
        assert not change_sets.delete_change_set(s, b.id)
        assert change_sets.delete_stack_change_sets(s, "p1", "s1", st.id) == 1


def test_versions_are_numbered_and_bounded(tx: Tx) -> None:
    st = new_stack(tx)
    with tx() as s:
        numbers = [
            stack_versions.add_version(
                s, st.id, "UPDATE", {"n": n}, {"parameters": {"pw": "s3cret"}}, {}, 3
            )
            for n in range(5)
        ]
    assert numbers == [1, 2, 3, 4, 5]
    with tx() as s:
        kept = stack_versions.list_versions(s, st.id)
        assert [(v.version, v.template) for v in kept] == [
            (3, {"n": 2}),
            (4, {"n": 3}),
            (5, {"n": 4}),
        ]
        assert kept[0].environment == {"parameters": {"pw": "s3cret"}}
        assert stack_versions.get_version(s, st.id, 2) is None
        raw = (
            s.execute(sa.select(sa.cast(StackVersion.__table__.c.environment, sa.Text)))
            .scalars()
            .all()
        )
        assert raw and not any("s3cret" in r for r in raw)
