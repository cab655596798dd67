"""Two actions on one stack started at the same instant (issue 10).

``asyncio.gather`` starts both requests before either has awaited anything, the tightest
race one process can see: of two non-delete actions exactly one is accepted (the other
gets Heat's 409), and a delete is never acknowledged and then lost to an action that
started beside it. The matrix over HTTP with many clients is tests/functional/test_race_matrix.py.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from kiln.engine.service import EngineService, RequestContext
from kiln.errors import ActionInProgress, EntityNotFound, NotSupported

from .support import create, hot

TEMPLATE = hot({"r": {"type": "OS::Heat::RandomString"},
                "n": {"type": "OS::Heat::None", "depends_on": ["r"]}})
CHANGED = hot({"r": {"type": "OS::Heat::RandomString", "properties": {"length": 9}},
               "n": {"type": "OS::Heat::None", "depends_on": ["r"]}})

Action = Callable[[EngineService, RequestContext, Any], Awaitable[object]]

ACTIONS: dict[str, Action] = {
    "check": lambda s, c, i: s.stack_check(c, i),
    "suspend": lambda s, c, i: s.stack_suspend(c, i),
    "snapshot": lambda s, c, i: s.stack_snapshot(c, i, "snap"),
    "update": lambda s, c, i: s.update_stack(c, i, CHANGED, {}, {}, {}),
    "delete": lambda s, c, i: s.delete_stack(c, i),
}
#: the stack action each request starts (what the stack shows while it runs)
STACK_ACTION = {"check": "CHECK", "suspend": "SUSPEND", "snapshot": "SNAPSHOT",
                "update": "UPDATE"}


async def settle(svc: EngineService, stack_id: str) -> None:
    """Until the engine runs nothing on the stack. Both requests have returned, so each
    action they started is launched (a pre-empted one already ended)."""
    while svc.engine.running(stack_id):
        await svc.wait_for_stack(stack_id)


async def stack_spans(svc: EngineService, ctx: RequestContext,
                      ident: dict[str, Any]) -> list[tuple[str, str]]:
    """(action, how it ended) of each stack-level action after the create, in order;
    fails if one started before the previous ended."""
    events = await svc.list_events(ctx, ident, sort_dir="asc")
    spans: list[tuple[str, str]] = []
    running: str | None = None
    for event in events:
        if event["resource_name"] != ident["stack_name"] or event["resource_action"] == "CREATE":
            continue
        action, status = event["resource_action"], event["resource_status"]
        if status.endswith("_IN_PROGRESS"):
            assert running is None, f"{action} started during {running}: {events}"
            running = action
        elif action == running:
            spans.append((action, status))
            running = None
    assert running is None, f"{running} never ended"
    return spans


async def later(turns: int, action: Awaitable[object]) -> object:
    """``action`` after ``turns`` turns of the event loop: the other request is then
    that much further on (a chosen interleaving, not a wait for something)."""
    for _ in range(turns):
        await asyncio.sleep(0)
    return await action


async def race(svc: EngineService, ctx: RequestContext, first: str, second: str,
               turns: int = 0) -> tuple[dict[str, Any], list[object]]:
    shown = await create(svc, ctx, f"{first}-{second}", TEMPLATE)
    ident = {"stack_name": shown["stack_name"], "stack_id": shown["id"]}
    outcomes = await asyncio.gather(
        ACTIONS[first](svc, ctx, ident), later(turns, ACTIONS[second](svc, ctx, ident)),
        return_exceptions=True)
    await settle(svc, ident["stack_id"])
    return ident, list(outcomes)


@pytest.mark.parametrize("other", ["check", "suspend", "snapshot", "update"])
@pytest.mark.parametrize("delete_first", [False, True], ids=["other-first", "delete-first"])
@pytest.mark.parametrize("turns", [0, 12, 36])
async def test_an_acknowledged_delete_is_never_lost(service: EngineService,
                                                    ctx: RequestContext, other: str,
                                                    delete_first: bool, turns: int) -> None:
    order = ("delete", other) if delete_first else (other, "delete")
    ident, outcomes = await race(service, ctx, *order, turns=turns)
    deleted = outcomes[order.index("delete")]
    assert deleted is None, f"the delete was refused: {deleted!r}"
    refused = outcomes[order.index(other)]
    # accepted (then pre-empted, or run to its end before the delete), or refused
    assert not isinstance(refused, BaseException) or isinstance(
        refused, (ActionInProgress, EntityNotFound)), refused
    with pytest.raises(EntityNotFound):  # the name no longer resolves
        await service.identify_stack(ctx, ident["stack_name"])
    # by id a deleted stack is still shown (as in Heat): deleted, not left as the other
    shown = await service.show_stack(ctx, ident["stack_id"])
    assert shown["stack_status"] == "DELETE_COMPLETE"


@pytest.mark.parametrize(("first", "second"), [
    ("suspend", "update"), ("update", "suspend"), ("check", "suspend"),
    ("snapshot", "check"), ("update", "update"), ("check", "check")])
async def test_of_two_actions_exactly_one_wins(service: EngineService, ctx: RequestContext,
                                               first: str, second: str) -> None:
    ident, outcomes = await race(service, ctx, first, second)
    refused = [o for o in outcomes if isinstance(o, BaseException)]
    if not refused:
        # both accepted: legitimate only when the first had already stored its end when the
        # second was admitted (under load its lookup can take that long); then they ran
        # one after the other, never side by side
        spans = await stack_spans(service, ctx, ident)
        assert len(spans) == 2 and all(s.endswith("_COMPLETE") for _, s in spans), spans
        assert sorted(a for a, _ in spans) == sorted((STACK_ACTION[first],
                                                      STACK_ACTION[second])), spans
        return
    assert len(refused) == 1, outcomes
    assert isinstance(refused[0], (ActionInProgress, NotSupported)), refused
    winner = (first, second)[outcomes.index(next(o for o in outcomes
                                                 if not isinstance(o, BaseException)))]
    shown = await service.show_stack(ctx, ident)
    assert shown["stack_status"] == f"{STACK_ACTION[winner]}_COMPLETE"



async def test_an_action_shown_settled_does_not_refuse_the_next(service: EngineService,
                                                                ctx: RequestContext) -> None:
    """A client shown CREATE_COMPLETE sends its next action at once. The create's task
    may still be awaiting after storing that state (here it is held open until
    released): the next action waits for it instead of getting 409 for the create."""
    shown = await create(service, ctx, "settled-then-next", TEMPLATE)
    ident = {"stack_name": shown["stack_name"], "stack_id": shown["id"]}
    assert (await service.show_stack(ctx, ident))["stack_status"] == "CREATE_COMPLETE"
    claim = service.engine.claims.try_take(ident["stack_id"], "CREATE")
    assert claim is not None
    tidying = asyncio.Event()
    claim.launch(tidying.wait)  # the create's end, still running after its final write
    suspend = asyncio.ensure_future(service.stack_suspend(ctx, ident))
    # a refusal would come within milliseconds; the bound only ends the wait for one
    await asyncio.wait({suspend}, timeout=1.0)
    assert not suspend.done() or suspend.exception() is None, suspend.exception()
    tidying.set()
    await suspend
    await settle(service, ident["stack_id"])
    assert (await service.show_stack(ctx, ident))["stack_status"] == "SUSPEND_COMPLETE"


NEXT: dict[str, Action] = {
    "suspend": lambda s, c, i: s.stack_suspend(c, i),
    "mark_unhealthy": lambda s, c, i: s.resource_mark_unhealthy(c, i, "r", True),
}


@pytest.mark.parametrize("holder", ["UPDATE", "CHECK"])
@pytest.mark.parametrize("next_request", sorted(NEXT))
async def test_a_settled_state_of_another_action_name_does_not_refuse_the_next(
        service: EngineService, ctx: RequestContext, holder: str, next_request: str) -> None:
    """The settled state the client was shown need not carry the holder's action name:
    an update that rolled back ends ROLLBACK_COMPLETE under the update's claim (this
    409'd 1 time in 25 through kiln serve: update, rollback, then at once check). Here
    the holder's claim is held open over a stack that reads CREATE_COMPLETE; marking a
    resource unhealthy, which takes no claim, waits the same way."""
    shown = await create(service, ctx, f"settled-{holder.lower()}-{next_request}", TEMPLATE)
    ident = {"stack_name": shown["stack_name"], "stack_id": shown["id"]}
    claim = service.engine.claims.try_take(ident["stack_id"], holder)
    assert claim is not None
    tidying = asyncio.Event()

    async def tidy() -> None:  # the action's end, still running after its final write
        await tidying.wait()

    claim.launch(tidy)
    request = asyncio.ensure_future(NEXT[next_request](service, ctx, ident))
    # a refusal would come within milliseconds; the bound only ends the wait for one
    await asyncio.wait({request}, timeout=1.0)
    assert not request.done() or request.exception() is None, request.exception()
    tidying.set()
    await request
    await settle(service, ident["stack_id"])
