"""Each engine's own queue (docs/deployment.md, "Who does what"): every ``kiln engine``
consumes the topic ``[kiln_engine] rpc_topic`` of the ``control_exchange`` and a queue of
its own (``server`` = its engine id), seen on the machine's RabbitMQ; an API process
wakes an engine on the topic, and a request for a stack an engine holds is sent to that
engine's own queue only."""

from __future__ import annotations

from collections.abc import Callable

import kombu
import sqlalchemy as sa

from tests.integration.scaleout.conftest import (
    STEADY,
    BrokerTap,
    Cluster,
    client,
    create_paused,
    wait_for,
    wait_status,
)
from tests.support.rabbitmq import URL


def _consumers(queue: str) -> int | None:
    """How many consume ``queue`` on the broker (None: no such queue); a passive
    declare, which changes nothing."""
    with kombu.Connection(URL, connect_timeout=5) as conn:
        channel = conn.channel()
        try:
            return int(channel.queue_declare(queue, passive=True).consumer_count)
        except Exception:  # noqa: BLE001 - NOT_FOUND
            return None


def test_each_engine_has_its_own_queue_and_a_forwarded_call_reaches_the_holder(
        postgresql_url: str, cluster_factory: Callable[[str], Cluster]) -> None:
    cluster = cluster_factory(postgresql_url)
    cluster.extra = {"kiln_engine": {"engine_dead_after": STEADY}}
    topic = cluster.exchange  # the tests' rpc_topic, as their control_exchange
    tap = BrokerTap(cluster.exchange, ["#"])
    try:
        cluster.engine()
        cluster.engine()
        api = cluster.api()
        with client(api) as c:
            engines = wait_for(lambda: (lambda rows: rows if len(rows) == 2 else None)(
                [s["engine_id"] for s in c.get("/services").json()["services"]
                 if s["binary"] == "heat-engine" and s["status"] == "up"]), 30,
                "two engines up")
            # both engines on the topic; each alone on its own queue
            wait_for(lambda: _consumers(topic) == 2 and all(
                _consumers(f"{topic}.{e}") == 1 for e in engines), 30,
                "the topic queue and each engine's own queue consumed")

            path = create_paused(c, "held")
            stack_id = path.rsplit("/", 1)[1]
            db = sa.create_engine(postgresql_url)
            try:
                with db.connect() as conn:
                    holder = conn.execute(sa.text("SELECT engine_id FROM stack WHERE id = :i"),
                                          {"i": stack_id}).scalar_one()
            finally:
                db.dispose()
            assert holder in engines
            woken = [s for s in tap.drain() if s[2] == "wake"]
            assert [key for _, key, _ in woken] == [topic], woken

            r = c.post(f"{path}/resources/gate/signal", json={"unset_hook": "pre-create"})
            assert r.status_code == 200, r.text
            wait_status(c, "held", "CREATE_COMPLETE")
            sent = [s for s in tap.drain() if s[2] in ("invoke", "ping")]
            # one invoke, to the holder's queue alone (and a ping there, if its reply
            # was later than engine_life_check_timeout)
            assert {key for _, key, _ in sent} == {f"{topic}.{holder}"}, sent
            assert [what for _, _, what in sent].count("invoke") == 1, sent
    finally:
        tap.close()
