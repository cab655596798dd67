"""Two ``kiln api`` processes and one ``kiln engine``: every action sent to either API
runs on the engine (the API processes run none), over the real broker and database."""

from __future__ import annotations

from collections.abc import Callable

import httpx

from tests.integration.scaleout.conftest import Cluster, client, wait_status
from tests.support.server import KilnProcess

TEMPLATE = {
    "heat_template_version": "2018-08-31",
    "parameters": {"length": {"type": "number", "default": 8}},
    "resources": {
        "word": {"type": "OS::Heat::RandomString",
                 "properties": {"length": {"get_param": "length"}}},
        "slow": {"type": "OS::Heat::TestResource",
                 "properties": {"value": "x", "action_wait_secs": {"create": 1,
                                                                   "update": 1}}},
    },
    "outputs": {"size": {"value": {"get_param": "length"}}},
}


def _ran_on(proc_logs: list[dict[str, object]], stack_id: str) -> bool:
    return any(r.get("stack_id") == stack_id and "admitted" in str(r.get("message", ""))
               for r in proc_logs)


def test_actions_sent_to_either_api_run_on_the_engine(
        db_url: str, cluster_factory: Callable[[str], Cluster]) -> None:
    cluster = cluster_factory(db_url)
    engine = cluster.engine()
    one, two = cluster.api(), cluster.api()
    with client(one) as c1, client(two) as c2:
        _create_update_delete(engine, one, two, c1, c2)


def _create_update_delete(engine: KilnProcess, one: KilnProcess, two: KilnProcess,
                          c1: httpx.Client, c2: httpx.Client) -> None:

    r = c1.post("/stacks", json={"stack_name": "split", "template": TEMPLATE})
    assert r.status_code == 201, r.text
    stack_id = r.json()["stack"]["id"]
    wait_status(c2, "split", "CREATE_COMPLETE")
    assert _ran_on(engine.log_records(), stack_id)

    r = c2.patch(f"/stacks/split/{stack_id}", json={"parameters": {"length": 12}})
    assert r.status_code == 202, r.text
    wait_status(c1, "split", "UPDATE_COMPLETE")
    outputs = c1.get(f"/stacks/split/{stack_id}/outputs/size").json()["output"]
    assert outputs["output_value"] == 12

    r = c1.delete(f"/stacks/split/{stack_id}")
    assert r.status_code == 204, r.text
    wait_status(c2, "split", "GONE", "DELETE_COMPLETE")
    # the API processes admitted, the engine ran: neither API ran an action
    for api in (one, two):
        assert not any("admitted" in str(r.get("message", "")) for r in api.log_records())
    ran = [r for r in engine.log_records() if "admitted" in str(r.get("message", ""))]
    assert len(ran) == 3, ran
