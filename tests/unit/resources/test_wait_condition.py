"""Wait conditions: signals kept on the handle, counted by the condition.

Signal normalisation, reasons and the ``data`` JSON follow what Heat 27 did for the same
signals (observed through the resource-signal API and the handle's metadata).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping
from types import SimpleNamespace

import pytest

from kiln.errors import RequestLimitExceeded
from kiln.resources.aws.wait_condition import parse_handle_url
from kiln.resources.base import Resource, ResourceFailure
from kiln.resources.heat.wait_condition import HeatWaitConditionHandle
from tests.unit.resources.fakes import FakeRuntime, make, roundtrip, run


@pytest.fixture
def rt() -> FakeRuntime:
    return FakeRuntime()


async def heat_pair(rt: FakeRuntime, count: int = 1,
                    timeout: int = 60,  # the plugin's property, not a wait  # noqa: ASYNC109
                    ) -> tuple[HeatWaitConditionHandle, Resource]:
    handle = make(rt, "h", "OS::Heat::WaitConditionHandle")
    await run(handle, "create")
    assert isinstance(handle, HeatWaitConditionHandle)
    cond = make(rt, "w", "OS::Heat::WaitCondition",
                {"handle": handle.reference_id(), "timeout": timeout, "count": count})
    return handle, cond


async def test_signals_are_normalised_into_metadata(rt: FakeRuntime) -> None:
    handle, _ = await heat_pair(rt)
    assert await handle.handle_signal({"data": "d1"}) == \
        "status:SUCCESS reason:Signal 1 received"
    assert await handle.handle_signal(None) == "status:SUCCESS reason:Signal 2 received"
    assert await handle.handle_signal({"status": "SUCCESS", "reason": "r2", "id": "x"}) == \
        "status:SUCCESS reason:r2"
    assert handle.state.shown_metadata() == {
        "1": {"data": "d1", "reason": "Signal 1 received", "status": "SUCCESS"},
        "2": {"data": None, "reason": "Signal 2 received", "status": "SUCCESS"},
        "x": {"data": None, "reason": "r2", "status": "SUCCESS"}}


async def test_what_a_handle_keeps_is_bounded(rt: FakeRuntime) -> None:
    """Over a bound: RequestLimitExceeded, and what was kept (and is to be saved) stays
    as it was; a repeated id replaces its signal and needs no room for another."""
    limits = SimpleNamespace(max_signals_per_resource=3, max_signal_size=300,
                             max_signals_size_per_resource=600)
    rt.conf = SimpleNamespace(kiln_engine=limits)
    handle, _ = await heat_pair(rt)
    await handle.handle_signal({"id": "a", "data": "x" * 200})
    await handle.handle_signal({"id": "b", "data": "x" * 200})
    kept = dict(handle.state.signals)
    with pytest.raises(RequestLimitExceeded, match="max_signal_size is 300 bytes"):
        await handle.handle_signal({"id": "c", "data": "x" * 300})
    with pytest.raises(RequestLimitExceeded, match="max_signals_size_per_resource"):
        await handle.handle_signal({"id": "c", "data": "x" * 200})
    with pytest.raises(RequestLimitExceeded, match="signal id of 256 characters"):
        await handle.handle_signal({"id": "i" * 256})
    await handle.handle_signal({"id": "c"})
    with pytest.raises(RequestLimitExceeded, match="keeps 3 signals"):
        await handle.handle_signal({"id": "d"})
    await handle.handle_signal({"id": "a", "data": "shorter"})   # a repeated id: replaced
    assert list(handle.state.signals) == ["a", "b", "c"]
    assert handle.state.signals["a"]["data"] == "shorter"
    assert handle.state.signals["b"] == kept["b"]
    assert handle.state.unsaved_signals == {"a": True, "b": True, "c": True}
    assert sum(handle.state.signal_sizes.values()) <= 600


@pytest.mark.parametrize("details", [{"bogus": 1}, {"status": "MAYBE"}, "text"])
async def test_malformed_signals_are_refused(rt: FakeRuntime, details: object) -> None:
    handle, _ = await heat_pair(rt)
    with pytest.raises(ResourceFailure) as info:
        await handle.handle_signal(details)
    assert info.value.status_reason("h") == "ValueError: resources.h: Metadata format invalid"
    assert handle.metadata == {}


async def test_condition_completes_on_count(rt: FakeRuntime) -> None:
    handle, cond = await heat_pair(rt, count=2)
    token = roundtrip(await cond.handle_create())
    assert not await cond.check_create_complete(token)
    await handle.handle_signal({"data": "a"})
    assert not await cond.check_create_complete(token)
    await handle.handle_signal({"data": {"k": 1}, "id": "second"})
    assert await cond.check_create_complete(token)
    assert json.loads(cond.get_attribute("data")) == {"1": "a", "second": {"k": 1}}


async def test_signals_before_the_condition_starts_count(rt: FakeRuntime) -> None:
    handle, cond = await heat_pair(rt)
    await handle.handle_signal({})
    assert await run(cond, "create") == 1


async def test_any_failure_signal_fails(rt: FakeRuntime) -> None:
    handle, cond = await heat_pair(rt, count=3)
    token = roundtrip(await cond.handle_create())
    await handle.handle_signal({"status": "FAILURE", "reason": "disk full"})
    await handle.handle_signal({"status": "FAILURE", "reason": "no net"})
    with pytest.raises(ResourceFailure) as info:
        await cond.check_create_complete(token)
    assert info.value.status_reason("w") == \
        "WaitConditionFailure: resources.w: disk full;no net"


async def test_timeout(rt: FakeRuntime) -> None:
    handle, cond = await heat_pair(rt, count=2, timeout=10)
    token = roundtrip(await cond.handle_create())
    rt.clock += 10
    assert not await cond.check_create_complete(token)
    rt.clock += 0.5
    with pytest.raises(ResourceFailure) as info:
        await cond.check_create_complete(token)
    # Heat 27 observed: "WaitConditionTimeout: resources.w: 0 of 1 received"
    assert info.value.status_reason("w") == "WaitConditionTimeout: resources.w: 0 of 2 received"
    await handle.handle_signal({"reason": "one ok"})
    with pytest.raises(ResourceFailure) as info:
        await cond.check_create_complete(token)
    assert info.value.message == "1 of 2 received - one ok"


async def test_update_restarts_with_the_new_count(rt: FakeRuntime) -> None:
    handle, cond = await heat_pair(rt, count=1)
    await handle.handle_signal({})
    await run(cond, "create")
    new = type(cond).make_properties(
        "w", {"handle": handle.reference_id(), "timeout": 60, "count": 2})
    diff = cond.diff_properties(cond.properties, new)
    assert diff == {"count": 2} and not cond.needs_replace(diff)
    token = roundtrip(await cond.handle_update(cond.definition, new, diff))
    assert not await cond.check_update_complete(token)
    await handle.handle_signal({})
    assert await cond.check_update_complete(token)


async def test_handle_must_be_a_wait_condition_handle(rt: FakeRuntime) -> None:
    other = make(rt, "t", "OS::Heat::TestResource")
    await run(other, "create")
    cond = make(rt, "w", "OS::Heat::WaitCondition",
                {"handle": other.reference_id(), "timeout": 5})
    with pytest.raises(ResourceFailure) as info:
        await cond.handle_create()
    assert info.value.status_reason("w") == \
        "ValueError: resources.w: t is not a valid wait condition handle."
    cond2 = make(rt, "w2", "OS::Heat::WaitCondition", {"handle": "nothing", "timeout": 5})
    with pytest.raises(ResourceFailure, match=r"^nothing is not a valid wait condition handle"):
        await cond2.handle_create()
    assert cond2.get_attribute("data") == ""


async def test_heat_handle_attributes(rt: FakeRuntime) -> None:
    handle, _ = await heat_pair(rt)
    endpoint = rt.signal_url("h", "heat")
    assert handle.get_attribute("endpoint") == endpoint
    assert handle.get_attribute("token") == "stack-user-token"
    assert handle.get_attribute("curl_cli") == (
        "curl -i -X POST -H 'X-Auth-Token: stack-user-token' "
        "-H 'Content-Type: application/json' -H 'Accept: application/json' " + endpoint)
    assert handle.get_attribute("signal") == "null"       # TOKEN_SIGNAL, as Heat 27 shows
    cfn = make(rt, "h2", "OS::Heat::WaitConditionHandle", {"signal_transport": "CFN_SIGNAL"})
    await run(cfn, "create")
    # pre-signed with a keypair issued for this handle
    (keypair,) = rt.keypairs.values()
    assert cfn.data["access_key"] == keypair["access_key"]
    assert json.loads(cfn.get_attribute("signal")) == {
        "alarm_url": rt.presigned_signal_url("h2", "cfn_waitcondition", keypair)}
    assert cfn.get_attribute("token") is None and cfn.get_attribute("curl_cli") is None
    none = make(rt, "h3", "OS::Heat::WaitConditionHandle", {"signal_transport": "NO_SIGNAL"})
    await run(none, "create")
    assert none.get_attribute("signal") == "{}"


async def test_aws_pair(rt: FakeRuntime) -> None:
    handle = make(rt, "ah", "AWS::CloudFormation::WaitConditionHandle")
    assert handle.reference_id() == "ah"
    await run(handle, "create")
    url = handle.reference_id()
    (keypair,) = rt.keypairs.values()
    assert url == rt.presigned_signal_url("ah", "cfn_waitcondition", keypair)
    cond = make(rt, "aw", "AWS::CloudFormation::WaitCondition",
                {"Handle": url, "Timeout": 30, "Count": 2})
    token = roundtrip(await cond.handle_create())
    assert await handle.handle_signal(None) is None       # an empty signal is ignored
    reason = await handle.handle_signal(
        {"Status": "SUCCESS", "Reason": "ok", "UniqueId": "1", "Data": "first"})
    assert reason == "status:SUCCESS reason:ok"
    assert not await cond.check_create_complete(token)
    with pytest.raises(ResourceFailure, match="Metadata format invalid"):
        await handle.handle_signal({"Status": "SUCCESS"})  # AWS fills in nothing
    await handle.handle_signal({"Status": "SUCCESS", "Reason": "ok", "UniqueId": "2",
                                "Data": "second"})
    assert await cond.check_create_complete(token)
    assert json.loads(cond.get_attribute("Data")) == {"1": "first", "2": "second"}
    await run(handle, "delete")   # the handle's keypair goes with it
    assert rt.keypairs == {}


def test_handle_url_parsing() -> None:
    ident = ("proj", "st", "5a7f", "ah")
    quoted = "http://h:8000/v1/waitcondition/arn%3Aopenstack%3Aheat%3A%3Aproj%3Astacks/st/5a7f"
    assert parse_handle_url(quoted + "/resources/ah?Signature=x") == ident
    plain = "https://h/v1/waitcondition/arn:openstack:heat::proj:stacks/st/5a7f/resources/ah"
    assert parse_handle_url(plain) == ident


@pytest.mark.parametrize(("url", "message"), [
    ("not a url", '"not a url" is not a valid URL'),
    ("http://kiln:8000/v1/waitcondition/xyz", '"http://kiln:8000/v1/waitcondition/xyz" is '
                                              'not a valid ARN URL'),
    ("http://kiln:8000/v1/waitcondition/arn%3Aopenstack%3Aheat%3A%3Aother%3Astacks/teststack"
     "/5a7f7a3e-0000-4000-8000-000000000001/resources/ah", "WaitCondition invalid Handle "
                                                           "tenant other"),
    ("http://kiln:8000/v1/waitcondition/arn%3Aopenstack%3Aheat%3A%3Aproj%3Astacks/teststack"
     "/5a7f7a3e-0000-4000-8000-000000000001/resources/missing",
     "WaitCondition invalid Handle missing"),
])
async def test_aws_handle_url_checks(rt: FakeRuntime, url: str, message: str) -> None:
    handle = make(rt, "ah", "AWS::CloudFormation::WaitConditionHandle")
    await run(handle, "create")
    cond = make(rt, "aw", "AWS::CloudFormation::WaitCondition", {"Handle": url, "Timeout": 3})
    with pytest.raises(ResourceFailure) as info:
        await cond.handle_create()
    assert info.value.message == message
    assert info.value.exc_type == "ValueError"


async def test_update_wait_condition_handle_always_replaced(rt: FakeRuntime) -> None:
    handle = make(rt, "uh", "OS::Heat::UpdateWaitConditionHandle")
    await run(handle, "create")
    assert handle.needs_update(handle.definition, {})
    assert handle.needs_replace({})
    (keypair,) = rt.keypairs.values()
    assert handle.reference_id() == rt.presigned_signal_url("uh", "cfn_waitcondition",
                                                            keypair)


class SlowKeypairs(FakeRuntime):
    """Issuing a keypair takes until ``release`` is set (a database write under load)."""

    def __init__(self) -> None:
        super().__init__()
        self.issuing = asyncio.Event()
        self.release = asyncio.Event()

    async def issue_ec2_keypair(self, resource_name: str, *,
                                user: str | None = None) -> Mapping[str, str]:
        self.issuing.set()
        await self.release.wait()
        return await super().issue_ec2_keypair(resource_name, user=user)


@pytest.mark.parametrize(("type_name", "properties"), [
    ("AWS::CloudFormation::WaitConditionHandle", {}),
    ("OS::Heat::WaitConditionHandle", {"signal_transport": "CFN_SIGNAL"})])
async def test_a_handle_read_while_its_keypair_is_issued_is_not_half_made(
        type_name: str, properties: dict[str, str]) -> None:
    """A stack shown during the handle's create (the keypair being written) gives the
    handle's name and no signal, as before the create; never an unsigned URL or a signal
    without its alarm_url, which an agent would use and be refused."""
    rt = SlowKeypairs()
    handle = make(rt, "h", type_name, properties)
    creating = asyncio.ensure_future(handle.handle_create())
    await asyncio.wait_for(rt.issuing.wait(), 60)
    assert handle.reference_id() == "h"
    if type_name.startswith("OS"):
        assert handle.resolve_attribute("signal") is None
    rt.release.set()
    await creating
    (keypair,) = rt.keypairs.values()
    url = rt.presigned_signal_url("h", "cfn_waitcondition", keypair)
    if type_name.startswith("AWS"):
        assert handle.reference_id() == url
    else:
        assert json.loads(handle.resolve_attribute("signal")) == {"alarm_url": url}
