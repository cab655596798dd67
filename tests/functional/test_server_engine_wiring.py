"""The engine as wired in a real ``kiln serve``, seen through python-heatclient: what an
operator can diagnose from the log when a plugin fails in a way it did not intend (a bug
rather than a ResourceFailure), and outputs read while an action runs."""

from __future__ import annotations

import string
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from heatclient.exc import HTTPConflict, HTTPNotFound

from tests.support.all_types import FILES, SAMPLES, Sample, builtin_types
from tests.support.clients import heat_client, wait_for_stack_status
from tests.support.fixtures import report_errors
from tests.support.server import KilnProcess, start_kiln

CRASHING_PLUGIN = textwrap.dedent('''
    from kiln.resources.base import Resource

    class Crashing(Resource):
        type_name = "Acme::Crashing"

        async def handle_create(self):
            return {"parts": []}["missing"]
''')


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KilnProcess]:
    workdir = tmp_path_factory.mktemp("diagnostics")
    plugins = workdir / "plugins"
    plugins.mkdir()
    (plugins / "crashing.py").write_text(CRASHING_PLUGIN)
    proc = start_kiln(workdir, options={"DEFAULT": {
        "plugin_dirs": str(plugins), "graceful_shutdown_timeout": 5,
        "heat_waitcondition_server_url": "http://127.0.0.1:8000"}})
    yield proc
    proc.stop()
    report_errors(proc)


def test_an_unexpected_plugin_error_is_logged_with_its_traceback(
        server: KilnProcess, tmp_path: Path) -> None:
    heat: Any = heat_client(server.endpoint("demo"))
    created = heat.stacks.create(stack_name="crash", template={
        "heat_template_version": "2018-08-31",
        "resources": {"boom": {"type": "Acme::Crashing"}}})
    stack = wait_for_stack_status(heat, "crash")
    assert stack.stack_status == "CREATE_FAILED"
    assert stack.stack_status_reason == (
        "Resource CREATE failed: KeyError: resources.boom: 'missing'")
    records = [r for r in server.log_records() if r.get("resource_name") == "boom"]
    assert len(records) == 1, records
    record = records[0]
    assert record["level"] == "ERROR"
    assert record["stack_id"] == created["stack"]["id"]
    assert (record["stack_name"], record["action"]) == ("crash", "CREATE")
    assert record["exception"].startswith("Traceback (most recent call last):")
    assert 'return {"parts": []}["missing"]' in record["exception"]
    assert record["exception"].endswith("KeyError: 'missing'")


WAITING = {
    "heat_template_version": "2018-08-31",
    "resources": {
        "rs": {"type": "OS::Heat::RandomString", "properties": {"length": 10}},
        "h": {"type": "OS::Heat::WaitConditionHandle"},
        "w": {"type": "OS::Heat::WaitCondition",
              "properties": {"handle": {"get_resource": "h"}, "timeout": 600}},
        "after": {"type": "OS::Heat::Value", "depends_on": ["w"],
                  "properties": {"value": "later"}},
    },
    "outputs": {
        "endpoint": {"value": {"get_attr": ["h", "endpoint"]}},
        "pw": {"value": {"get_attr": ["rs", "value"]}},
        "after": {"value": {"get_attr": ["after", "value"]}},
        "after_ref": {"value": {"get_resource": "after"}},
    },
}


def _wait_for_resource(heat: Any, stack: str, name: str, status: str) -> None:
    deadline = time.monotonic() + 30
    delay = 0.02
    while heat.resources.get(stack, name).resource_status != status:
        if time.monotonic() > deadline:
            raise AssertionError(f"{name} never reached {status}")
        time.sleep(delay)  # status poll with backoff, bounded by the deadline
        delay = min(delay * 2, 0.5)


def test_outputs_resolve_while_the_stack_waits(server: KilnProcess) -> None:
    """As on Heat 27 (same template): while the wait condition waits, stack show, output
    list and output show give the outputs of what exists, None for what does not yet."""
    heat: Any = heat_client(server.endpoint("demo"))
    created = heat.stacks.create(stack_name="waits", template=WAITING)
    stack_id = created["stack"]["id"]
    _wait_for_resource(heat, "waits", "h", "CREATE_COMPLETE")
    _wait_for_resource(heat, "waits", "w", "CREATE_IN_PROGRESS")
    shown = heat.stacks.get("waits")
    assert shown.stack_status == "CREATE_IN_PROGRESS"
    values = {o["output_key"]: o["output_value"] for o in shown.outputs}
    password = values["pw"]
    assert len(password) == 10 and set(password) <= set(string.ascii_letters + string.digits)
    assert values["endpoint"].endswith(f"/stacks/waits/{stack_id}/resources/h/signal")
    assert (values["after"], values["after_ref"]) == (None, "after")
    listed = heat.stacks.output_list("waits")["outputs"]
    assert sorted(o["output_key"] for o in listed) == ["after", "after_ref", "endpoint", "pw"]
    one = heat.stacks.output_show("waits", "pw")["output"]
    assert one["output_value"] == password
    # the signal completes the stack; the outputs stored then agree with those read before
    heat.resources.signal("waits", "h", data={"status": "SUCCESS"})
    done = wait_for_stack_status(heat, "waits")
    assert done.stack_status == "CREATE_COMPLETE", done.stack_status_reason
    final = {o["output_key"]: o["output_value"] for o in done.outputs}
    assert final["after_ref"].startswith("waits-after-")   # now a physical resource
    assert final == {**values, "after": "later", "after_ref": final["after_ref"]}


def _settle(heat: Any, stack_id: str, sample: Sample | None = None) -> Any:
    """Poll until the action ends, signalling the sample's handle whenever the resource
    under test waits for it (a wait condition being created)."""
    deadline = time.monotonic() + 60
    signalled: set[str] = set()
    delay = 0.02
    while True:
        stack = heat.stacks.get(stack_id)
        if not stack.stack_status.endswith("_IN_PROGRESS"):
            return stack
        assert time.monotonic() < deadline, f"{stack.stack_status} after 60s"
        if sample is not None and sample.signal is not None:
            r = heat.resources.get(stack_id, "r")
            if (r.resource_status == "CREATE_IN_PROGRESS"
                    and r.physical_resource_id not in signalled):
                heat.resources.signal(stack_id, sample.signal, data=sample.signal_data)
                signalled.add(r.physical_resource_id)
        time.sleep(delay)  # status poll with backoff, bounded by the deadline
        delay = min(delay * 2, 0.3)


def _start(call: Any, *args: Any, **kwargs: Any) -> Any:
    """Start the next action; the stack lock is released just after the previous action's
    final status is written, so a 409 in between is retried (bounded)."""
    deadline = time.monotonic() + 60
    while True:
        try:
            return call(*args, **kwargs)
        except HTTPConflict:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.05)  # retry until the lock is released, bounded by the deadline


def _creates(heat: Any, stack_id: str) -> int:
    return sum(e.resource_status == "CREATE_IN_PROGRESS"
               for e in heat.events.list(stack_id, resource_name="r"))


@pytest.mark.parametrize("type_name", builtin_types())
def test_every_type_through_the_api(server: KilnProcess, type_name: str) -> None:
    """The action sequence of tests/unit/engine/test_every_type.py, once per type,
    through kiln serve and python-heatclient."""
    sample = SAMPLES.get(type_name)
    assert sample is not None, f"add a sample for {type_name} to tests/support/all_types.py"
    heat: Any = heat_client(server.endpoint("demo"))
    name = "every-" + type_name.replace("::", "-").lower()
    stack_id = heat.stacks.create(stack_name=name, files=FILES,
                                  template=sample.template(sample.created, type_name),
                                  )["stack"]["id"]
    stack = _settle(heat, stack_id, sample)
    assert stack.stack_status == "CREATE_COMPLETE", stack.stack_status_reason
    for props, creates in ((sample.in_place, 1), (sample.replaced, 2)):
        if props is not None:
            _start(heat.stacks.update, stack_id, files=FILES,
                   template=sample.template(props, type_name))
            stack = _settle(heat, stack_id, sample)
            assert stack.stack_status == "UPDATE_COMPLETE", stack.stack_status_reason
            assert _creates(heat, stack_id) == creates   # 1: in place, 2: replaced
    for action, call in (("SUSPEND", heat.actions.suspend), ("RESUME", heat.actions.resume),
                         ("CHECK", heat.actions.check)):
        _start(call, stack_id)
        stack = _settle(heat, stack_id)
        assert stack.stack_status == f"{action}_COMPLETE", stack.stack_status_reason
    snapshot = _start(heat.stacks.snapshot, stack_id, "snap")
    _settle(heat, stack_id)
    assert heat.stacks.snapshot_show(stack_id, snapshot["id"])["snapshot"]["status"] == (
        "COMPLETE")
    _start(heat.stacks.restore, stack_id, snapshot["id"])
    stack = _settle(heat, stack_id, sample)
    assert stack.stack_status == "RESTORE_COMPLETE", stack.stack_status_reason
    _start(heat.stacks.delete, stack_id)
    try:
        stack = _settle(heat, stack_id)
    except HTTPNotFound:
        return   # the deleted stack is no longer found
    assert stack.stack_status == "DELETE_COMPLETE", stack.stack_status_reason
