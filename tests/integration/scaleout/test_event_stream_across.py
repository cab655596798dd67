"""The live event stream (``GET .../events?stream=true``) opened on a ``kiln api``
process while a ``kiln engine`` runs the stack (issue 24): the API process runs no action,
so every event it streams was written by the engine; it re-reads the database while the
stack is IN_PROGRESS (``[kiln_api] event_stream_recheck_interval``). Every event arrives
once, in the order the list gives, and the stream ends with the stack's deletion.
"""

from __future__ import annotations

from collections.abc import Callable

from tests.integration.scaleout.conftest import Cluster, client
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


def _is_stack(stack_id: str, status: str) -> Callable[[Message], bool]:
    def match(m: Message) -> bool:
        if m.event != "event":
            return False
        data = m.json()
        return bool(data["physical_resource_id"] == stack_id
                    and data["resource_status"] == status)
    return match


def test_stream_on_an_api_while_the_engine_runs(
        cluster_factory: Callable[[str], Cluster], db_url: str) -> None:
    cluster = cluster_factory(db_url)
    cluster.extra = {"kiln_api": {"event_stream_recheck_interval": 0.5}}
    cluster.engine()
    one, two = cluster.api(), cluster.api()
    with client(one) as c1, client(two) as c2:
        r = c1.post("/stacks", json={"stack_name": "streamed", "template": TEMPLATE,
                                     "environment": HOOKED})
        assert r.status_code == 201, r.text
        stack_id = r.json()["stack"]["id"]
        path = f"/stacks/streamed/{stack_id}"
        # opened on the other API process: neither runs the create
        with EventStream(c2, path + "/events?stream=true") as stream:
            assert stream.response.headers["content-type"].startswith("text/event-stream")
            paused = stream.until(lambda m: m.event == "event"
                                  and m.json()["resource_name"] == "gate"
                                  and "paused until Hook pre-create"
                                  in m.json()["resource_status_reason"])
            assert c1.get(path).json()["stack"]["stack_status"] == "CREATE_IN_PROGRESS"
            r = c1.post(path + "/resources/gate/signal", json={"unset_hook": "pre-create"})
            assert r.status_code == 200, r.text
            created = stream.until(_is_stack(stack_id, "CREATE_COMPLETE"))
            done = [(m.json()["resource_name"], m.json()["resource_status"])
                    for m in created]
            assert ("last", "CREATE_COMPLETE") in done
            # every event of the create once, in the order the list gives them
            listed = c1.get(path + "/events", params={"sort_dir": "asc"}).json()["events"]
            assert [m.id for m in paused + created] == [e["id"] for e in listed]
            r = c1.delete(path)
            assert r.status_code == 204, r.text
            deleted = stream.until(_is_stack(stack_id, "DELETE_COMPLETE"))
            end = stream.next_message()
            assert end is not None and end.event == "end", end
            assert stream.next_message() is None  # the server ended the response
    streamed = [m.id for m in paused + created + deleted]
    assert len(set(streamed)) == len(streamed), "an event was streamed twice"
    # every resource's create and delete, and the stack's own: nothing was missed
    seen = {(m.json()["resource_name"], m.json()["resource_status"])
            for m in paused + created + deleted}
    for name in ("first", "gate", "last"):
        assert (name, "CREATE_COMPLETE") in seen and (name, "DELETE_COMPLETE") in seen
    assert ("streamed", "DELETE_IN_PROGRESS") in seen
