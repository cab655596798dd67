"""Change sets and a stack's history (issue 28) in a deployment of several processes
(issue 24): a plan made on one ``kiln api`` process is shown and executed on another,
while a ``kiln engine`` process runs the update; it does exactly what it showed, once,
and a plan the stack moved away from is refused from either API process."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import Any

import httpx

from tests.integration.scaleout.conftest import Cluster, client, wait_status


def _template(value: str, extra: str | None = None) -> dict[str, Any]:
    resources: dict[str, Any] = {
        "r": {"type": "OS::Heat::TestResource", "properties": {"value": value}},
        "keep": {"type": "OS::Heat::RandomString", "properties": {"length": 12}},
    }
    if extra is not None:
        resources[extra] = {"type": "OS::Heat::None"}
    return {"heat_template_version": "2018-08-31", "resources": resources,
            "outputs": {"v": {"value": {"get_attr": ["r", "output"]}}}}


def _create(c: httpx.Client, name: str, template: dict[str, Any]) -> str:
    r = c.post("/stacks", json={"stack_name": name, "template": template})
    assert r.status_code == 201, r.text
    wait_status(c, name, "CREATE_COMPLETE")
    return f"/stacks/{name}/{r.json()['stack']['id']}"


def _resources(c: httpx.Client, path: str) -> dict[str, dict[str, Any]]:
    return {r["resource_name"]: r for r in c.get(f"{path}/resources").json()["resources"]}


def _output(c: httpx.Client, path: str) -> Any:
    return c.get(f"{path}/outputs/v").json()["output"]["output_value"]


def _refused(r: httpx.Response) -> None:
    assert r.status_code == 409, r.text
    assert r.json()["error"]["type"] == "InvalidChangeSetStatus", r.text


def test_a_change_set_made_on_one_api_is_executed_on_another(
    server_db: str, cluster_factory: Callable[[str], Cluster]
) -> None:
    cluster = cluster_factory(server_db)
    cluster.engine()
    a, b = client(cluster.api()), client(cluster.api())
    with contextlib.closing(a), contextlib.closing(b):
        path = _create(a, "planned", _template("one"))
        before = _resources(a, path)
        made = a.post(f"{path}/changesets", json={"name": "v2",
                                                  "template": _template("two", "added")})
        assert made.status_code == 201, made.text
        # a second plan from the same stack: it goes stale once the first runs
        other = a.post(f"{path}/changesets", json={"name": "other",
                                                   "template": _template("three")})
        assert other.status_code == 201, other.text
        shown = b.get(f"{path}/changesets/v2")
        assert shown.status_code == 200, shown.text
        cs = shown.json()["changeset"]
        assert cs["execution_status"] == "AVAILABLE"
        planned = {c["logical_resource_id"]: c["action"] for c in cs["changes"]}
        assert planned == {"r": "Modify", "added": "Add"}
        # the stack is untouched until executed
        assert _output(b, path) == "one"

        r = b.post(f"{path}/changesets/v2/execute")
        assert r.status_code == 202, r.text
        wait_status(b, "planned", "UPDATE_COMPLETE")
        after = _resources(b, path)
        assert set(after) == {"r", "keep", "added"}
        # exactly the planned change: r updated in place, keep untouched
        assert after["r"]["physical_resource_id"] == before["r"]["physical_resource_id"]
        assert after["keep"]["updated_time"] == before["keep"]["updated_time"]
        assert after["keep"]["resource_status"] == "CREATE_COMPLETE"
        assert _output(a, path) == "two"

        # executing twice, from either process
        _refused(b.post(f"{path}/changesets/v2/execute"))
        _refused(a.post(f"{path}/changesets/v2/execute"))
        # the other plan is now OBSOLETE, seen and refused from both
        for c in (a, b):
            stale = c.get(f"{path}/changesets/other").json()["changeset"]
            assert stale["execution_status"] == "OBSOLETE", stale
            _refused(c.post(f"{path}/changesets/other/execute"))
        assert _output(b, path) == "two"
        assert b.get("/stacks/planned").json()["stack"]["stack_status"] == "UPDATE_COMPLETE"


def test_a_history_restore_sent_to_another_api(
    server_db: str, cluster_factory: Callable[[str], Cluster]
) -> None:
    cluster = cluster_factory(server_db)
    cluster.engine()
    a, b = client(cluster.api()), client(cluster.api())
    with contextlib.closing(a), contextlib.closing(b):
        path = _create(a, "restored", _template("one"))
        r = a.put(path, json={"template": _template("two", "added")})
        assert r.status_code == 202, r.text
        wait_status(a, "restored", "UPDATE_COMPLETE")
        versions = b.get(f"{path}/versions").json()["versions"]
        assert [(v["version"], v["action"]) for v in versions] == [(1, "CREATE"), (2, "UPDATE")]
        made = b.post(f"{path}/versions/1/changeset", json={"name": "back-to-1"})
        assert made.status_code in (200, 201), made.text
        planned = {c["logical_resource_id"]: c["action"]
                   for c in made.json()["changeset"]["changes"]}
        assert planned == {"r": "Modify", "added": "Remove"}
        r = a.post(f"{path}/changesets/back-to-1/execute")
        assert r.status_code == 202, r.text
        wait_status(b, "restored", "UPDATE_COMPLETE")
        assert set(_resources(b, path)) == {"r", "keep"}
        assert _output(b, path) == "one"
        versions = a.get(f"{path}/versions").json()["versions"]
        assert [v["version"] for v in versions] == [1, 2, 3]
        _refused(b.post(f"{path}/changesets/back-to-1/execute"))
