"""OS::Heat::TestResource's knobs, and waiting without blocking."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kiln.resources.base import Resource, ResourceFailure
from tests.unit.resources.fakes import FakeRuntime, make, roundtrip, run


@pytest.fixture
def rt() -> FakeRuntime:
    return FakeRuntime()


async def test_create_stores_value(rt: FakeRuntime) -> None:
    res = make(rt, "t", "OS::Heat::TestResource", {"value": "hello"})
    assert await run(res, "create") == 1
    assert res.get_attribute("output") == "hello"
    assert res.resource_id is not None and res.resource_id.startswith("teststack-t-")
    assert res.reference_id() == res.resource_id
    default = make(rt, "d", "OS::Heat::TestResource")
    await run(default, "create")
    assert default.get_attribute("output") == "test_string"


async def test_wait_secs_is_a_deadline_with_a_poll_hint(rt: FakeRuntime) -> None:
    res = make(rt, "t", "OS::Heat::TestResource", {"wait_secs": 5})
    start = rt.clock
    token = roundtrip(await res.handle_create())
    assert res.poll_delay(token) == 5
    assert not await res.check_create_complete(token)
    rt.clock += 2
    assert res.poll_delay(token) == 3
    assert not await res.check_create_complete(token)
    rt.clock += 3
    assert await res.check_create_complete(token)
    assert rt.clock - start == 5


async def test_action_wait_secs_override_per_action(rt: FakeRuntime) -> None:
    res = make(rt, "t", "OS::Heat::TestResource",
               {"wait_secs": 7, "action_wait_secs": {"create": 2, "delete": 0}})
    start = rt.clock
    await run(res, "create")
    assert rt.clock - start == 2
    start = rt.clock
    await run(res, "delete")
    assert rt.clock - start == 0
    res2 = make(rt, "u", "OS::Heat::TestResource",
                {"wait_secs": 7, "action_wait_secs": {"create": 2}})
    start = rt.clock
    await run(res2, "delete")                  # no delete entry: falls back to wait_secs
    assert rt.clock - start == 7


async def test_negative_wait_never_completes(rt: FakeRuntime) -> None:
    res = make(rt, "t", "OS::Heat::TestResource", {"wait_secs": -1})
    token = roundtrip(await res.handle_create())
    assert res.poll_delay(token) is None
    rt.clock += 10_000
    assert not await res.check_create_complete(token)


async def test_fail_fails_after_the_wait_but_not_on_delete(rt: FakeRuntime) -> None:
    res = make(rt, "t", "OS::Heat::TestResource", {"fail": True, "wait_secs": 1})
    token = roundtrip(await res.handle_create())
    assert res.resource_id is None                   # a failing create stores nothing
    assert not await res.check_create_complete(token)
    rt.clock += 1
    with pytest.raises(ResourceFailure) as info:
        await res.check_create_complete(token)
    # Heat 27 observed: "ValueError: resources.t: Test Resource failed t"
    assert info.value.status_reason("t") == "ValueError: resources.t: Test Resource failed t"
    assert res.reference_id() == "t"
    await run(res, "delete")


async def update(res: Resource, props: dict[str, Any]) -> tuple[dict[str, Any], bool]:
    new = type(res).make_properties(res.name, props)
    diff = res.diff_properties(res.properties, new)
    return diff, res.needs_replace(diff)


async def test_update_in_place_and_replace(rt: FakeRuntime) -> None:
    res = make(rt, "t", "OS::Heat::TestResource", {"value": "a"})
    await run(res, "create")
    diff, replace = await update(res, {"value": "b"})
    assert diff == {"value": "b"} and not replace
    new = type(res).make_properties("t", {"value": "b"})
    await run(res, "update", res.definition, new, diff)
    assert res.get_attribute("output") == "b"

    _, replace = await update(res, {"value": "c", "update_replace": True})
    assert replace                                    # value change with update_replace
    res.properties = type(res).make_properties("t", {"value": "a", "update_replace": True})
    _, replace = await update(res, {"value": "z", "update_replace": True})
    assert replace                                    # update_replace unchanged but set
    _, replace = await update(res, {"value": "a", "update_replace": False})
    assert not replace                                # only the knob changed
    _, replace = await update(res, {"value": "a", "update_replace": True,
                                    "update_replace_value": "x"})
    assert replace                                    # not update_allowed


async def test_update_with_fail_keeps_the_old_value(rt: FakeRuntime) -> None:
    res = make(rt, "t", "OS::Heat::TestResource", {"value": "a"})
    await run(res, "create")
    new = type(res).make_properties("t", {"value": "b", "fail": True, "wait_secs": 2})
    diff = res.diff_properties(res.properties, new)
    token = roundtrip(await res.handle_update(res.definition, new, diff))
    assert res.poll_delay(token) == 2                 # the new wait_secs applies
    rt.clock += 2
    with pytest.raises(ResourceFailure, match="Test Resource failed t"):
        await res.check_update_complete(token)
    assert res.get_attribute("output") == "a"


async def test_check_needs_a_physical_resource(rt: FakeRuntime) -> None:
    res = make(rt, "t", "OS::Heat::TestResource", {"fail": True})
    assert type(res).supports("check")
    with pytest.raises(ResourceFailure) as info:
        await res.handle_check()
    assert info.value.status_reason("t") == "Exception: resources.t: Resource not created"


def test_constraint_prop_secs_uses_a_registered_custom_constraint(rt: FakeRuntime) -> None:
    res = make(rt, "t", "OS::Heat::TestResource", {"constraint_prop_secs": 3})
    assert res.properties["constraint_prop_secs"] == 3


async def _run_real_time(res: Resource) -> tuple[float, float, int]:
    """What the engine's scheduler does: sleep for the plugin's hint between checks.
    Returns when the wait began and ended (monotonic clock) and how many checks it took."""
    began = time.monotonic()
    token = roundtrip(await res.handle_create())
    checks = 0
    while True:
        checks += 1
        if await res.check_create_complete(token):
            return began, time.monotonic(), checks
        await asyncio.sleep(res.poll_delay(token) or 0.01)


class WallClock(FakeRuntime):
    """Real time, on the monotonic clock the test measures with (and asyncio sleeps on)."""

    def now(self) -> float:
        return time.monotonic()


async def test_hundred_waiting_resources_wait_together() -> None:
    rt = WallClock()
    wait = 0.3
    resources = [make(rt, f"t{i}", "OS::Heat::TestResource", {"wait_secs": wait})
                 for i in range(100)]
    runs = await asyncio.gather(*(_run_real_time(r) for r in resources))
    began = [b for b, _, _ in runs]
    ended = [e for _, e, _ in runs]
    # each waited its time, and in parallel, not 100 x 0.3 s one after another: every
    # wait had begun before the first one ended (an ordering, not a wall-clock bound, so
    # a loaded machine that wakes the sleepers late cannot fail it)
    assert all(e - b >= wait for b, e, _ in runs)
    assert max(began) < min(ended)
    assert max(c for _, _, c in runs) <= 3            # the hint avoids busy polling


@given(start=st.floats(min_value=0, max_value=2e9, allow_nan=False),
       wait=st.floats(min_value=0, max_value=1e5, allow_nan=False))
@settings(max_examples=100, deadline=None)
def test_sleeping_the_hint_once_is_enough(start: float, wait: float) -> None:
    rt = FakeRuntime(clock=start)
    res = make(rt, "t", "OS::Heat::TestResource", {"wait_secs": wait})

    async def scenario() -> bool:
        token = roundtrip(await res.handle_create())
        rt.clock += res.poll_delay(token) or 0.0
        return await res.check_create_complete(token)

    assert asyncio.run(scenario())
