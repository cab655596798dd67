"""Signals sent to an API process that does not run the stack (issue 24): before, the
second process answered 200 and the signal was lost; now it goes on to the engine running
the stack, which handles it before the sender is answered.

Each test starts one ``kiln engine`` and two ``kiln api`` processes; the stack is created
through the first API and signalled through the second.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import httpx
import pytest
from heatclient import exc as heat_exc

from tests.integration.scaleout.conftest import Cluster, client, wait_for, wait_status
from tests.support.clients import heat_client

WAITING = {
    "heat_template_version": "2018-08-31",
    "resources": {
        "handle": {"type": "OS::Heat::WaitConditionHandle"},
        "wait": {"type": "OS::Heat::WaitCondition",
                 "properties": {"handle": {"get_resource": "handle"}, "count": 1,
                                "timeout": 120}},
    },
    "outputs": {"data": {"value": {"get_attr": ["wait", "data"]}}},
}

HOOKED_TEMPLATE = {
    "heat_template_version": "2018-08-31",
    "resources": {"gate": {"type": "OS::Heat::None"},
                  "after": {"type": "OS::Heat::None", "depends_on": ["gate"]}},
}
HOOKED_ENV = {"resource_registry": {"resources": {"gate": {"hooks": "pre-create"}}}}


def _resource(c: httpx.Client, path: str, name: str) -> dict[str, Any]:
    r = c.get(f"{path}/resources/{name}")
    r.raise_for_status()
    return dict(r.json()["resource"])


def _create(c: httpx.Client, name: str, template: dict[str, Any],
            environment: dict[str, Any] | None = None) -> str:
    body: dict[str, Any] = {"stack_name": name, "template": template}
    if environment:
        body["environment"] = environment
    r = c.post("/stacks", json=body)
    assert r.status_code == 201, r.text
    return f"/stacks/{name}/{r.json()['stack']['id']}"


def test_wait_condition_signal_to_the_other_api(
        cluster_factory: Callable[[str], Cluster], db_url: str) -> None:
    cluster = cluster_factory(db_url)
    cluster.engine()
    one, two = cluster.api(), cluster.api()
    with client(one) as c1, client(two) as c2:
        path = _create(c1, "waiting", WAITING)
        # the engine runs the stack and waits on the handle's signal
        wait_for(lambda: _resource(c1, path, "wait")["resource_status"]
                 == "CREATE_IN_PROGRESS", what="the wait condition to wait")
        r = c2.post(f"{path}/resources/handle/signal",
                    json={"status": "SUCCESS", "reason": "ok", "data": "from-api-two",
                          "id": "1"})
        assert r.status_code == 200, r.text
        wait_status(c1, "waiting", "CREATE_COMPLETE")
        out = c1.get(f"{path}/outputs/data").json()["output"]["output_value"]
        assert "from-api-two" in str(out)


def test_hook_cleared_through_the_other_api(
        cluster_factory: Callable[[str], Cluster], db_url: str) -> None:
    cluster = cluster_factory(db_url)
    cluster.engine()
    one, two = cluster.api(), cluster.api()
    with client(one) as c1, client(two) as c2:
        path = _create(c1, "hooked", HOOKED_TEMPLATE, HOOKED_ENV)
        wait_for(lambda: any("paused until Hook pre-create" in str(e["resource_status_reason"])
                             for e in c1.get(f"{path}/events").json()["events"]),
                 what="the pre-create hook to pause the create")
        # an unknown hook is refused by the engine holding the stack, and the refusal
        # reaches the sender through the second API in Heat's error format
        r = c2.post(f"{path}/resources/gate/signal", json={"unset_hook": "pre-delete"})
        assert r.status_code == 400, r.text
        assert r.json()["error"]["type"] == "InvalidBreakPointHook", r.text
        assert c1.get(path).json()["stack"]["stack_status"] == "CREATE_IN_PROGRESS"
        r = c2.post(f"{path}/resources/gate/signal", json={"unset_hook": "pre-create"})
        assert r.status_code == 200, r.text
        wait_status(c1, "hooked", "CREATE_COMPLETE")


def _value_template(value: str) -> dict[str, Any]:
    return {"heat_template_version": "2018-08-31",
            "resources": {"gate": {"type": "OS::Heat::Value",
                                   "properties": {"value": value}}},
            "outputs": {"v": {"value": {"get_attr": ["gate", "value"]}}}}


BREAKPOINTS = {"resource_registry": {"resources": {
    "gate": {"hooks": ["pre-update", "pre-delete"]}}}}


def _paused(hc: Any, sid: str, hook: str) -> bool:
    return any(f"paused until Hook {hook}" in str(e.resource_status_reason)
               for e in hc.events.list(sid, resource_name="gate"))


def test_pre_update_and_pre_delete_hooks_cleared_through_the_other_api(
        server_db: str, cluster_factory: Callable[[str], Cluster]) -> None:
    """On PostgreSQL and MariaDB, with python-heatclient: the update and the delete are
    accepted by one API process, the engine pauses them at the resource's breakpoint, and
    the hook clear sent to the other API process lets each one complete."""
    cluster = cluster_factory(server_db)
    cluster.engine()
    h1 = heat_client(cluster.api().endpoint("demo"))
    h2 = heat_client(cluster.api().endpoint("demo"))
    sid = h1.stacks.create(stack_name="breaks", template=_value_template("one"),
                           environment=BREAKPOINTS)["stack"]["id"]
    wait_for(lambda: h1.stacks.get(sid).stack_status == "CREATE_COMPLETE", 60, "created")

    h1.stacks.update(sid, template=_value_template("two"), environment=BREAKPOINTS)
    wait_for(lambda: _paused(h1, sid, "pre-update"), 60, "the pre-update hook")
    assert h1.stacks.get(sid).stack_status == "UPDATE_IN_PROGRESS"
    # the engine holding the stack refuses a hook the resource is not paused at
    with pytest.raises(heat_exc.HTTPBadRequest, match="pre-delete"):
        h2.resources.signal(sid, "gate", data={"unset_hook": "pre-delete"})
    h2.resources.signal(sid, "gate", data={"unset_hook": "pre-update"})
    wait_for(lambda: h1.stacks.get(sid).stack_status != "UPDATE_IN_PROGRESS", 60,
             "the update to end")
    assert h1.stacks.get(sid).stack_status == "UPDATE_COMPLETE"
    assert h1.stacks.output_show(sid, "v")["output"]["output_value"] == "two"

    h1.stacks.delete(sid)
    wait_for(lambda: _paused(h1, sid, "pre-delete"), 60, "the pre-delete hook")
    assert h1.stacks.get(sid).stack_status == "DELETE_IN_PROGRESS"
    h2.resources.signal(sid, "gate", data={"unset_hook": "pre-delete"})
    wait_for(lambda: sid not in [s.id for s in h1.stacks.list()], 60, "the delete")
