"""Requests that only the engine running a stack's action can serve, sent to an API
process that does not run it: forwarded to that engine (kiln.engine.service.forwarding)."""

from __future__ import annotations

from collections.abc import Callable

import httpx

from tests.integration.scaleout.conftest import Cluster, client, wait_for, wait_status


def _slow(create: int = 0, update: int = 0, value: str = "a") -> dict[str, object]:
    return {"heat_template_version": "2018-08-31", "resources": {"slow": {
        "type": "OS::Heat::TestResource",
        "properties": {"value": value,
                       "action_wait_secs": {"create": create, "update": update}}}}}


def _resource_status(c: httpx.Client, name: str, stack_id: str) -> str:
    r = c.get(f"/stacks/{name}/{stack_id}/resources/slow")
    return str(r.json()["resource"]["resource_status"]) if r.status_code == 200 else ""


def test_delete_sent_to_another_api_stops_the_running_create(
        sqlite_url: str, cluster_factory: Callable[[str], Cluster]) -> None:
    cluster = cluster_factory(sqlite_url)
    cluster.engine()
    one, two = cluster.api(), cluster.api()
    with client(one) as c1, client(two) as c2:
        r = c1.post("/stacks", json={"stack_name": "busy", "template": _slow(create=60)})
        assert r.status_code == 201, r.text
        stack_id = r.json()["stack"]["id"]
        # the engine runs the create (its resource is in progress)
        wait_for(lambda: _resource_status(c2, "busy", stack_id) == "CREATE_IN_PROGRESS", 30,
                 "the create to run on the engine")
        r = c2.delete(f"/stacks/busy/{stack_id}")
        assert r.status_code == 204, r.text  # Heat stops the action, then deletes
        wait_status(c1, "busy", "GONE", "DELETE_COMPLETE", timeout=30)


def _cancel(cluster: Cluster, action: str, final: str) -> None:
    cluster.engine()
    one, two = cluster.api(), cluster.api()
    with client(one) as c1, client(two) as c2:
        r = c1.post("/stacks", json={"stack_name": "cancel", "template": _slow()})
        assert r.status_code == 201, r.text
        stack_id = r.json()["stack"]["id"]
        wait_status(c1, "cancel", "CREATE_COMPLETE")
        r = c1.put(f"/stacks/cancel/{stack_id}",
                   json={"template": _slow(update=60, value="b")})
        assert r.status_code == 202, r.text
        wait_for(lambda: _resource_status(c2, "cancel", stack_id) == "UPDATE_IN_PROGRESS", 30,
                 "the update to run on the engine")
        r = c2.post(f"/stacks/cancel/{stack_id}/actions", json={action: None})
        assert r.status_code == 200, r.text
        wait_status(c1, "cancel", final, timeout=30)


def test_cancel_update_sent_to_another_api_rolls_back(
        sqlite_url: str, cluster_factory: Callable[[str], Cluster]) -> None:
    _cancel(cluster_factory(sqlite_url), "cancel_update", "ROLLBACK_COMPLETE")


def test_cancel_without_rollback_sent_to_another_api(
        sqlite_url: str, cluster_factory: Callable[[str], Cluster]) -> None:
    _cancel(cluster_factory(sqlite_url), "cancel_without_rollback", "UPDATE_FAILED")
