"""The live event stream (GET .../events?stream=true) read by a real HTTP client while
actions run in a real ``kiln serve``: events arrive while the action is still blocked
(a pre-create hook), resume after Last-Event-ID, the stream ends with the stack's
deletion, a stopping server ends open streams, and a second process on the same
database is streamed too."""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.support.server import KilnProcess
from tests.support.sse import EventStream, Message

TEMPLATE = {
    "heat_template_version": "2018-08-31",
    "resources": {
        "first": {"type": "OS::Heat::RandomString", "properties": {"length": 8}},
        "gate": {"type": "OS::Heat::None", "depends_on": ["first"]},
        "last": {"type": "OS::Heat::Value", "depends_on": ["gate"],
                 "properties": {"value": "done"}},
    },
}
HOOKED = {"resource_registry": {"resources": {"gate": {"hooks": "pre-create"}}}}


@pytest.fixture
def api(kiln_server: KilnProcess) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=kiln_server.endpoint("demo"), timeout=30.0) as client:
        yield client


def create(api: httpx.Client, environment: dict[str, Any] | None = None) -> str:
    name = f"sse_{uuid.uuid4().hex[:8]}"
    r = api.post("/stacks", json={"stack_name": name, "template": TEMPLATE,
                                  "environment": environment or {}})
    assert r.status_code == 201, r.text
    return f"/stacks/{name}/{r.json()['stack']['id']}"


def stack_status(msg: Message, path: str) -> str | None:
    """The stack's own state in an event message (None for a resource's event)."""
    data = msg.json()
    stack_id = path.rsplit("/", 1)[1]
    if msg.event == "event" and data["physical_resource_id"] == stack_id \
            and data["stack_id"] == stack_id:
        return str(data["resource_status"])
    return None


def is_stack(path: str, status: str) -> Any:
    return lambda m: m.event == "event" and stack_status(m, path) == status


def test_events_arrive_while_the_action_is_blocked(api: httpx.Client) -> None:
    path = create(api, HOOKED)
    with EventStream(api, path + "/events?stream=true") as stream:
        assert stream.response.headers["content-type"].startswith("text/event-stream")
        paused = stream.until(lambda m: m.event == "event"
                              and m.json()["resource_name"] == "gate"
                              and "paused until Hook pre-create" in
                              m.json()["resource_status_reason"])
        names = [m.json()["resource_name"] for m in paused if m.event == "event"]
        assert "first" in names and "last" not in names
        # the action is still running: what the stream showed came while it was blocked
        assert api.get(path).json()["stack"]["stack_status"] == "CREATE_IN_PROGRESS"
        r = api.post(path + "/resources/gate/signal", json={"unset_hook": "pre-create"})
        assert r.status_code == 200, r.text
        rest = stream.until(is_stack(path, "CREATE_COMPLETE"))
    done = [(m.json()["resource_name"], m.json()["resource_status"]) for m in rest]
    assert ("last", "CREATE_COMPLETE") in done
    assert ("gate", "CREATE_COMPLETE") in done
    # every event once, in the order the list gives them oldest first, with its id
    streamed = [m.id for m in paused + rest]
    listed = [e["id"] for e in api.get(path + "/events",
                                       params={"sort_dir": "asc"}).json()["events"]]
    assert streamed == listed
    assert all(m.id == m.json()["id"] for m in paused + rest)


def test_resume_after_last_event_id(api: httpx.Client) -> None:
    path = create(api)
    name = path.split("/")[2]  # the stack's name alone redirects to its URL, query kept
    with EventStream(api, f"/stacks/{name}/events?stream=true") as stream:
        first = stream.until(is_stack(path, "CREATE_COMPLETE"))
    ids = [m.id for m in first]
    assert len(ids) >= 7  # stack in progress, 3 resources x 2, stack complete
    with EventStream(api, path + "/events?stream=true",
                     headers={"Last-Event-ID": str(ids[2])}) as stream:
        api.delete(path)
        resumed = stream.until(is_stack(path, "DELETE_COMPLETE"))
        end = stream.next_message()
        assert end is not None and end.event == "end"
        assert stream.next_message() is None  # the server ended the response
    resumed_ids = [m.id for m in resumed]
    assert resumed_ids[:len(ids) - 3] == ids[3:]
    assert len(set(resumed_ids)) == len(resumed_ids)
    # marker= (the list's own parameter) resumes too
    with EventStream(api, path + f"/events?stream=true&marker={ids[-1]}") as stream:
        after = stream.until(lambda m: m.event == "end")
    assert [m.id for m in after[:-1]] == resumed_ids[len(ids) - 3:]


def test_filters_and_nested_depth(api: httpx.Client) -> None:
    name = f"sse_nested_{uuid.uuid4().hex[:8]}"
    child = {"heat_template_version": "2018-08-31",
             "resources": {"inner": {"type": "OS::Heat::None"}}}
    r = api.post("/stacks", json={"stack_name": name, "files": {"child.yaml": str(child)},
                                  "template": {
                                      "heat_template_version": "2018-08-31",
                                      "resources": {
                                          "n": {"type": "child.yaml"},
                                          "other": {"type": "OS::Heat::None"}}}})
    assert r.status_code == 201, r.text
    path = f"/stacks/{name}/{r.json()['stack']['id']}"
    with EventStream(api, path + "/events?stream=true&nested_depth=1") as stream:
        seen = stream.until(is_stack(path, "CREATE_COMPLETE"))
    inner = [m.json() for m in seen if m.json()["resource_name"] == "inner"]
    assert [e["resource_status"] for e in inner] == ["CREATE_IN_PROGRESS", "CREATE_COMPLETE"]
    assert inner[0]["stack_name"].startswith(f"{name}-n-")
    with EventStream(api, path + "/events?stream=true&resource_name=other") as stream:
        api.delete(path)
        only = []
        while (msg := stream.next_message()) is not None:
            only.append(msg)
            if msg.json()["resource_status"] == "DELETE_COMPLETE":
                break
    assert {m.json()["resource_name"] for m in only} == {"other"}


def test_unknown_stack_is_a_404_not_a_stream(api: httpx.Client) -> None:
    r = api.get(f"/stacks/nope/{uuid.uuid4()}/events?stream=true")
    assert r.status_code == 404
    assert r.json()["error"]["type"] == "EntityNotFound"
    r = api.get(f"/stacks/nope/{uuid.uuid4()}/events?stream=maybe")
    assert r.status_code == 400


def test_stopping_server_ends_open_streams(start_kiln_factory: Any) -> None:
    kiln = start_kiln_factory(options={"DEFAULT": {"graceful_shutdown_timeout": 120}})
    with httpx.Client(base_url=kiln.endpoint("demo"), timeout=30.0) as api:
        path = create(api)
        with EventStream(api, path + "/events?stream=true") as stream:
            stream.until(is_stack(path, "CREATE_COMPLETE"))  # now idle, waiting
            started = time.monotonic()
            assert kiln.stop(timeout=60.0) == 0
            # the open stream did not hold the stop until graceful_shutdown_timeout
            assert time.monotonic() - started < 60.0
            assert stream.next_message() is None


def test_another_process_on_the_same_database(start_kiln_factory: Any, tmp_path: Path,
                                              sqlite_url: str) -> None:
    """The stream of server A shows an action that server B runs (B's commits are not
    published to A; A re-reads while the stack is IN_PROGRESS)."""
    shared = {"database": {"connection": sqlite_url},
              "kiln_api": {"event_stream_recheck_interval": 0.5}}
    a = start_kiln_factory(options=shared)
    b = start_kiln_factory(options=shared)
    with httpx.Client(base_url=a.endpoint("demo"), timeout=30.0) as api_a, \
            httpx.Client(base_url=b.endpoint("demo"), timeout=30.0) as api_b:
        path = create(api_b, HOOKED)
        with EventStream(api_a, path + "/events?stream=true") as stream:
            stream.until(lambda m: m.json()["resource_name"] == "gate")
            r = api_b.post(path + "/resources/gate/signal", json={"unset_hook": "pre-create"})
            assert r.status_code == 200, r.text
            rest = stream.until(is_stack(path, "CREATE_COMPLETE"))
        assert ("last", "CREATE_COMPLETE") in [
            (m.json()["resource_name"], m.json()["resource_status"]) for m in rest]


def test_the_documented_curl_command(api: httpx.Client, kiln_server: KilnProcess) -> None:
    """docs/events.md's curl command, run as written (the port and the stack's name aside):
    it prints the events already stored, then the delete's, and ends with the stack."""
    import re
    import subprocess

    from tests.support import docs

    (command,) = re.findall(r"```sh\n(.*?)```", docs.page("events.md"), re.S)
    assert command.startswith("curl -N 'http://127.0.0.1:8004/v1/demo/stacks/s1/events?")
    path = create(api)
    name = path.split("/")[2]
    deadline = time.monotonic() + 60
    while api.get(path).json()["stack"]["stack_status"] != "CREATE_COMPLETE":
        assert time.monotonic() < deadline, "the stack never completed"
        time.sleep(0.2)
    command = command.replace("http://127.0.0.1:8004/", f"{kiln_server.url}/").replace(
        "/stacks/s1/", f"/stacks/{name}/")
    curl = subprocess.Popen(["bash", "-c", command], stdout=subprocess.PIPE, text=True)
    try:
        assert curl.stdout is not None
        seen = ""
        while "CREATE_COMPLETE" not in seen:   # the stored events come first
            line = curl.stdout.readline()
            assert line, "curl ended before the stored events"
            seen += line
        assert api.delete(path).status_code == 204
        rest, _ = curl.communicate(timeout=60)
    finally:
        curl.kill()
    assert curl.returncode == 0
    assert "DELETE_COMPLETE" in rest and rest.rstrip().endswith("event: end\ndata: {}")
