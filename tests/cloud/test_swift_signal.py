"""OS::Heat::SwiftSignalHandle and OS::Heat::SwiftSignal through kiln serve and
heatclient, against the real Swift beside the test cloud (tests/support/swift.py): the
signals are real ``curl`` PUTs to the handle's temp URL, straight into Swift, as a
server's agent sends them."""

from __future__ import annotations

import json
import shlex
import subprocess
import time
import uuid
from typing import Any
from urllib.parse import urlparse

import pytest

from tests.cloud.helpers import container_gone, delete_and_wait, outputs, settled
from tests.support.cloud import Cloud
from tests.support.services import unavailable

HANDLE_OUTPUTS = {key: {"value": {"get_attr": ["handle", key]}}
                  for key in ("endpoint", "curl_cli", "token")}


@pytest.fixture
def sdk(swift: Any, cloud: Cloud) -> Any:
    """The admin connected once Swift is in the catalog (see test_swift.py)."""
    return cloud.connect()


@pytest.fixture(autouse=True)
def versioned_swift(swift: Any) -> None:
    """The handle counts signals as versions of one object: Swift must version."""
    import httpx

    info = httpx.get(f"{swift.url}/info", timeout=30).json()
    if "versioned_writes" not in info:
        unavailable("this Swift runs without versioned writes (started from a "
                    "tests/support/swift.py older than the signal tests): stop it and "
                    "let the tests start it again")


def _template(count: int = 1, timeout: int = 600, gate: bool = False) -> dict[str, Any]:
    signal: dict[str, Any] = {
        "type": "OS::Heat::SwiftSignal",
        "properties": {"handle": {"get_resource": "handle"}, "count": count,
                       "timeout": timeout}}
    resources: dict[str, Any] = {"handle": {"type": "OS::Heat::SwiftSignalHandle"},
                                 "signal": signal}
    if gate:  # the signal starts only when the test lets it (a native wait condition)
        resources["gate_handle"] = {"type": "OS::Heat::WaitConditionHandle"}
        resources["gate"] = {"type": "OS::Heat::WaitCondition",
                             "properties": {"handle": {"get_resource": "gate_handle"},
                                            "timeout": 600}}
        signal["depends_on"] = ["gate", "handle"]
    return {"heat_template_version": "2018-08-31", "resources": resources,
            "outputs": {**HANDLE_OUTPUTS,
                        "data": {"value": {"get_attr": ["signal", "data"]}}}}


def _resource_status(heat: Any, stack: str, name: str, wanted: str,
                     timeout: float = 120.0) -> Any:
    """Poll (growing pauses, bounded) until resource *name* reaches *wanted*."""
    deadline = time.monotonic() + timeout
    delay = 0.05
    while True:
        found = heat.resources.get(stack, name)
        if found.resource_status == wanted:
            return found
        assert not found.resource_status.endswith("FAILED"), found.resource_status_reason
        assert time.monotonic() < deadline, f"{name} still {found.resource_status}"
        time.sleep(delay)  # status poll with backoff, bounded by the deadline
        delay = min(delay * 2, 0.5)


def _create(heat: Any, name: str, template: dict[str, Any]) -> tuple[str, str, str]:
    """Create the stack; once its handle is created: (stack id, endpoint, curl_cli)."""
    stack_id = heat.stacks.create(stack_name=name, template=template)["stack"]["id"]
    attrs = _resource_status(heat, name, "handle", "CREATE_COMPLETE").attributes
    return stack_id, attrs["endpoint"], attrs["curl_cli"]


def _curl(curl_cli: str, body: str) -> str:
    """Run the handle's curl command line with *body*; the HTTP status line."""
    done = subprocess.run([*shlex.split(curl_cli), "-s", "--data-binary", body],
                          capture_output=True, text=True, timeout=60, check=True)
    return done.stdout.splitlines()[0]


def test_two_curl_puts_complete_the_signal_with_their_data(swift_heat: Any, sdk: Any
                                                            ) -> None:
    name = f"sig-{uuid.uuid4().hex[:6]}"
    stack_id, endpoint, curl_cli = _create(swift_heat, name, _template(count=2))
    url = urlparse(endpoint)
    account = urlparse(sdk.object_store.get_endpoint()).path
    assert (url.scheme, url.netloc) == ("http", urlparse(sdk.object_store.get_endpoint()
                                                         ).netloc)
    assert url.path.startswith(f"{account}/{stack_id}/{name}-handle-")
    assert "temp_url_sig=" in url.query and "temp_url_expires=2147483587" in url.query
    assert curl_cli == f"curl -i -X PUT '{endpoint}'"
    # the placeholder object is in the stack's container before any signal
    obj = url.path.rsplit("/", 1)[1]
    assert sdk.object_store.download_object(obj, container=stack_id) == b"in progress"

    assert _curl(curl_cli, '{"status": "SUCCESS", "data": "one", "id": "a"}'
                 ).startswith("HTTP/1.1 201")
    assert _curl(curl_cli, '{"data": "two"}').startswith("HTTP/1.1 201")
    stack = settled(swift_heat, name, "CREATE_COMPLETE", timeout=120)
    shown = outputs(stack)
    assert json.loads(shown["data"]) == {"a": "one", "2": "two"}
    assert (shown["endpoint"], shown["curl_cli"], shown["token"]) == (endpoint, curl_cli, "")
    assert swift_heat.resources.get(name, "handle").physical_resource_id == obj

    assert delete_and_wait(swift_heat, stack_id) == "DELETE_COMPLETE"
    assert container_gone(sdk, stack_id)


def test_the_url_is_signed_with_the_stack_containers_own_key(swift_heat: Any, sdk: Any
                                                            ) -> None:
    """Not the account's key: that one is shared by every engine signing URLs in the
    project, and two engines finding it unset would each set their own (the loser's URLs
    then answer 401). The account's key is left as it was."""
    from kiln import tempurl

    account_key = sdk.object_store.get_account_metadata().meta_temp_url_key
    name = f"sigkey-{uuid.uuid4().hex[:6]}"
    stack_id, endpoint, curl_cli = _create(swift_heat, name, _template(count=1))
    key = sdk.object_store.get_container_metadata(stack_id).meta_temp_url_key
    assert key
    url = urlparse(endpoint)
    assert f"temp_url_sig={tempurl.signature(key, 'PUT', 2147483587, url.path)}" in url.query
    assert sdk.object_store.get_account_metadata().meta_temp_url_key == account_key

    assert _curl(curl_cli, '{"status": "SUCCESS"}').startswith("HTTP/1.1 201")
    settled(swift_heat, name, "CREATE_COMPLETE", timeout=120)
    assert delete_and_wait(swift_heat, stack_id) == "DELETE_COMPLETE"


def test_a_failure_signal_fails_the_stack_with_its_reason(swift_heat: Any, sdk: Any
                                                          ) -> None:
    name = f"sigfail-{uuid.uuid4().hex[:6]}"
    stack_id, _, curl_cli = _create(swift_heat, name, _template(count=3))
    _curl(curl_cli, '{"status": "SUCCESS"}')
    _curl(curl_cli, '{"status": "FAILURE", "reason": "disk full"}')
    stack = settled(swift_heat, name, "CREATE_FAILED", timeout=120)
    assert stack.stack_status_reason == (
        "Resource CREATE failed: SwiftSignalFailure: resources.signal: disk full")
    assert delete_and_wait(swift_heat, stack_id) == "DELETE_COMPLETE"
    assert container_gone(sdk, stack_id)


def test_too_few_signals_time_out_naming_those_received(swift_heat: Any) -> None:
    name = f"sigtime-{uuid.uuid4().hex[:6]}"
    stack_id, _, curl_cli = _create(swift_heat, name, _template(count=2, timeout=2,
                                                                gate=True))
    _curl(curl_cli, '{"reason": "first one"}')
    # only now may the signal start waiting: one signal is already there, two wanted
    _resource_status(swift_heat, name, "gate_handle", "CREATE_COMPLETE")
    swift_heat.resources.signal(name, "gate_handle", data={"status": "SUCCESS"})
    stack = settled(swift_heat, name, "CREATE_FAILED", timeout=120)
    assert stack.stack_status_reason == (
        "Resource CREATE failed: SwiftSignalTimeout: resources.signal: "
        "1 of 2 received - first one")
    assert delete_and_wait(swift_heat, stack_id) == "DELETE_COMPLETE"


def test_a_url_that_is_no_handle_of_this_stack_is_refused(swift_heat: Any, sdk: Any
                                                          ) -> None:
    name = f"sigbad-{uuid.uuid4().hex[:6]}"
    account = urlparse(sdk.object_store.get_endpoint()).path
    for handle, part in ((f"http://127.0.0.1{account}/{uuid.uuid4()}/obj",
                          "container name"),
                         ("http://127.0.0.1/v1/AUTH_nobody/c/obj", "Swift TempURL path")):
        template = _template()
        template["resources"]["signal"]["properties"]["handle"] = handle
        swift_heat.stacks.create(stack_name=name, template=template)
        stack = settled(swift_heat, name, "CREATE_FAILED", timeout=120)
        assert stack.stack_status_reason == (
            f'Resource CREATE failed: ValueError: resources.signal: "{urlparse(handle).path}"'
            f" is not a valid SwiftSignalHandle.  The {part} is invalid")
        assert delete_and_wait(swift_heat, stack.id) == "DELETE_COMPLETE"


def test_the_signal_types_are_listed_with_swift_in_the_catalog(swift_heat: Any) -> None:
    listed = {t.resource_type for t in swift_heat.resource_types.list()}
    assert {"OS::Heat::SwiftSignal", "OS::Heat::SwiftSignalHandle"} <= listed
