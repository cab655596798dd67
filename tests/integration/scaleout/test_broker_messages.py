"""What one stack action puts on the broker (docs/scaleout-sizing.md): no message per
resource; a create, an update and a delete sent to ``kiln api`` are one ``wake`` cast
each, and a hook clear forwarded to the engine holding the stack one ``invoke`` call,
seen by a tap on the deployment's exchange of the machine's RabbitMQ."""

from __future__ import annotations

from collections.abc import Callable

from tests.integration.scaleout.conftest import (
    STEADY,
    BrokerTap,
    Cluster,
    client,
    create_paused,
    wait_status,
)

#: resources in the stack whose actions are counted
RESOURCES = 20
TEMPLATE = {"heat_template_version": "2018-08-31",
            "parameters": {"length": {"type": "number", "default": 8}},
            "resources": {f"r{i}": {"type": "OS::Heat::RandomString",
                                    "properties": {"length": {"get_param": "length"}}}
                          for i in range(RESOURCES)}}


def test_one_message_per_stack_action_none_per_resource(
        postgresql_url: str, cluster_factory: Callable[[str], Cluster]) -> None:
    cluster = cluster_factory(postgresql_url)
    cluster.extra = {"kiln_engine": {"engine_dead_after": STEADY}}
    tap = BrokerTap(cluster.exchange, ["#"])
    try:
        cluster.engine()
        with client(cluster.api()) as c:
            stack: list[str] = []

            def sent_by(action: Callable[[], None]) -> list[str]:
                before = len(tap.drain(0.2))
                action()
                return [what for _, _, what in tap.drain(0.5)[before:]]

            def create() -> None:
                r = c.post("/stacks", json={"stack_name": "many", "template": TEMPLATE})
                assert r.status_code == 201, r.text
                stack.append(f"/stacks/many/{r.json()['stack']['id']}")
                wait_status(c, "many", "CREATE_COMPLETE")

            def update() -> None:
                r = c.patch(stack[0], json={"parameters": {"length": 9}})
                assert r.status_code == 202, r.text
                wait_status(c, "many", "UPDATE_COMPLETE")

            def delete() -> None:
                assert c.delete(stack[0]).status_code == 204
                wait_status(c, "many", "GONE", "DELETE_COMPLETE")

            for action in (create, update, delete):
                assert sent_by(action) == ["wake"], action.__name__

            path = create_paused(c, "held")

            def clear() -> None:
                r = c.post(f"{path}/resources/gate/signal",
                           json={"unset_hook": "pre-create"})
                assert r.status_code == 200, r.text
                wait_status(c, "held", "CREATE_COMPLETE")

            # the call (its reply goes to the API's reply queue, not this exchange); a
            # ping too only if the reply took longer than engine_life_check_timeout
            assert [w for w in sent_by(clear) if w != "ping"] == ["invoke"]
    finally:
        tap.close()
