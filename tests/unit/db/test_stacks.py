"""Stacks: creation, lookup, Heat's GET /stacks filter/sort/pagination semantics."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest
import sqlalchemy as sa

from kiln import errors
from kiln.db import resources, stacks
from kiln.db.models import RawTemplate, Stack
from kiln.db.records import NewResource, StackQuery
from tests.unit.db.support import TEMPLATE, Tx, new_stack


def test_create_then_get_by_id_name_and_identify(tx: Tx) -> None:
    st = new_stack(tx, "web", "p1", username="alice", tags=["b", "a"], timeout=30,
                   disable_rollback=False)
    with tx() as s:
        got = stacks.get_stack(s, st.id)
        assert got is not None
        assert (got.name, got.project_id, got.username) == ("web", "p1", "alice")
        assert got.tags == ("b", "a")   # the user's order
        assert (got.timeout, got.disable_rollback) == (30, False)
        assert (got.action, got.status) == ("CREATE", "IN_PROGRESS")
        assert got.root_stack_id == st.id and got.owner_id is None
        assert stacks.get_stack_by_name(s, "p1", "web") == got
        assert stacks.find_stack(s, "p1", "web") == got
        assert stacks.find_stack(s, "p1", st.id) == got
        # another project sees neither the name nor the id
        assert stacks.find_stack(s, "p2", "web") is None
        assert stacks.get_stack(s, st.id, project_id="p2") is None
        assert stacks.get_raw_template(s, got.raw_template_id).template == TEMPLATE


def test_names_are_unique_per_project_among_live_stacks(tx: Tx) -> None:
    first = new_stack(tx, "dup", "p1")
    with pytest.raises(errors.StackExists, match=r"The Stack \(dup\) already exists."):
        new_stack(tx, "dup", "p1")
    new_stack(tx, "dup", "p2")           # other project: fine
    with tx() as s:
        stacks.soft_delete_stack(s, first.id)
    again = new_stack(tx, "dup", "p1")   # the deleted one no longer holds the name
    with tx() as s:
        assert stacks.get_stack_by_name(s, "p1", "dup") == stacks.get_stack(s, again.id)


def test_nested_stack_inherits_root_and_is_hidden_from_default_list(tx: Tx) -> None:
    root = new_stack(tx, "root")
    child = new_stack(tx, "root-child", owner_id=root.id, nested_depth=1,
                      parent_resource_name="child")
    grandchild = new_stack(tx, "root-child-gc", owner_id=child.id, nested_depth=2)
    assert child.root_stack_id == root.id and grandchild.root_stack_id == root.id
    with tx() as s:
        assert [x.id for x in stacks.list_stacks(s, StackQuery(project_id="p1"))] == [root.id]
        nested = stacks.list_stacks(s, StackQuery(project_id="p1", show_nested=True))
        assert {x.id for x in nested} == {root.id, child.id, grandchild.id}
        assert [x.id for x in stacks.list_child_stacks(s, root.id)] == [child.id]
        assert [x.id for x in stacks.list_tree_stacks(s, root.id)] == [
            root.id, child.id, grandchild.id]
        # Heat's max_stacks_per_tenant counts top-level stacks only
        assert stacks.count_project_stacks(s, "p1") == 1
        assert stacks.count_project_stacks(s, "p1", include_nested=True) == 3


def _set_created(tx: Tx, stack_id: str, when: dt.datetime,
                 updated: dt.datetime | None = None) -> None:
    with tx() as s:
        s.execute(sa.update(Stack).where(Stack.id == stack_id)
                  .values(created_at=when, updated_at=updated))


def _names(tx: Tx, **kw: Any) -> list[str]:
    """Names listed, in order; the slim listing (GET /stacks) must list exactly the same
    stacks in the same order, with the same shown fields, as the full records."""
    with tx() as s:
        q = StackQuery(project_id="p1", **kw)
        full = stacks.list_stacks(s, q)
        slim = stacks.list_stack_summaries(s, q)
    shown = [c.key for c in stacks.SUMMARY_COLUMNS]
    assert [dict(zip([*shown, "tags"], row, strict=True)) for row in slim] == [
        {**{k: getattr(rec, k) for k in shown}, "tags": rec.tags} for rec in full]
    return [x.name for x in full]


@pytest.fixture
def five(tx: Tx) -> dict[str, str]:
    """Five stacks created a minute apart: a (oldest) ... e (newest)."""
    base = dt.datetime(2024, 1, 1, 12, 0, 0)
    ids = {}
    statuses = {"a": "COMPLETE", "b": "FAILED", "c": "COMPLETE", "d": "IN_PROGRESS",
                "e": "COMPLETE"}
    for i, name in enumerate("acebd"):   # inserted out of order on purpose
        st = new_stack(tx, name, status=statuses[name], username=f"u{i % 2}")
        ids[name] = st.id
    for name in "abcde":
        offset = "abcde".index(name)
        updated = None if name in "ac" else base + dt.timedelta(hours=5 - offset)
        _set_created(tx, ids[name], base + dt.timedelta(minutes=offset), updated)
    return ids


def test_default_order_is_newest_first(tx: Tx, five: dict[str, str]) -> None:
    assert _names(tx) == ["e", "d", "c", "b", "a"]
    assert _names(tx, sort_dir="asc") == ["a", "b", "c", "d", "e"]


def test_sort_keys_default_ascending_and_unknown_keys_ignored(tx: Tx,
                                                               five: dict[str, str]) -> None:
    assert _names(tx, sort_keys=["stack_name"]) == ["a", "b", "c", "d", "e"]
    assert _names(tx, sort_keys=["stack_name"], sort_dir="desc") == ["e", "d", "c", "b", "a"]
    assert _names(tx, sort_keys=["bogus"]) == ["e", "d", "c", "b", "a"]
    # ties on status are broken by the next key
    assert _names(tx, sort_keys=["stack_status", "stack_name"]) == ["a", "c", "e", "b", "d"]


def test_sort_by_updated_time_puts_never_updated_first(tx: Tx, five: dict[str, str]) -> None:
    # b, d, e were updated (e earliest: base+0h... b latest); a, c never (NULL)
    asc = _names(tx, sort_keys=["updated_time"])
    assert asc[:2] in (["a", "c"], ["c", "a"])
    assert asc[2:] == ["e", "d", "b"]
    desc = _names(tx, sort_keys=["updated_time"], sort_dir="desc")
    assert desc[:3] == ["b", "d", "e"]


@pytest.mark.parametrize("kw", [
    {},
    {"sort_dir": "asc"},
    {"sort_keys": ["stack_name"]},
    {"sort_keys": ["updated_time"]},
    {"sort_keys": ["updated_time"], "sort_dir": "desc"},
    {"sort_keys": ["stack_status"], "sort_dir": "desc"},
])
def test_marker_pages_walk_the_whole_list_once(tx: Tx, five: dict[str, str],
                                                kw: dict[str, Any]) -> None:
    full = _names(tx, **kw)
    pages: list[str] = []
    marker = None
    while True:
        page = _names(tx, limit=2, marker=marker, **kw)
        if not page:
            break
        pages += page
        marker = five[page[-1]]
    assert pages == full


def test_filters_match_exactly_or_any_of_a_list(tx: Tx, five: dict[str, str]) -> None:
    assert sorted(_names(tx, filters={"status": "COMPLETE"})) == ["a", "c", "e"]
    assert sorted(_names(tx, filters={"status": ["FAILED", "IN_PROGRESS"]})) == ["b", "d"]
    assert _names(tx, filters={"name": "c"}) == ["c"]
    assert _names(tx, filters={"id": five["d"]}) == ["d"]
    assert sorted(_names(tx, filters={"username": "u1", "status": "COMPLETE"})) == ["c"]
    assert _names(tx, filters={"action": "DELETE"}) == []
    with tx() as s:
        q = StackQuery(project_id="p1", filters={"status": "COMPLETE"}, limit=1)
        assert stacks.count_stacks(s, q) == 3   # count ignores limit


def test_tag_filters(tx: Tx) -> None:
    new_stack(tx, "xy", tags=["x", "y"])
    new_stack(tx, "x", tags=["x"])
    new_stack(tx, "y", tags=["y"])
    new_stack(tx, "none")

    def names(**kw: Any) -> list[str]:
        return sorted(_names(tx, **kw))

    assert names(tags=["x", "y"]) == ["xy"]
    assert names(tags_any=["x", "y"]) == ["x", "xy", "y"]
    assert names(not_tags=["x", "y"]) == ["none", "x", "y"]
    assert names(not_tags_any=["x", "y"]) == ["none"]
    assert names(not_tags_any=["y"]) == ["none", "x"]


def test_hidden_tags_hide_unless_show_hidden(tx: Tx) -> None:
    new_stack(tx, "visible", tags=["ordinary"])
    new_stack(tx, "hidden", tags=["data-processing-cluster"])
    assert _names(tx, hidden_tags=["data-processing-cluster"]) == ["visible"]
    assert sorted(_names(tx, hidden_tags=["data-processing-cluster"], show_hidden=True)) == [
        "hidden", "visible"]


def test_tenant_scoping_and_global_listing(tx: Tx) -> None:
    new_stack(tx, "mine", "p1")
    new_stack(tx, "theirs", "p2")
    assert _names(tx) == ["mine"]
    with tx() as s:
        everything = stacks.list_stacks(s, StackQuery(project_id=None))
        assert sorted(x.name for x in everything) == ["mine", "theirs"]
        assert stacks.count_stacks(s, StackQuery(project_id=None)) == 2


def test_soft_delete_keeps_row_for_show_deleted_and_drops_resources(tx: Tx) -> None:
    st = new_stack(tx, "gone")
    with tx() as s:
        resources.create_resources(s, [NewResource(st.id, st.id, "r", "OS::Heat::None")])
        stacks.update_stack(s, st.id, {"action": "DELETE", "status": "COMPLETE"})
        stacks.soft_delete_stack(s, st.id)
    with tx() as s:
        assert stacks.get_stack(s, st.id) is None
        deleted = stacks.get_stack(s, st.id, show_deleted=True)
        assert deleted is not None and deleted.deleted_at is not None
        assert (deleted.action, deleted.status) == ("DELETE", "COMPLETE")
        assert resources.list_resources(s, st.id) == []
        assert stacks.count_project_stacks(s, "p1") == 0
    assert _names(tx) == []
    assert _names(tx, show_deleted=True) == ["gone"]
    with tx() as s, pytest.raises(errors.EntityNotFound):
        stacks.soft_delete_stack(s, "no-such-stack")


def test_update_stack_is_conditional_on_traversal_and_lock(tx: Tx) -> None:
    st = new_stack(tx, "t", current_traversal="trav-1", engine_id="eng-A")
    with tx() as s:
        assert not stacks.update_stack(s, st.id, {"status": "COMPLETE"},
                                       expected_traversal="trav-0")
        assert not stacks.update_stack(s, st.id, {"status": "COMPLETE"}, engine_id="eng-B")
        assert stacks.update_stack(s, st.id, {"status": "COMPLETE", "status_reason": "done"},
                                   expected_traversal="trav-1", engine_id="eng-A")
    with tx() as s:
        got = stacks.get_stack(s, st.id)
        assert got is not None and (got.status, got.status_reason) == ("COMPLETE", "done")
        with pytest.raises(errors.EntityNotFound):
            stacks.update_stack(s, "missing", {"status": "FAILED"})


def test_tags_replaced(tx: Tx) -> None:
    st = new_stack(tx, "t", tags=["a"])
    with tx() as s:
        stacks.set_stack_tags(s, st.id, ["c", "b"])
    with tx() as s:
        got = stacks.get_stack(s, st.id)
        assert got is not None and got.tags == ("c", "b")


def test_hidden_parameters_encrypted_at_rest_and_plain_in_records(tx: Tx) -> None:
    env = {"parameters": {"password": "s3cret-value", "flavor": "m1.small",
                          "keys": ["first-key-plaintext", "second-key-plaintext"]}}
    st = new_stack(tx, "enc", environment=env, hidden_params=["password", "keys"])
    with tx() as s:
        raw = s.execute(sa.select(RawTemplate.environment)
                        .where(RawTemplate.id == st.raw_template_id)).scalar_one()
        assert "s3cret-value" not in str(raw) and "key-plaintext" not in str(raw)
        assert raw["parameters"]["flavor"] == "m1.small"
        assert sorted(raw["encrypted_param_names"]) == ["keys", "password"]
        rec = stacks.get_raw_template(s, st.raw_template_id)
        assert rec.environment["parameters"] == env["parameters"]


def test_raw_templates_for_update_and_rollback(tx: Tx) -> None:
    st = new_stack(tx, "upd")
    new_tmpl = {"heat_template_version": "2018-08-31", "resources": {"r": {"type": "X"}}}
    with tx() as s:
        new_id = stacks.create_raw_template(s, new_tmpl, {}, {"f.yaml": "x"})
        stacks.update_stack(s, st.id, {"raw_template_id": new_id,
                                       "prev_raw_template_id": st.raw_template_id})
    with tx() as s:
        got = stacks.get_stack(s, st.id)
        assert got is not None and got.prev_raw_template_id == st.raw_template_id
        cur = stacks.get_raw_template(s, got.raw_template_id)
        assert cur.template == new_tmpl and cur.files == {"f.yaml": "x"}
        assert stacks.get_raw_template(s, st.raw_template_id).template == TEMPLATE
        with pytest.raises(errors.EntityNotFound):
            stacks.get_raw_template(s, 987654)


def test_stack_user_project_sees_the_stack_by_name_and_id(tx: Tx) -> None:
    # agents in servers authenticate in the stack's own "stack user" project
    st = new_stack(tx, "agented", "p1", stack_user_project_id="sup-1")
    with tx() as s:
        assert stacks.get_stack(s, st.id, project_id="sup-1") is not None
        by_name = stacks.get_stack_by_name(s, "sup-1", "agented")
        assert by_name is not None and by_name.id == st.id


def test_by_name_with_show_deleted_prefers_the_live_stack(tx: Tx) -> None:
    old = new_stack(tx, "again")
    with tx() as s:
        stacks.soft_delete_stack(s, old.id)
        assert stacks.get_stack_by_name(s, "p1", "again") is None
        found = stacks.get_stack_by_name(s, "p1", "again", show_deleted=True)
        assert found is not None and found.id == old.id
    live = new_stack(tx, "again")
    with tx() as s:
        found = stacks.get_stack_by_name(s, "p1", "again", show_deleted=True)
        assert found is not None and found.id == live.id


def test_hidden_stack_tags_option_applies_by_default(tx: Tx) -> None:
    from kiln.conf import CONF

    new_stack(tx, "plain")
    new_stack(tx, "secret", tags=["hide_me"])
    assert sorted(_names(tx)) == ["plain", "secret"]     # Heat's default hides nothing
    CONF.set_override("hidden_stack_tags", ["hide_me", "me_too"])
    try:
        assert _names(tx) == ["plain"]
        assert sorted(_names(tx, show_hidden=True)) == ["plain", "secret"]
        with tx() as s:
            assert stacks.count_stacks(s, StackQuery(project_id="p1")) == 1
    finally:
        CONF.clear_override("hidden_stack_tags")


def test_heat_filter_names_are_understood(tx: Tx) -> None:
    new_stack(tx, "mine", "p1")
    assert _names(tx, filters={"tenant": "p1"}) == ["mine"]
    assert _names(tx, filters={"tenant": "p2"}) == []


def test_purge_deleted_removes_old_deleted_stacks_with_their_rows(tx: Tx) -> None:
    from kiln.db import events, snapshots
    from kiln.db.models import Event, Snapshot, StackTag
    from kiln.db.records import NewEvent

    old = new_stack(tx, "old", tags=["t"])
    recent = new_stack(tx, "recent")
    live = new_stack(tx, "live")
    with tx() as s:
        events.add_events(s, [NewEvent(old.id, "old", "OS::Heat::Stack", "DELETE",
                                       "COMPLETE")])
        snapshots.create_snapshot(s, old.id, "p1", "snap")
        stacks.soft_delete_stack(s, old.id)
        stacks.soft_delete_stack(s, recent.id)
        s.execute(sa.update(Stack).where(Stack.id == old.id)
                  .values(deleted_at=dt.datetime(2020, 1, 1)))
    with tx() as s:
        assert stacks.purge_deleted_stacks(s, dt.timedelta(days=1)) == 1
    with tx() as s:
        assert stacks.get_stack(s, old.id, show_deleted=True) is None
        assert stacks.get_stack(s, recent.id, show_deleted=True) is not None
        assert stacks.get_stack(s, live.id) is not None
        for model in (Event, Snapshot, StackTag):
            assert s.execute(sa.select(sa.func.count()).select_from(model)).scalar() == 0
        assert s.get(RawTemplate, old.raw_template_id) is None
        assert s.get(RawTemplate, live.raw_template_id) is not None
        assert stacks.purge_deleted_stacks(s, dt.timedelta(days=1)) == 0


def test_slim_listing_carries_each_listed_stacks_tags_in_given_order(tx: Tx) -> None:
    base = dt.datetime(2024, 1, 1, 12, 0, 0)
    for i, (name, tags) in enumerate([("old", ["z", "a"]), ("mid", []),
                                      ("new", ["b", "c", "a"])]):
        _set_created(tx, new_stack(tx, name, tags=tags).id, base + dt.timedelta(minutes=i))
    with tx() as s:
        first_two = stacks.list_stack_summaries(s, StackQuery(project_id="p1", limit=2))
        everything = stacks.list_stack_summaries(s, StackQuery(project_id="p1"))
    assert [(row[1], row[-1]) for row in first_two] == [("new", ("b", "c", "a")),
                                                         ("mid", ())]
    assert [(row[1], row[-1]) for row in everything] == [
        ("new", ("b", "c", "a")), ("mid", ()), ("old", ("z", "a"))]


def test_the_largest_integer_the_api_accepts_fits_every_backend(tx: Tx) -> None:
    # the API refuses larger limits and timeouts with a 400 (kiln.api.params.MAX_INT),
    # so the database must take this one as a page size and as a stored timeout
    from kiln.api.params import MAX_INT

    st = new_stack(tx, "big", timeout=MAX_INT)
    with tx() as s:
        listed = stacks.list_stacks(s, StackQuery(project_id="p1", limit=MAX_INT))
        assert [r.id for r in listed] == [st.id]
        assert stacks.get_stack(s, st.id).timeout == MAX_INT
