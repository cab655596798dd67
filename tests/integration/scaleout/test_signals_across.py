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

from tests.integration.scaleout.conftest import Cluster, client, wait_for, wait_status

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
