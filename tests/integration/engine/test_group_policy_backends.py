"""ResourceGroup ``update_policy`` (batch_create, rolling_update) through EngineService,
once per database (SQLite, PostgreSQL, MariaDB).

Expected behaviour is what the live Heat 27 did with the same templates: the child stack
is updated once per batch; existing members get the new definition from the highest
index down; ``min_in_service`` first adds members and removes the surplus at the end; a
batched create starts from an empty child; ``pause_time`` separates batches and never
follows the last one; pauses that reach the stack timeout fail with Heat's ValueError.
Pauses are measured on the stored event timestamps (microseconds), never by the test
sleeping; a cancel or delete during a long pause must end the action at once.
"""

from __future__ import annotations

import asyncio
import datetime as dt
from collections.abc import Awaitable, Callable
from typing import Any, NamedTuple

from kiln.conf import CONF
from kiln.db import events as db_events
from kiln.db.records import EventQuery
from kiln.engine.service import EngineService, RequestContext

from .actions import LONG, PROMPT, create, hot, outputs, state, update

DONE_UPDATE = "Stack UPDATE completed successfully"
TIMEOUT_REASON = ("ValueError: resources.grp: The current update policy will result in "
                  "stack update timeout.")


def group(value: str, count: int, policy: dict[str, Any]) -> dict[str, Any]:
    return hot({"grp": {
        "type": "OS::Heat::ResourceGroup", "update_policy": policy,
        "properties": {"count": count, "resource_def": {
            "type": "OS::Heat::TestResource", "properties": {"value": value}}}}},
        outputs={"values": {"value": {"get_attr": ["grp", "output"]}},
                 "names": {"value": {"get_attr": ["grp", "refs_map"]}}})


def rolling(**policy: Any) -> dict[str, Any]:
    return {"rolling_update": policy}


class Ev(NamedTuple):
    name: str
    step: str          # ACTION_STATUS
    at: dt.datetime
    is_stack: bool     # the child stack's own event


class Child:
    """The events of a group's child stack, split at the child's own actions."""

    def __init__(self, events: list[Ev]) -> None:
        self.events = events

    def actions(self) -> list[tuple[str, list[Ev]]]:
        """(the child's ACTION, the member events inside it) for each child action."""
        found: list[tuple[str, list[Ev]]] = []
        for ev in self.events:
            if ev.is_stack and ev.step.endswith("_IN_PROGRESS"):
                found.append((ev.step.split("_")[0], []))
            elif not ev.is_stack:
                found[-1][1].append(ev)
        return found

    def batches(self) -> list[set[tuple[str, str]]]:
        """Per child UPDATE: which members started which action."""
        return [{(e.name, e.step.split("_")[0]) for e in evs
                 if e.step.endswith("_IN_PROGRESS")}
                for action, evs in self.actions() if action == "UPDATE"]

    def times(self, step: str) -> list[dt.datetime]:
        return [e.at for e in self.events if e.is_stack and e.step == step]

    def first_member_starts(self) -> list[dt.datetime]:
        """When the first member of each child UPDATE started."""
        return [evs[0].at for action, evs in self.actions() if action == "UPDATE" and evs]


async def child_of(svc: EngineService, ctx: RequestContext, ident: Any) -> str:
    (grp,) = await svc.list_stack_resources(ctx, ident)
    return str(grp["physical_resource_id"])


async def child_events(svc: EngineService, child_id: str) -> Child:
    rows = await svc.store.database.run(db_events.list_events,
                                        EventQuery(stack_ids=(child_id,), sort_dir="asc"))
    return Child([Ev(r.resource_name, f"{r.resource_action}_{r.resource_status}",
                     r.created_at, r.resource_type == "OS::Heat::Stack") for r in rows])


async def until(probe: Callable[[], Awaitable[bool]]) -> None:
    """Observe the engine until ``probe`` holds; bounded by PROMPT."""
    async with asyncio.timeout(PROMPT):
        while not await probe():  # the state is in the database  # noqa: ASYNC110
            await asyncio.sleep(0.02)


def seconds(later: dt.datetime, earlier: dt.datetime) -> float:
    return (later - earlier).total_seconds()


async def test_rolling_update_one_member_at_a_time_with_pauses(
        svc: EngineService, ctx: RequestContext) -> None:
    stack = await create(svc, ctx, "roll", group("one", 3, rolling(pause_time=1)))
    ident = stack["stack_identity"]
    child = await child_of(svc, ctx, ident)
    stack = await update(svc, ctx, ident, group("two", 3, rolling(pause_time=1)))
    assert state(stack) == ("UPDATE_COMPLETE", DONE_UPDATE)
    assert outputs(stack)["values"] == ["two", "two", "two"]
    log = await child_events(svc, child)
    # Heat 27: max_batch_size defaults to 1 and the highest index goes first
    assert log.batches() == [{("2", "UPDATE")}, {("1", "UPDATE")}, {("0", "UPDATE")}]
    done, starts = log.times("UPDATE_COMPLETE"), log.first_member_starts()
    for k in (1, 2):
        assert seconds(starts[k], done[k - 1]) >= 1.0, (k, starts, done)


async def test_batch_create_starts_empty_then_adds_batches_with_a_pause(
        svc: EngineService, ctx: RequestContext) -> None:
    policy = {"batch_create": {"max_batch_size": 2, "pause_time": 1}}
    stack = await create(svc, ctx, "bc", group("one", 3, policy))
    assert stack["stack_status"] == "CREATE_COMPLETE", stack["stack_status_reason"]
    assert outputs(stack)["values"] == ["one", "one", "one"]
    log = await child_events(svc, await child_of(svc, ctx, stack["stack_identity"]))
    # the empty child is created first, then one update per batch, as Heat 27 does
    assert [(a, len(evs)) for a, evs in log.actions()] == [
        ("CREATE", 0), ("UPDATE", 4), ("UPDATE", 2)]
    assert log.batches() == [{("0", "CREATE"), ("1", "CREATE")}, {("2", "CREATE")}]
    done, starts = log.times("UPDATE_COMPLETE"), log.first_member_starts()
    assert seconds(starts[1], done[0]) >= 1.0, (starts, done)


async def test_min_in_service_adds_members_first_and_removes_the_surplus_last(
        svc: EngineService, ctx: RequestContext) -> None:
    policy = rolling(max_batch_size=2, min_in_service=3)
    stack = await create(svc, ctx, "mis", group("one", 4, policy))
    ident = stack["stack_identity"]
    stack = await update(svc, ctx, ident, group("two", 4, policy))
    assert state(stack) == ("UPDATE_COMPLETE", DONE_UPDATE)
    assert outputs(stack)["values"] == ["two"] * 4
    assert list(outputs(stack)["names"]) == ["0", "1", "2", "3"]
    log = await child_events(svc, await child_of(svc, ctx, ident))
    # what Heat 27 did with the same template: capacity 5, 5, then 4
    assert log.batches() == [{("4", "CREATE"), ("3", "UPDATE")},
                             {("2", "UPDATE"), ("1", "UPDATE")},
                             {("0", "UPDATE"), ("4", "DELETE")}]

    # a min_in_service above the group's size is bounded by it (Heat 27: 4 updates)
    policy = rolling(max_batch_size=1, min_in_service=10)
    stack = await create(svc, ctx, "mis10", group("one", 2, policy))
    ident = stack["stack_identity"]
    stack = await update(svc, ctx, ident, group("two", 2, policy))
    assert outputs(stack)["values"] == ["two", "two"]
    log = await child_events(svc, await child_of(svc, ctx, ident))
    assert log.batches() == [{("2", "CREATE")}, {("1", "UPDATE")}, {("0", "UPDATE")},
                             {("2", "DELETE")}]


async def test_count_change_during_a_rolling_update(svc: EngineService,
                                                    ctx: RequestContext) -> None:
    # growing 2 -> 4 (Heat 27): the new members come first, then the old ones change
    stack = await create(svc, ctx, "grow", group("one", 2, rolling()))
    ident = stack["stack_identity"]
    stack = await update(svc, ctx, ident, group("two", 4, rolling()))
    assert outputs(stack)["values"] == ["two"] * 4
    log = await child_events(svc, await child_of(svc, ctx, ident))
    assert log.batches() == [{("2", "CREATE")}, {("3", "CREATE")}, {("1", "UPDATE")},
                             {("0", "UPDATE")}]
    # shrinking 4 -> 2 (Heat 27): the first batch drops the surplus and changes one
    stack = await create(svc, ctx, "shrink", group("one", 4, rolling()))
    ident = stack["stack_identity"]
    stack = await update(svc, ctx, ident, group("two", 2, rolling()))
    assert outputs(stack)["values"] == ["two", "two"]
    log = await child_events(svc, await child_of(svc, ctx, ident))
    assert log.batches() == [{("1", "UPDATE"), ("2", "DELETE"), ("3", "DELETE")},
                             {("0", "UPDATE")}]


async def test_no_pause_after_the_last_batch_nor_without_a_definition_change(
        svc: EngineService, ctx: RequestContext) -> None:
    # pause_time is LONG: these updates can only finish if no pause happens at all
    one_batch = rolling(max_batch_size=3, pause_time=LONG)
    stack = await create(svc, ctx, "nopause", group("one", 3, one_batch))
    ident = stack["stack_identity"]
    stack = await update(svc, ctx, ident, group("two", 3, one_batch))
    assert state(stack) == ("UPDATE_COMPLETE", DONE_UPDATE)
    # count alone (resource_def unchanged) is one plain resize in Heat 27
    slow = rolling(max_batch_size=1, pause_time=LONG)
    stack = await update(svc, ctx, ident, group("two", 5, slow))
    assert state(stack) == ("UPDATE_COMPLETE", DONE_UPDATE)
    assert outputs(stack)["values"] == ["two"] * 5
    log = await child_events(svc, await child_of(svc, ctx, ident))
    assert log.batches()[-1] == {("3", "CREATE"), ("4", "CREATE")}
    # a batched create of a single batch does not pause either
    policy = {"batch_create": {"max_batch_size": 5, "pause_time": LONG}}
    stack = await create(svc, ctx, "onebatch", group("one", 2, policy))
    assert stack["stack_status"] == "CREATE_COMPLETE", stack["stack_status_reason"]


async def _paused_after_first_batch(svc: EngineService, ctx: RequestContext,
                                    name: str) -> tuple[Any, str]:
    """A rolling update of 3 members, one a batch, held in its (long) first pause."""
    policy = rolling(pause_time=LONG)
    stack = await create(svc, ctx, name, group("one", 3, policy))
    ident = stack["stack_identity"]
    child = await child_of(svc, ctx, ident)
    await svc.update_stack(ctx, ident, group("two", 3, policy), {}, {}, {})

    async def first_batch_done() -> bool:
        return len((await child_events(svc, child)).times("UPDATE_COMPLETE")) == 1

    await until(first_batch_done)
    return ident, child


async def test_cancel_during_a_pause_ends_the_update_at_once(
        svc: EngineService, ctx: RequestContext) -> None:
    ident, child = await _paused_after_first_batch(svc, ctx, "cancelpause")
    await svc.stack_cancel_update(ctx, ident, cancel_with_rollback=False)
    await svc.wait_for_stack(ident["stack_id"], timeout=PROMPT)
    stack = await svc.show_stack(ctx, ident)
    assert state(stack) == ("UPDATE_FAILED", "Stack UPDATE cancelled")
    grp = await svc.describe_stack_resource(ctx, ident, "grp")
    assert grp["resource_status"] == "UPDATE_FAILED"
    # only the first batch ran: the child was updated once
    log = await child_events(svc, child)
    assert log.batches() == [{("2", "UPDATE")}]
    assert log.times("UPDATE_COMPLETE") == log.times("UPDATE_COMPLETE")[:1]


async def test_delete_during_a_pause_ends_at_once(svc: EngineService,
                                                  ctx: RequestContext) -> None:
    ident, child = await _paused_after_first_batch(svc, ctx, "deletepause")
    await svc.delete_stack(ctx, ident)
    await svc.wait_for_stack(ident["stack_id"], timeout=PROMPT)
    gone = await svc.show_stack(ctx, ident)
    assert gone["stack_status"] == "DELETE_COMPLETE", gone["stack_status_reason"]
    assert (await child_events(svc, child)).batches() == [{("2", "UPDATE")}]
    assert await svc.list_stacks(ctx, show_nested=True) == []


async def test_pauses_that_reach_the_stack_timeout_fail_as_in_heat(
        svc: EngineService, ctx: RequestContext) -> None:
    # three batches, two pauses of 30 s: 60 s is all of a 1-minute timeout
    policy = rolling(pause_time=30)
    stack = await create(svc, ctx, "tmo", group("one", 3, policy), timeout_mins=1)
    ident = stack["stack_identity"]
    stack = await update(svc, ctx, ident, group("two", 3, policy), timeout_mins=1)
    assert state(stack) == ("UPDATE_FAILED", f"Resource UPDATE failed: {TIMEOUT_REASON}")
    grp = await svc.describe_stack_resource(ctx, ident, "grp")
    assert grp["resource_status_reason"] == TIMEOUT_REASON
    policy = {"batch_create": {"max_batch_size": 1, "pause_time": 30}}
    stack = await create(svc, ctx, "tmoc", group("one", 3, policy), timeout_mins=1)
    assert state(stack) == ("CREATE_FAILED", f"Resource CREATE failed: {TIMEOUT_REASON}")


async def test_a_paused_batch_create_resumes_after_an_engine_restart(
        db_url: str, engine_conf: None, ctx: RequestContext) -> None:
    CONF.set_override("graceful_shutdown_timeout", 0.5)
    pause = 3.0
    policy = {"batch_create": {"max_batch_size": 1, "pause_time": pause}}
    first = EngineService(db_url=db_url)
    await first.start()
    ident = await first.create_stack(ctx, "handoff", group("one", 2, policy), {}, {}, {})

    async def first_batch_done() -> bool:
        children = [s for s in await first.list_stacks(ctx, show_nested=True)
                    if s["id"] != ident["stack_id"]]
        if not children:
            return False
        log = await child_events(first, children[0]["id"])
        return len(log.times("UPDATE_COMPLETE")) == 1

    await until(first_batch_done)
    await first.stop()     # inside the pause: the create is handed over, not failed

    second = EngineService(db_url=db_url)
    await second.start()   # its recovery sweep resumes the create from the checkpoint
    try:
        await second.wait_for_stack(ident["stack_id"], timeout=PROMPT)
        stack = await second.show_stack(ctx, ident)
        assert stack["stack_status"] == "CREATE_COMPLETE", stack["stack_status_reason"]
        assert outputs(stack)["values"] == ["one", "one"]
        log = await child_events(second, await child_of(second, ctx, ident))
        # continued where it was: the child and member 0 were not made again
        assert [a for a, _ in log.actions()] == ["CREATE", "UPDATE", "UPDATE"]
        assert log.batches() == [{("0", "CREATE")}, {("1", "CREATE")}]
        # and the pause was kept across the restart, not skipped
        done, starts = log.times("UPDATE_COMPLETE"), log.first_member_starts()
        assert seconds(starts[1], done[0]) >= pause, (starts, done)
    finally:
        await second.stop()
