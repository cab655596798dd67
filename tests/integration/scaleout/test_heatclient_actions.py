"""The other stack actions through python-heatclient against two ``kiln api`` processes
and one ``kiln engine``: suspend/resume/check/snapshot are resumed by the engine from
what the API stored; abandon, adopt and restore (whose data an engine cannot read back
from the database) are run on an engine with ``invoke``. Errors an engine raises come
back as Heat's error body."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from heatclient import exc as heat_exc

from tests.integration.scaleout.conftest import Cluster, wait_for
from tests.support.clients import heat_client

TEMPLATE = {"heat_template_version": "2018-08-31",
            "resources": {"r": {"type": "OS::Heat::RandomString",
                                "properties": {"length": 9}}},
            "outputs": {"v": {"value": {"get_attr": ["r", "value"]}}}}


def _settled(hc: Any, sid: str) -> Any:
    return wait_for(lambda: (lambda s: s if not s.stack_status.endswith("IN_PROGRESS")
                             else None)(hc.stacks.get(sid)), 60, f"stack {sid}")


def test_every_action_through_either_api(
        sqlite_url: str, cluster_factory: Callable[[str], Cluster]) -> None:
    cluster = cluster_factory(sqlite_url)
    cluster.engine()
    h1 = heat_client(cluster.api().endpoint("demo"))
    h2 = heat_client(cluster.api().endpoint("demo"))
    sid = h1.stacks.create(stack_name="acts", template=TEMPLATE)["stack"]["id"]
    assert _settled(h2, sid).stack_status == "CREATE_COMPLETE"
    value = h2.stacks.output_show(sid, "v")["output"]["output_value"]

    for action, call in (("SUSPEND", h1.actions.suspend), ("RESUME", h2.actions.resume),
                         ("CHECK", h1.actions.check)):
        call(sid)
        assert _settled(h2, sid).stack_status == f"{action}_COMPLETE"

    snap = h2.stacks.snapshot(sid, "s1")
    wait_for(lambda: h1.stacks.snapshot_show(sid, snap["id"])["snapshot"]["status"]
             == "COMPLETE", 60, "the snapshot")
    h1.stacks.restore(sid, snap["id"])
    assert _settled(h2, sid).stack_status == "RESTORE_COMPLETE"
    assert h1.stacks.output_show(sid, "v")["output"]["output_value"] == value

    # an error raised on the engine is the API's error, as Heat renders it
    with pytest.raises(heat_exc.HTTPNotFound):
        h1.stacks.restore(sid, "00000000-0000-0000-0000-000000000000")

    data = h2.stacks.abandon(sid)
    assert data["resources"]["r"]["type"] == "OS::Heat::RandomString"
    wait_for(lambda: sid not in [s.id for s in h1.stacks.list()], 60, "abandoned")
    adopted = h1.stacks.create(stack_name="acts2", adopt_stack_data=json.dumps(data),
                               template=TEMPLATE)["stack"]["id"]
    assert _settled(h2, adopted).stack_status == "ADOPT_COMPLETE"
    assert h2.stacks.output_show(adopted, "v")["output"]["output_value"] == value

    services = h1.services.list()
    engines = [s for s in services if s.binary == "heat-engine"]
    assert [s.status for s in engines] == ["up"]
    assert sorted(s.binary for s in services) == ["heat-engine", "kiln-api", "kiln-api"]


def test_suspend_resume_check_and_snapshots_on_the_servers_databases(
        server_db: str, cluster_factory: Callable[[str], Cluster]) -> None:
    """On PostgreSQL and MariaDB: every action is sent to the API process that did not
    create the stack and run by the engine; snapshots are listed, shown, restored and
    deleted through it."""
    cluster = cluster_factory(server_db)
    cluster.engine()
    h1 = heat_client(cluster.api().endpoint("demo"))
    h2 = heat_client(cluster.api().endpoint("demo"))
    sid = h1.stacks.create(stack_name="acts", template=TEMPLATE)["stack"]["id"]
    assert _settled(h1, sid).stack_status == "CREATE_COMPLETE"
    value = h1.stacks.output_show(sid, "v")["output"]["output_value"]

    for action, call in (("SUSPEND", h2.actions.suspend), ("RESUME", h2.actions.resume),
                         ("CHECK", h2.actions.check)):
        call(sid)
        assert _settled(h1, sid).stack_status == f"{action}_COMPLETE"
        assert h1.resources.get(sid, "r").resource_status == f"{action}_COMPLETE"

    snap = h2.stacks.snapshot(sid, "s1")
    wait_for(lambda: h2.stacks.snapshot_show(sid, snap["id"])["snapshot"]["status"]
             == "COMPLETE", 60, "the snapshot")
    assert _settled(h1, sid).stack_status == "SNAPSHOT_COMPLETE"
    listed = h2.stacks.snapshot_list(sid)["snapshots"]
    assert [(s["id"], s["name"], s["status"]) for s in listed] == [
        (snap["id"], "s1", "COMPLETE")]
    shown = h2.stacks.snapshot_show(sid, snap["id"])["snapshot"]
    assert shown["data"]["resources"]["r"]["type"] == "OS::Heat::RandomString"

    # a resource added after the snapshot; the restore through the other API takes the
    # stack back to what the snapshot holds
    h1.stacks.update(sid, template={**TEMPLATE, "resources": {
        **TEMPLATE["resources"], "extra": {"type": "OS::Heat::None"}}})
    assert _settled(h1, sid).stack_status == "UPDATE_COMPLETE"
    assert sorted(r.resource_name for r in h1.resources.list(sid)) == ["extra", "r"]
    h2.stacks.restore(sid, snap["id"])
    assert _settled(h1, sid).stack_status == "RESTORE_COMPLETE"
    assert [r.resource_name for r in h1.resources.list(sid)] == ["r"]
    assert h1.stacks.output_show(sid, "v")["output"]["output_value"] == value

    h2.stacks.snapshot_delete(sid, snap["id"])
    assert h1.stacks.snapshot_list(sid)["snapshots"] == []
    with pytest.raises(heat_exc.HTTPNotFound):
        h2.stacks.snapshot_show(sid, snap["id"])
    with pytest.raises(heat_exc.HTTPNotFound):
        h2.stacks.restore(sid, snap["id"])
    h2.stacks.delete(sid)
    wait_for(lambda: sid not in [s.id for s in h1.stacks.list()], 60, "deleted")
