"""Templates that ask for unbounded work, against a real `kiln serve`: each is a 400 at
its place, and the server keeps answering other requests (and SIGTERM) meanwhile."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from typing import Any

import httpx
import psutil
import pytest

from tests.support.clients import wait_for_stack_status
from tests.support.server import KilnProcess

HOT = {"heat_template_version": "2018-08-31"}
THOUSAND = [str(i) for i in range(1000)]


def _value(snippet: Any) -> dict[str, Any]:
    return {**HOT, "resources": {"v": {"type": "OS::Heat::Value",
                                       "properties": {"value": snippet}}}}


@pytest.fixture
def api(kiln_server: KilnProcess) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=kiln_server.endpoint("demo"), timeout=120) as client:
        yield client


@pytest.mark.parametrize("count", [10**12, 100_000])
def test_a_group_over_the_resource_limit_fails_before_building_members(
        api: httpx.Client, heat: Any, count: int) -> None:
    # as in Heat, the request is accepted and the group's create fails; Kiln checks the
    # count before building a member (10^12 members took 4 GB, 100,000 stalled ~90 s)
    name = f"group{len(str(count))}"
    resp = api.post("/stacks", json={"stack_name": name, "template": {
        **HOT, "resources": {"g": {"type": "OS::Heat::ResourceGroup", "properties": {
            "count": count, "resource_def": {"type": "OS::Heat::None"}}}}}})
    assert resp.status_code == 201, resp.text
    stack = wait_for_stack_status(heat, name)
    assert stack.stack_status == "CREATE_FAILED"
    assert "Request limit exceeded: Maximum resources per stack exceeded." in \
        stack.stack_status_reason


@pytest.mark.parametrize(("template", "message"), [
    (_value({"str_replace": {"template": "a" * 100_000, "params": {"a": "b" * 100_000}}}),
     'Property error: resources.v.properties.value: The result of "str_replace" would be '
     "larger than 4194304 characters or items (max_function_output_size)"),
    (_value({"repeat": {"template": "%a%-%b%-%c%", "for_each": {
        "%a%": THOUSAND, "%b%": THOUSAND, "%c%": THOUSAND}}}),
     'Property error: resources.v.properties.value: The result of "repeat" would be larger '
     "than 4194304 characters or items (max_function_output_size)"),
], ids=["str_replace-10^10", "repeat-10^9"])
def test_unbounded_work_is_refused_before_it_is_done(api: httpx.Client,
                                                     template: dict[str, Any],
                                                     message: str) -> None:
    resp = api.post("/stacks", json={"stack_name": "boom", "template": template})
    assert resp.status_code == 400, resp.text
    assert resp.json()["error"]["message"] == message
    assert api.get("/stacks", params={"name": "boom"}).json()["stacks"] == []


# a back-reference, which RE2 cannot run: matched by Python's engine in the sandbox process
BACKTRACKING = _value({"yaql": {"expression": "regex('(a+)+\\\\1$').matches($.data)",
                                "data": "a" * 64 + "b"}})
YAQL_TIMEOUT = ("Property error: resources.v.properties.value: The yaql expression did "
                "not finish within 10 seconds (yaql_timeout)")


def test_a_pattern_that_backtracks_in_pythons_re_is_answered_at_once(
        api: httpx.Client, heat: Any) -> None:
    # RE2 runs yaql's regex functions in the server's process: (a+)+$ on 5,000 a's and a
    # b (hours in Python's engine) is false at once, as Heat would say given the time
    template = {**_value({"yaql": {"expression": "regex('(a+)+$').matches($.data)",
                                   "data": "a" * 5000 + "b"}}),
                "outputs": {"o": {"value": {"get_attr": ["v", "value"]}}}}
    started = time.monotonic()
    resp = api.post("/stacks", json={"stack_name": "re2", "template": template})
    assert resp.status_code == 201, resp.text
    stack = wait_for_stack_status(heat, "re2")
    assert stack.stack_status == "CREATE_COMPLETE", stack.stack_status_reason
    assert time.monotonic() - started < 5
    outputs = api.get(resp.json()["stack"]["links"][0]["href"]).json()["stack"]["outputs"]
    assert [o["output_value"] for o in outputs] == [False]


def answered_while_yaql_runs(kiln: KilnProcess, what: str, method: str, url: str,
                             body: dict[str, Any]) -> httpx.Response:
    """Send the request from a thread; once the server's yaql child exists (the
    evaluation has started), a GET /stacks must be answered before that request is.
    Returns the request's answer."""
    endpoint = kiln.endpoint("demo")
    answer: dict[str, httpx.Response] = {}
    done = threading.Event()

    def send() -> None:
        try:
            answer["slow"] = httpx.request(method, url, timeout=120, json=body)
        finally:
            done.set()

    thread = threading.Thread(target=send)
    thread.start()
    try:
        # the evaluation runs in a child process of the server: wait until it exists
        server = psutil.Process(kiln.proc.pid)
        deadline = time.monotonic() + 30
        while not server.children() and not done.is_set():
            assert time.monotonic() < deadline, "the yaql evaluation never started"
            done.wait(0.01)  # poll for the child, bounded by the deadline
        listed = httpx.get(endpoint + "/stacks", timeout=30)
        assert listed.status_code == 200
        assert not done.is_set(), f"the {what} had already been answered: nothing was proven"
    finally:
        thread.join(120)
    return answer["slow"]


def test_a_backtracking_yaql_expression_leaves_the_api_responsive(
        start_kiln_factory: Any) -> None:
    kiln: KilnProcess = start_kiln_factory(options={"yaql": {"timeout": 10}})
    resp = answered_while_yaql_runs(kiln, "create", "POST", kiln.endpoint("demo") + "/stacks",
                                    {"stack_name": "regex", "template": BACKTRACKING})
    assert resp.status_code == 400, resp.text
    assert resp.json()["error"]["message"] == YAQL_TIMEOUT
    assert kiln.stop() == 0


@pytest.mark.parametrize("request_kind", ["update", "patch", "update-preview",
                                          "validate-deep"])
def test_a_slow_update_or_validate_leaves_the_api_responsive(
        start_kiln_factory: Any, request_kind: str) -> None:
    # an update's and a validation's template work runs off the event loop, as a
    # create's does: while one is evaluating, a GET /stacks is answered
    kiln: KilnProcess = start_kiln_factory(options={"yaql": {"timeout": 10}})
    endpoint = kiln.endpoint("demo")
    created = httpx.post(endpoint + "/stacks", timeout=60, json={
        "stack_name": "slow", "template": _value("plain")})
    assert created.status_code == 201, created.text
    url = created.json()["stack"]["links"][0]["href"]
    with httpx.Client(timeout=60) as client:
        wait_for_status(client, url, "CREATE_COMPLETE")
    method, target = {"update": ("PUT", url), "patch": ("PATCH", url),
                      "update-preview": ("PUT", url + "/preview"),
                      # a plain validate does not evaluate yaql; deep=true checks what a
                      # create would
                      "validate-deep": ("POST", endpoint + "/validate?deep=true"),
                      }[request_kind]
    resp = answered_while_yaql_runs(kiln, request_kind, method, target,
                                    {"template": BACKTRACKING})
    assert resp.status_code == 400, resp.text
    assert resp.json()["error"]["message"] == YAQL_TIMEOUT
    # the refused update changed nothing
    stack = httpx.get(url, timeout=30).json()["stack"]
    assert stack["stack_status"] == "CREATE_COMPLETE"
    assert kiln.stop() == 0


def wait_for_status(client: httpx.Client, url: str, want: str) -> None:
    deadline = time.monotonic() + 60
    while (status := client.get(url).json()["stack"]["stack_status"]) != want:
        assert time.monotonic() < deadline, status
        time.sleep(0.05)  # polling the API for the engine's progress


def test_a_backtracking_allowed_pattern_leaves_the_api_responsive(
        start_kiln_factory: Any) -> None:
    """A parameter's allowed_pattern that backtracks exponentially on its value: matched
    in a child process killed at a deadline, so other requests are answered meanwhile and
    the create is a 400 naming the parameter."""
    kiln: KilnProcess = start_kiln_factory()
    template = {"heat_template_version": "2018-08-31", "parameters": {"word": {
        "type": "string", "constraints": [{"allowed_pattern": "(a|aa)+$"}]}},
        "resources": {"n": {"type": "OS::Heat::None"}}}
    value = "a" * 60 + "b"
    resp = answered_while_yaql_runs(kiln, "create", "POST", kiln.endpoint("demo") + "/stacks",
                                    {"stack_name": "pattern", "template": template,
                                     "parameters": {"word": value}})
    assert resp.status_code == 400, resp.text
    assert resp.json()["error"]["message"] == (
        f'Parameter \'word\' is invalid: "{value[:80]}" could not be matched against '
        'pattern "(a|aa)+$" within 5 seconds')
    # a value the pattern matches is accepted at once
    ok = httpx.post(kiln.endpoint("demo") + "/stacks", timeout=60, json={
        "stack_name": "pattern", "template": template, "parameters": {"word": "aaa"}})
    assert ok.status_code == 201, ok.text
    assert kiln.stop() == 0
