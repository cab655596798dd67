"""OS::Heat::Delay waits only during its chosen actions, by deadline, never by sleeping."""

from __future__ import annotations

import pytest

from kiln.errors import StackValidationFailed
from tests.unit.resources.fakes import FakeRuntime, make, roundtrip, run


@pytest.fixture
def rt() -> FakeRuntime:
    return FakeRuntime()


async def test_waits_min_wait_on_create_only_by_default(rt: FakeRuntime) -> None:
    res = make(rt, "d", "OS::Heat::Delay", {"min_wait": 4})
    start = rt.clock
    token = roundtrip(await res.handle_create())
    assert res.poll_delay(token) == 4
    assert not await res.check_create_complete(token)
    rt.clock += 4
    assert await res.check_create_complete(token)
    start = rt.clock
    await run(res, "delete")
    assert rt.clock == start                       # DELETE is not in the default actions


async def test_jitter_stays_within_bounds(rt: FakeRuntime) -> None:
    res = make(rt, "d", "OS::Heat::Delay", {"min_wait": 1, "max_jitter": 2,
                                            "jitter_multiplier": 3,
                                            "actions": ["SUSPEND", "RESUME"]})
    waits = set()
    for _ in range(50):
        token = roundtrip(await res.handle_suspend())
        assert 1 <= token["wait"] <= 7
        waits.add(token["wait"])
    assert len(waits) > 1
    start = rt.clock
    await run(res, "resume")
    assert 1 <= rt.clock - start <= 7


def test_actions_are_checked(rt: FakeRuntime) -> None:
    # messages observed from Heat 27
    with pytest.raises(StackValidationFailed) as info:
        make(rt, "d", "OS::Heat::Delay", {"actions": ["CREATE", "X"]})
    assert info.value.message == (
        'Property error: resources.d.properties.actions: ["CREATE", "X"] is not an allowed '
        'value ["CREATE", "DELETE", "SUSPEND", "RESUME"]')
    with pytest.raises(StackValidationFailed) as info:
        make(rt, "d", "OS::Heat::Delay", {"min_wait": -1})
    assert info.value.message == ("Property error: resources.d.properties.min_wait: -1 is out "
                                  "of range (min: 0, max: None)")
