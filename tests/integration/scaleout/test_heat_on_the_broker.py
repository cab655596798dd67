"""A Heat on the same broker never sees Kiln's messages (docs/deployment.md, "Who does
what"): while a deployment of ``kiln api`` and ``kiln engine`` processes creates a
stack, forwards a hook clear to the engine holding it and deletes it, a queue bound as
Heat's engine binds its queues receives nothing, and the notifications go to the
notification topic on the ``control_exchange`` as documented.

Heat's engine (heat.engine.service, heat.engine.worker) consumes three topics of its
``control_exchange``, each with a queue of its own per engine (``server``) and a fanout
exchange: ``engine`` (``server`` = host), ``engine_worker`` and ``heat-engine-listener``
(``server`` = engine id). The deployment here has its own ``control_exchange``, standing
for ``heat`` (shared by Heat and Kiln in the documented configuration) without touching
the broker's ``heat`` exchange.
"""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import Callable

import kombu

from tests.integration.scaleout.conftest import (
    STEADY,
    BrokerTap,
    Cluster,
    client,
    create_paused,
    wait_status,
)
from tests.support.rabbitmq import URL

#: Heat's engine's RPC topics (heat.rpc.api, heat.rpc.worker_api)
HEAT_TOPICS = ("engine", "engine_worker", "heat-engine-listener")


def test_a_heat_engine_on_the_broker_receives_none_of_kilns_messages(
        postgresql_url: str, cluster_factory: Callable[[str], Cluster]) -> None:
    cluster = cluster_factory(postgresql_url)
    notices = f"kiln-test-notices-{uuid.uuid4().hex[:8]}"
    cluster.extra = {"oslo_messaging_notifications": {"driver": "messagingv2",
                                                      "topics": notices},
                     "kiln_engine": {"engine_dead_after": STEADY}}
    heat = BrokerTap(cluster.exchange,
                     [key for t in HEAT_TOPICS for key in (t, f"{t}.*")],
                     fanouts=tuple(f"{t}_fanout" for t in HEAT_TOPICS))
    everything = BrokerTap(cluster.exchange, ["#"])
    try:
        cluster.engine()
        with client(cluster.api()) as c:
            path = create_paused(c, "seen")
            r = c.post(f"{path}/resources/gate/signal", json={"unset_hook": "pre-create"})
            assert r.status_code == 200, r.text
            wait_status(c, "seen", "CREATE_COMPLETE")
            assert c.delete(path).status_code == 204
            wait_status(c, "seen", "GONE", "DELETE_COMPLETE")
        sent = everything.drain(2.0)
        assert heat.drain(0.5) == []
        # what the deployment sent (so the taps were listening): the wake on Kiln's topic,
        # the hook clear to the engine's own queue, the notifications on their topic
        topic = cluster.exchange  # the tests' rpc_topic
        assert {key for _, key, what in sent if what == "wake"} == {topic}, sent
        assert {key.split(".")[0] for _, key, what in sent if what == "invoke"} == {topic}
        notified = [(key, what) for _, key, what in sent if what.startswith("orchestration.")]
        for event in ("create.start", "create.end", "delete.start", "delete.end"):
            assert (f"{notices}.info", f"orchestration.stack.{event}") in notified, notified
        assert {ex for ex, _, _ in sent} == {cluster.exchange}
        assert not [s for s in sent if s[1].split(".")[0] in HEAT_TOPICS]
    finally:
        heat.close()
        everything.close()
        # the notifier's queues (named after the topic alone)
        with kombu.Connection(URL, connect_timeout=5) as conn:
            for priority in ("info", "error"):
                with contextlib.suppress(Exception):
                    channel = conn.channel()
                    channel.queue_delete(f"{notices}.{priority}")
                    channel.close()
