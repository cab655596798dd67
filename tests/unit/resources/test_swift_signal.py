"""OS::Heat::SwiftSignal's reading of the bodies a server PUT (Heat's rules: defaults,
numbering, a repeated ``id`` replacing the earlier signal, FAILURE and unknown statuses,
the timeout's message) and its polling pace. The bodies are given as Swift returned them
(oldest version first); the end-to-end path through a real Swift is in
tests/cloud/test_swift_signal.py."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest

from kiln.resources.base import ResourceFailure
from kiln.resources.openstack.swift_signal import IN_PROGRESS, SwiftSignal
from tests.unit.resources.fakes import FakeRuntime, make, roundtrip

TOKEN = {"container": "c", "object": "o", "started": 1_000_000.0, "timeout": 100.0,
         "count": 2}


def _signal(rt: FakeRuntime, bodies: list[str]) -> SwiftSignal:
    res = make(rt, "signal", "OS::Heat::SwiftSignal",
               {"handle": "http://swift/v1/AUTH_p/c/o", "timeout": 100, "count": 2})
    assert isinstance(res, SwiftSignal)

    async def recorded(container: str, obj: str) -> list[str]:
        assert (container, obj) == ("c", "o")
        return bodies

    res._bodies_of = recorded  # type: ignore[method-assign]
    return res


async def test_defaults_numbering_and_a_repeated_id() -> None:
    res = _signal(FakeRuntime(), [IN_PROGRESS, "", '{"data": "d", "id": "x"}',
                       '{"reason": "again", "id": "x", "data": "e"}'])
    assert await res.check_create_complete(roundtrip(TOKEN))
    assert json.loads(res.get_attribute("data")) == {"1": None, "x": "e"}
    signals = await res._signals("c", "o")
    assert signals == [
        {"data": None, "id": 1, "reason": "Signal 1 received", "status": "SUCCESS"},
        {"data": "e", "id": "x", "reason": "again", "status": "SUCCESS"}]


async def test_one_signal_of_two_is_not_complete() -> None:
    res = _signal(FakeRuntime(), [IN_PROGRESS, '{"status": "SUCCESS"}'])
    assert not await res.check_create_complete(roundtrip(TOKEN))
    assert json.loads(res.get_attribute("data")) == {"1": None}


async def test_no_signal_gives_null_data() -> None:
    res = _signal(FakeRuntime(), [IN_PROGRESS])
    assert res.get_attribute("data") == "null"
    assert not await res.check_create_complete(roundtrip(TOKEN))
    assert res.get_attribute("data") == "null"


@pytest.mark.parametrize(("bodies", "reason"), [
    (['{"status": "FAILURE", "reason": "a"}', "{}", '{"status": "FAILURE"}'],
     "SwiftSignalFailure: resources.signal: a;Signal 3 received"),
    (['{"status": "MAYBE"}'], "Error: resources.signal: Unknown status: MAYBE"),
    (["not json"], "Error: resources.signal: Failed to parse JSON data: not json"),
    (["[1]"], "Error: resources.signal: Failed to parse JSON data: [1]"),
])
async def test_bad_signals_fail(bodies: list[str], reason: str) -> None:
    res = _signal(FakeRuntime(), bodies)
    with pytest.raises(ResourceFailure) as info:
        await res.check_create_complete(roundtrip(TOKEN))
    assert info.value.status_reason("signal") == reason


async def test_timeout_names_the_successes_received() -> None:
    """Heat checks the deadline first: enough signals after it still time out."""
    rt = FakeRuntime()
    res = _signal(rt, [IN_PROGRESS, '{"reason": "one"}', '{"status": "SUCCESS"}'])
    rt.clock = 1_000_101.0
    with pytest.raises(ResourceFailure) as info:
        await res.check_create_complete(roundtrip(TOKEN))
    assert info.value.status_reason("signal") == (
        "SwiftSignalTimeout: resources.signal: 2 of 2 received - one;Signal 2 received")


@pytest.mark.parametrize(("waited", "delay"), [
    (0.0, 0.25), (10.0, 1.0), (49.0, 4.9), (90.0, 5.0), (99.0, 1.01), (120.0, 0.0)])
def test_polls_back_off_with_the_time_waited_and_stop_at_the_deadline(
        waited: float, delay: float) -> None:
    rt = FakeRuntime()
    res = _signal(rt, [])
    rt.clock = 1_000_000.0 + waited
    assert res.poll_delay(TOKEN) == pytest.approx(delay)


@pytest.mark.parametrize(("bodies", "problem"), [
    ([json.dumps({"id": str(i)}) for i in range(4)],
     "4 signals (max_signals_per_resource is 3)"),
    ([json.dumps({"data": "x" * 400})], "a signal of 412 bytes (max_signal_size is 300 bytes)"),
    ([json.dumps({"data": "x" * 250, "id": i}) for i in range(3)],
     "813 bytes of signals (max_signals_size_per_resource is 600 bytes)"),
])
async def test_what_the_signal_keeps_is_bounded(bodies: list[str], problem: str) -> None:
    rt = FakeRuntime()
    rt.conf = SimpleNamespace(kiln_engine=SimpleNamespace(
        max_signals_per_resource=3, max_signal_size=300, max_signals_size_per_resource=600))
    res = _signal(rt, [IN_PROGRESS, *bodies])
    with pytest.raises(ResourceFailure) as info:
        await res.check_create_complete(roundtrip(TOKEN))
    assert info.value.status_reason("signal") == (
        f"SwiftSignalFailure: resources.signal: Request limit exceeded: {problem}")
