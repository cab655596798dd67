"""The engine's store against a real SQLite database, without an engine: what each room
writes, and that the writes an action makes together are still one commit of the
facade's writer (``Database.commits`` counts them)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from kiln.db.facade import Database, open_database
from kiln.db.records import NewEvent, NewResource, NewStack
from kiln.engine.store import Store

STACK = "0b5e4c5e-7f1a-4c43-9a55-6f0e8e1d7a11"


@pytest.fixture
async def db(sqlite_url: str) -> AsyncIterator[Database]:
    database = await open_database(sqlite_url)
    yield database
    await database.close()


def stack_event(status: str = "IN_PROGRESS", action: str = "CREATE") -> NewEvent:
    return NewEvent(stack_id=STACK, resource_name="s", resource_type="OS::Heat::Stack",
                    resource_action=action, resource_status=status,
                    physical_resource_id=STACK)


def resource(name: str, replaces: int | None = None) -> NewResource:
    return NewResource(stack_id=STACK, root_stack_id=STACK, name=name,
                       type="OS::Heat::None", replaces=replaces)


async def admitted(store: Store, *names: str, engine_id: str = "e1") -> dict[str, int]:
    new = NewStack(name="s", project_id="p", template={"heat_template_version": "2018-08-31"},
                   id=STACK, engine_id=engine_id)
    _, created = await store.stacks.admit(new, [resource(n) for n in names], stack_event())
    return {name: row[0] for name, row in created.items()}


async def test_admit_is_one_commit_and_load_reads_it_back(db: Database) -> None:
    store = Store(db)
    commits = db.commits
    ids = await admitted(store, "a", "b")
    assert db.commits == commits + 1
    assert (await store.stacks.admission("p", "s", count_stacks=True)) == (True, 1)
    assert (await store.stacks.admission("p", "t", count_stacks=False)) == (False, 0)

    rec, raw, rows = await store.stacks.load(STACK)
    assert (rec.id, rec.engine_id) == (STACK, "e1")
    assert raw.template == {"heat_template_version": "2018-08-31"}
    assert {r.name: r.id for r in rows} == ids
    # a template the engine has parsed already comes without its body
    _, bare, _ = await store.stacks.load(STACK, parsed={rec.raw_template_id})
    assert not bare.template
    assert (await store.stacks.raw_template(bare.id)).template == raw.template


async def test_a_replacement_and_the_old_rows_mark_are_one_commit(db: Database) -> None:
    store = Store(db)
    old = (await admitted(store, "a"))["a"]
    commits = db.commits
    new_id, uuid, _ = await store.resources.add_replacement(resource("a", replaces=old), old)
    assert db.commits == commits + 1
    rows = {r.id: r for r in await store.resources.of_stack(STACK)}
    assert rows[old].replaced_by == new_id
    assert rows[new_id].uuid == uuid
    # a rollback's restored row and an update's fresh rows: one commit too
    commits = db.commits
    created = await store.resources.add([resource("b")], restored=[old])
    assert db.commits == commits + 1
    rows = {r.id: r for r in await store.resources.of_stack(STACK)}
    assert rows[old].replaced_by is None
    assert rows[created["b"][0]].name == "b"


async def test_replacements_and_removals_of_one_turn_are_one_write_each(
        db: Database) -> None:
    """A replace-all update asks for a replacement row, then a removal, per resource,
    nearly all in the same turns of the event loop: each turn's are ONE write job of the
    writer (they were one job each, most a commit of their own), and every caller still
    gets its own row back, committed."""
    import asyncio

    store = Store(db)
    old = await admitted(store, *(f"r{i}" for i in range(20)))
    writes = db.writes
    made = await asyncio.gather(*(store.resources.add_replacement(
        resource(name, replaces=rid), rid) for name, rid in old.items()))
    assert db.writes == writes + 1
    rows = {r.id: r for r in await store.resources.of_stack(STACK)}
    for (name, rid), (new_id, uuid, _) in zip(old.items(), made, strict=True):
        assert (rows[new_id].name, rows[new_id].uuid, rows[new_id].replaces) == (
            name, uuid, rid)
        assert rows[rid].replaced_by == new_id
    writes = db.writes
    await asyncio.gather(*(store.resources.remove(rid) for rid in old.values()))
    assert db.writes == writes + 1
    left = await store.resources.of_stack(STACK)
    assert sorted(r.id for r in left) == sorted(new_id for new_id, _, _ in made)


async def test_side_state_and_its_event_are_one_commit(db: Database) -> None:
    store = Store(db)
    rid = (await admitted(store, "a"))["a"]
    commits = db.commits
    await store.resources.save_side_state(rid, {"pre-create": "True", "k": "v"}, [],
                                          {"m": 1}, None)
    await store.resources.save_side_state(rid, {}, ["pre-create"], None, None)
    assert db.commits == commits + 2
    assert await store.resources.data(rid) == {"k": "v"}
    row = await store.resources.by_name(STACK, "a")
    assert row is not None and row.metadata == {"m": 1}


async def test_the_row_lock_is_held_by_one_engine(db: Database) -> None:
    store = Store(db)
    await admitted(store, engine_id="e1")    # stored already locked by its engine
    locks = store.locks
    assert await locks.lock_stack(STACK, "e1")          # already its own
    assert not await locks.lock_stack(STACK, "e2")
    assert not await locks.unlock_stack(STACK, "e2")    # not the holder's: no effect
    assert await locks.unlock_stack(STACK, "e1")
    assert await locks.lock_stack(STACK, "e2")


async def test_a_finished_delete_is_one_commit(db: Database) -> None:
    store = Store(db)
    await admitted(store, "a")
    commits = db.commits
    await store.stacks.mark_deleted(STACK, stack_event("COMPLETE", "DELETE"))
    assert db.commits == commits + 1
    assert await store.stacks.get(STACK) is None
    gone = await store.stacks.get(STACK, show_deleted=True)
    assert gone is not None and gone.deleted_at is not None
    assert (gone.action, gone.status) == ("DELETE", "COMPLETE")
