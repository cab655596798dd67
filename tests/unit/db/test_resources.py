"""Resources: bulk insert, lookups, replacement rows, updates, data, id allocation."""

from __future__ import annotations

import sqlalchemy as sa

from kiln.db import resources
from kiln.db.models import ResourceData
from kiln.db.records import NewResource
from tests.unit.db.support import Tx, new_stack


def test_bulk_create_and_list_in_creation_order(tx: Tx) -> None:
    st = new_stack(tx)
    with tx() as s:
        made = resources.create_resources(s, [
            NewResource(st.id, st.id, name, "OS::Heat::None", requires=req,
                        properties_data={"n": name}, metadata={"m": 1})
            for name, req in (("a", []), ("b", ["a"]), ("c", ["a", "b"]))])
    assert [r.name for r in made] == ["a", "b", "c"]
    assert made[0].id < made[1].id < made[2].id
    assert len({r.uuid for r in made}) == 3
    with tx() as s:
        listed = resources.list_resources(s, st.id)
        assert [(r.name, r.requires, r.properties_data, r.metadata) for r in listed] == [
            ("a", [], {"n": "a"}, {"m": 1}), ("b", ["a"], {"n": "b"}, {"m": 1}),
            ("c", ["a", "b"], {"n": "c"}, {"m": 1})]
        assert (listed[0].action, listed[0].status) == ("INIT", "COMPLETE")
        assert resources.get_resource(s, made[1].id) == listed[1]
        assert resources.get_resource(s, 10**9) is None


def test_update_and_progress_token_survive_a_new_session(tx: Tx) -> None:
    st = new_stack(tx)
    with tx() as s:
        (r,) = resources.create_resources(s, [NewResource(st.id, st.id, "srv", "T")])
        assert resources.update_resource(s, r.id, {
            "action": "CREATE", "status": "IN_PROGRESS", "physical_resource_id": "phy-1",
            "progress": {"server": "phy-1", "polls": 3}, "progress_action": "CREATE",
            "attributes": {"first_address": "10.0.0.1"}})
    with tx() as s:
        got = resources.get_resource(s, r.id)
        assert got is not None
        assert (got.action, got.status, got.physical_resource_id) == (
            "CREATE", "IN_PROGRESS", "phy-1")
        assert got.progress == {"server": "phy-1", "polls": 3}
        assert got.progress_action == "CREATE"
        assert got.attributes == {"first_address": "10.0.0.1"}
        assert got.updated_at is not None
        assert resources.find_resources_by_physical_id(s, "phy-1") == [got]


def test_claim_with_expected_engine_only_one_wins(tx: Tx) -> None:
    st = new_stack(tx)
    with tx() as s:
        (r,) = resources.create_resources(s, [NewResource(st.id, st.id, "r", "T")])
    with tx() as s:
        assert resources.update_resource(s, r.id, {"engine_id": "A"}, expected_engine=None)
        assert not resources.update_resource(s, r.id, {"engine_id": "B"}, expected_engine=None)
        assert resources.update_resource(s, r.id, {"engine_id": None}, expected_engine="A")


def test_bulk_status_update(tx: Tx) -> None:
    st = new_stack(tx)
    with tx() as s:
        rs = resources.create_resources(s, [NewResource(st.id, st.id, f"r{i}", "T")
                                            for i in range(5)])
        # read them into this session first: the bulk update must not leave stale copies
        assert all(resources.get_resource(s, r.id) for r in rs)
        resources.update_resources(s, [
            (r.id, {"action": "CREATE", "status": "COMPLETE"}) for r in rs[:3]] + [
            (r.id, {"action": "CREATE", "status": "FAILED", "status_reason": "boom"})
            for r in rs[3:]])
        assert [x.status for x in resources.list_resources(s, st.id)] == [
            "COMPLETE"] * 3 + ["FAILED"] * 2
    with tx() as s:
        listed = resources.list_resources(s, st.id)
        assert [(x.status, x.status_reason) for x in listed] == [
            ("COMPLETE", "")] * 3 + [("FAILED", "boom")] * 2


def test_replacement_rows_and_current_by_name(tx: Tx) -> None:
    st = new_stack(tx)
    with tx() as s:
        (old,) = resources.create_resources(s, [NewResource(st.id, st.id, "srv", "T")])
        (new,) = resources.create_resources(s, [NewResource(st.id, st.id, "srv", "T",
                                                            replaces=old.id)])
        resources.update_resource(s, old.id, {"replaced_by": new.id})
    with tx() as s:
        cur = resources.get_resource_by_name(s, st.id, "srv")
        assert cur is not None and cur.id == new.id and cur.replaces == old.id
        assert [r.id for r in resources.list_resources(s, st.id)] == [old.id, new.id]
        assert resources.get_resource_by_name(s, st.id, "nope") is None


def test_ids_are_never_reused_after_delete(tx: Tx) -> None:
    st = new_stack(tx)
    with tx() as s:
        (a,) = resources.create_resources(s, [NewResource(st.id, st.id, "a", "T")])
    with tx() as s:
        resources.delete_resource(s, a.id)
    with tx() as s:
        (b,) = resources.create_resources(s, [NewResource(st.id, st.id, "b", "T")])
    assert b.id > a.id


def test_tree_listing_and_count_cover_nested_stacks(tx: Tx) -> None:
    root = new_stack(tx, "root")
    child = new_stack(tx, "root-c", owner_id=root.id, nested_depth=1)
    other = new_stack(tx, "other")
    with tx() as s:
        resources.create_resources(s, [NewResource(root.id, root.id, "c", "OS::Heat::Stack"),
                                       NewResource(child.id, root.id, "x", "T"),
                                       NewResource(other.id, other.id, "y", "T")])
    with tx() as s:
        assert [r.name for r in resources.list_tree_resources(s, root.id)] == ["c", "x"]
        assert resources.count_tree_resources(s, root.id) == 2


def test_resource_data_plain_and_redacted(tx: Tx) -> None:
    st = new_stack(tx)
    with tx() as s:
        (r,) = resources.create_resources(s, [NewResource(st.id, st.id, "r", "T")])
        resources.set_resource_data(s, r.id, "value", "visible")
        resources.set_resource_data(s, r.id, "password", "hunter2-secret", redact=True)
        resources.set_resource_data(s, r.id, "value", "visible-2")   # overwrite
    with tx() as s:
        assert resources.get_resource_data(s, r.id) == {
            "value": "visible-2", "password": "hunter2-secret"}
        got = resources.get_resource(s, r.id)
        assert got is not None and got.data["password"] == "hunter2-secret"
        stored = dict(s.execute(sa.select(ResourceData.key, ResourceData.value)
                                .where(ResourceData.resource_id == r.id)).all())
        assert stored["value"] == "visible-2"
        assert "hunter2" not in stored["password"]
        assert resources.delete_resource_data(s, r.id, "value")
        assert not resources.delete_resource_data(s, r.id, "value")
        assert resources.get_resource_data(s, r.id) == {"password": "hunter2-secret"}
        resources.delete_resource(s, r.id)   # data goes with it
        assert s.execute(sa.select(sa.func.count()).select_from(ResourceData)).scalar() == 0


def test_properties_encrypted_at_rest_when_configured(tx: Tx) -> None:
    from kiln.conf import CONF
    from kiln.db import events
    from kiln.db.models import Event, Resource
    from kiln.db.records import EventQuery, NewEvent

    assert CONF.encrypt_parameters_and_properties      # Kiln's default
    st = new_stack(tx)
    props = {"password": "pa55-in-props", "length": 8}
    with tx() as s:
        (r,) = resources.create_resources(s, [NewResource(st.id, st.id, "r", "T",
                                                          properties_data=props)])
        (r2,) = resources.create_resources(s, [NewResource(st.id, st.id, "r2", "T")])
        resources.update_resource(s, r2.id, {"properties_data": {"token": "tok-secret"}})
        events.add_events(s, [NewEvent(st.id, "r", "T", "CREATE", "COMPLETE",
                                       resource_properties=props)])
    with tx() as s:
        raw = s.execute(sa.select(Resource.properties_data).order_by(Resource.id)).all()
        assert "pa55" not in str(raw) and "tok-secret" not in str(raw)
        raw_ev = s.execute(sa.select(Event.resource_properties)).scalar_one()
        assert "pa55" not in str(raw_ev)
        assert resources.get_resource(s, r.id).properties_data == props  # type: ignore[union-attr]
        assert resources.get_resource(s, r2.id).properties_data == {  # type: ignore[union-attr]
            "token": "tok-secret"}
        (ev,) = events.list_events(s, EventQuery([st.id]))
        assert ev.resource_properties == props


def test_properties_stored_plain_when_encryption_is_off(tx: Tx) -> None:
    from kiln.conf import CONF
    from kiln.db.models import Resource

    st = new_stack(tx)
    CONF.set_override("encrypt_parameters_and_properties", False)
    try:
        with tx() as s:
            (r,) = resources.create_resources(s, [NewResource(st.id, st.id, "r", "T",
                                                              properties_data={"a": "b"})])
    finally:
        CONF.clear_override("encrypt_parameters_and_properties")
    with tx() as s:
        raw = s.execute(sa.select(Resource.properties_data)).scalar_one()
        assert raw == {"a": "b"}
        assert resources.get_resource(s, r.id).properties_data == {"a": "b"}  # type: ignore[union-attr]


def test_queued_updates_merge_in_order_and_are_seen_by_reads(tx: Tx) -> None:
    st = new_stack(tx)
    with tx() as s:
        a, b = resources.create_resources(s, [NewResource(st.id, st.id, "a", "T"),
                                              NewResource(st.id, st.id, "b", "T")])
    with tx() as s:
        resources.queue_resource_update(s, a.id, {"action": "CREATE", "status": "IN_PROGRESS"})
        resources.queue_resource_update(s, b.id, {"status": "FAILED", "status_reason": "x"})
        resources.queue_resource_update(s, a.id, {"status": "COMPLETE",
                                                  "physical_resource_id": "phy-a"})
        got = resources.get_resource(s, a.id)       # a read flushes what is queued
        assert got is not None
        assert (got.action, got.status, got.physical_resource_id) == (
            "CREATE", "COMPLETE", "phy-a")
        resources.queue_resource_update(s, b.id, {"status": "COMPLETE"})
    with tx() as s:                                  # the commit flushed the rest
        got_b = resources.get_resource(s, b.id)
        assert got_b is not None and (got_b.status, got_b.status_reason) == ("COMPLETE", "x")
    try:
        with tx() as s:
            resources.queue_resource_update(s, b.id, {"status": "DELETED-NEVER"})
            raise RuntimeError("abort")
    except RuntimeError:
        pass
    with tx() as s:
        got_b = resources.get_resource(s, b.id)
        assert got_b is not None and got_b.status == "COMPLETE"


def test_hot_path_insert_returns_ids_and_encrypts_properties(tx: Tx) -> None:
    from kiln.db.models import Resource

    st = new_stack(tx)
    props = {"password": "pa55-bulk", "length": 8}
    with tx() as s:
        ids = resources.insert_resources(s, [
            NewResource(st.id, st.id, "a", "T", properties_data=props),
            NewResource(st.id, st.id, "b", "T")])
    assert set(ids) == {"a", "b"}
    with tx() as s:
        raw = s.execute(sa.select(Resource.properties_data)).all()
        assert "pa55" not in str(raw)
        stored = resources.get_resource(s, ids["a"][0])
        assert stored is not None and stored.name == "a"
        assert stored.uuid == ids["a"][1] and stored.properties_data == props


def test_insert_of_many_rows_returns_every_one(tx: Tx) -> None:
    """More rows than one INSERT statement takes, each with its own id and data."""
    st = new_stack(tx)
    n = 1234
    with tx() as s:
        ids = resources.insert_resources(s, [
            NewResource(st.id, st.id, f"r{i}", "T", properties_data={"i": i},
                        requires=[f"r{i - 1}"] if i else [])
            for i in range(n)])
    assert len(ids) == n and len({rid for rid, _, _ in ids.values()}) == n
    with tx() as s:
        listed = resources.list_resources(s, st.id)
    assert [r.name for r in listed] == [f"r{i}" for i in range(n)]
    assert [r.properties_data for r in listed] == [{"i": i} for i in range(n)]
    assert all(ids[r.name][:2] == (r.id, r.uuid) for r in listed)


def test_rows_with_equal_properties_read_back_alike_and_apart(tx: Tx) -> None:
    """Equal stored properties decode to equal values; each row keeps its own data
    and its own properties when they differ."""
    st = new_stack(tx)
    same = {"salt": "a", "length": 32, "character_classes": [{"class": "digits"}]}
    with tx() as s:
        made = resources.insert_resources(s, [
            NewResource(st.id, st.id, name, "T", properties_data=props)
            for name, props in (("a", same), ("b", dict(same)), ("c", {"salt": "c"}),
                                ("d", None))])
        resources.set_resource_data(s, made["a"][0], "value", "va")
        resources.set_resource_data(s, made["b"][0], "value", "vb", redact=True)
    with tx() as s:
        got = {r.name: r for r in resources.list_resources(s, st.id)}
    assert got["a"].properties_data == got["b"].properties_data == same
    assert got["c"].properties_data == {"salt": "c"}
    assert got["d"].properties_data is None
    assert (got["a"].data, got["b"].data, got["c"].data) == (
        {"value": "va"}, {"value": "vb"}, {})


def test_data_of_many_resources_written_in_order(tx: Tx) -> None:
    from kiln.db.records import ResourceDataChange as Change

    st = new_stack(tx)
    with tx() as s:
        made = resources.insert_resources(s, [NewResource(st.id, st.id, n, "T")
                                              for n in ("a", "b")])
        a, b = made["a"][0], made["b"][0]
        resources.set_resource_data(s, a, "kept", "1")
        resources.set_resource_data(s, a, "dropped", "x")
        resources.set_resource_data(s, b, "readded", "old")
    with tx() as s:
        resources.write_resource_data(s, [
            Change(a, new={"value": "v1", "brief": "t"}, changed={"kept": "2"},
                   gone=["dropped"]),
            Change(b, gone=["readded"]),
            Change(a, changed={"value": "v2"}, gone=["brief"]),
            Change(b, new={"readded": "new", "plain": "p"}),
        ])
    with tx() as s:
        assert resources.get_resource_data(s, a) == {"kept": "2", "value": "v2"}
        assert resources.get_resource_data(s, b) == {"readded": "new", "plain": "p"}
        resources.write_resource_data(s, [])


def test_batched_updates_encrypt_each_distinct_properties_document_once(tx: Tx) -> None:
    from kiln.db.models import Resource

    st = new_stack(tx)
    same = {"password": "pa55", "length": 8}
    other = {"password": "0ther", "length": 9}
    with tx() as s:
        made = resources.create_resources(s, [NewResource(st.id, st.id, n, "T")
                                              for n in ("a", "b", "c")])
        ids = {r.name: r.id for r in made}
        resources.update_resources(s, [(ids["a"], {"properties_data": same}),
                                       (ids["b"], {"properties_data": dict(same)}),
                                       (ids["c"], {"properties_data": other})])
    with tx() as s:
        stored = dict(s.execute(sa.select(Resource.name, Resource.properties_data)).all())
        listed = {r.name: r.properties_data for r in resources.list_resources(s, st.id)}
    assert "pa55" not in str(stored) and "0ther" not in str(stored)
    assert stored["a"] == stored["b"] != stored["c"]
    assert listed == {"a": same, "b": same, "c": other}


def _traced(s: sa.orm.Session) -> list[str]:
    """Every statement SQLite runs on the session's connection from now on."""
    seen: list[str] = []
    s.connection().connection.driver_connection.set_trace_callback(seen.append)
    return seen


def test_a_replacement_row_is_one_insert_and_the_old_row_points_at_it(tx: Tx) -> None:
    """What an update stores per replaced resource: the new row (read back as
    ``insert_resources`` stores rows) and the old row's ``replaced_by``, seen by a read
    in the same transaction and after it. On SQLite the row is one INSERT, no read-back
    of the row, and the old row's change waits for the batch's merged UPDATE (it was an
    INSERT, a SELECT by uuid and an UPDATE, two thirds of a replace-all update's
    writer time)."""
    st = new_stack(tx)
    with tx() as s:
        old = resources.insert_resources(s, [NewResource(st.id, st.id, "r", "T",
                                                         requires=["x"])])["r"]
    with tx() as s:
        sqlite = s.connection().dialect.name == "sqlite"
        seen = _traced(s) if sqlite else []
        rid, ruuid, created = resources.insert_replacement(
            s, NewResource(st.id, st.id, "r", "T", requires=["x"], replaces=old[0]), old[0])
        if sqlite:
            assert [q.split()[0] for q in seen] == ["INSERT"]
        assert rid > old[0]
        current = resources.get_resource_by_name(s, st.id, "r")
        assert current is not None and current.id == rid
    with tx() as s:
        rows = {r.id: r for r in resources.list_resources(s, st.id)}
        assert rows[old[0]].replaced_by == rid and rows[old[0]].updated_at is not None
        new = rows[rid]
        assert (new.uuid, new.created_at, new.replaces) == (ruuid, created, old[0])
        assert (new.name, new.type, new.requires, new.action, new.status) == (
            "r", "T", ["x"], "INIT", "COMPLETE")


def test_a_deleted_row_takes_its_data_and_leaves_no_copy_in_the_session(tx: Tx) -> None:
    from kiln.db.models import Resource

    st = new_stack(tx)
    with tx() as s:
        a, b = resources.create_resources(s, [NewResource(st.id, st.id, "a", "T"),
                                              NewResource(st.id, st.id, "b", "T")])
        for rid in (a.id, b.id):
            resources.set_resource_data(s, rid, "k", "v")
    with tx() as s:
        loaded = s.get(Resource, a.id)
        assert loaded is not None
        resources.queue_resource_update(s, a.id, {"status_reason": "queued first"})
        resources.delete_resource(s, a.id)
        assert s.get(Resource, a.id) is None
        assert [r.id for r in resources.list_resources(s, st.id)] == [b.id]
    with tx() as s:
        assert resources.get_resource(s, a.id) is None
        assert resources.get_resource_data(s, a.id) == {}
        assert resources.get_resource_data(s, b.id) == {"k": "v"}


def test_many_replacement_rows_at_once_each_point_back(tx: Tx) -> None:
    """A replace-all update's rows asked for in one turn (issue 26): one INSERT of all
    (sliced by 500), ids read back by uuid; each result matches its own row, in order,
    and each old row is marked replaced by its own replacement."""
    st = new_stack(tx)
    names = [f"r{i}" for i in range(3)]
    with tx() as s:
        old = resources.insert_resources(s, [NewResource(st.id, st.id, n, "T")
                                             for n in names])
    with tx() as s:
        made = resources.insert_replacements(s, [
            (NewResource(st.id, st.id, n, "T2", requires=["x"], replaces=old[n][0]),
             old[n][0]) for n in names])
    assert len({rid for rid, _, _ in made}) == 3
    with tx() as s:
        rows = {r.id: r for r in resources.list_resources(s, st.id)}
    for n, (rid, ruuid, created) in zip(names, made, strict=True):
        new = rows[rid]
        assert (new.name, new.type, new.uuid, new.replaces, new.created_at) == (
            n, "T2", ruuid, old[n][0], created)
        assert rows[old[n][0]].replaced_by == rid


def test_rows_sharing_one_document_store_it_in_each(tx: Tx) -> None:
    """Rows of one statement holding the very same properties object (a resource's
    transitions, resources declared alike) convert it once and each reads it back."""
    from kiln.db import events
    from kiln.db.records import EventQuery, NewEvent

    st = new_stack(tx)
    props = {"salt": "s", "nested": [{"a": 1}]}
    with tx() as s:
        made = resources.insert_resources(s, [NewResource(st.id, st.id, n, "T")
                                              for n in ("a", "b")])
        resources.update_resources(s, [(rid, {"properties_data": props})
                                       for rid, _, _ in made.values()])
        events.add_events(s, [NewEvent(st.id, n, "T", "CREATE", "COMPLETE",
                                       resource_properties=props) for n in ("a", "b")])
    with tx() as s:
        assert [r.properties_data for r in resources.list_resources(s, st.id)] == [props] * 2
        assert [e.resource_properties
                for e in events.list_events(s, EventQuery([st.id]))] == [props] * 2
