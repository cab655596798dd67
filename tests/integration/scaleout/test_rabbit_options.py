"""``[oslo_messaging_rabbit]`` as oslo.messaging reads it, on the machine's RabbitMQ:
quorum queues (``rabbit_quorum_queue``) and TLS (``ssl``, ``ssl_ca_file``).

The broker is shared and never reconfigured: the quorum test declares its own queues
(its own exchange and topic) and deletes them after; RabbitMQ here has no TLS listener,
so the TLS test puts a TLS-terminating proxy (tests.support.tls_proxy, with a
certificate the test makes) in front of it.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.integration.scaleout.conftest import (
    HOOKED,
    Cluster,
    client,
    create_paused,
    wait_for,
    wait_status,
)
from tests.support.rabbitmq import URL
from tests.support.tls_proxy import TlsProxy


def _documented() -> dict[str, str]:
    """docs/deployment.md's ``[oslo_messaging_rabbit]``, as an operator pastes it."""
    import configparser
    import re

    from tests.support import docs

    (block,) = re.findall(
        r"```ini\n(.*?)```",
        docs.section(docs.page("deployment.md"), "Quorum queues and TLS"),
        re.S,
    )
    parser = configparser.ConfigParser()
    parser.read_string(block)
    return dict(parser["oslo_messaging_rabbit"])


def _run_across(cluster: Cluster, **api: Any) -> list[str]:
    """A create handed to the engine (a cast on the topic's queue) and a hook clear
    forwarded to it (a call on its own queue) through an API process started with
    ``api``; the engines' ids."""
    with client(cluster.api(**api)) as c:
        path = create_paused(c, "opts")
        r = c.post(f"{path}/resources/gate/signal", json={"unset_hook": "pre-create"})
        assert r.status_code == 200, r.text
        wait_status(c, "opts", "CREATE_COMPLETE")
        services = c.get("/services").json()["services"]
    return [str(s["engine_id"]) for s in services if s["binary"] == "heat-engine"]


def _queue_type_is(channel: Any, name: str, kind: str) -> bool:
    """Whether queue ``name`` exists and is of ``kind``: RabbitMQ refuses (406) a
    declaration whose ``x-queue-type`` differs from the queue's, and closes the
    channel."""
    import amqp

    try:
        channel.queue_declare(
            name, durable=True, passive=False, auto_delete=False, arguments={"x-queue-type": kind}
        )
    except amqp.exceptions.PreconditionFailed:
        return False
    return True


def test_quorum_queues(sqlite_url: str, cluster_factory: Callable[[str], Cluster]) -> None:
    import kombu

    cluster = cluster_factory(sqlite_url)
    # quorum queues are durable and never auto-deleted (RabbitMQ refuses that); the
    # queues left once the processes stop are deleted below
    documented = _documented()
    quorum = {k: documented[k] for k in ("rabbit_quorum_queue", "amqp_auto_delete")}
    assert quorum == {"rabbit_quorum_queue": "true", "amqp_auto_delete": "false"}
    cluster.extra = {"oslo_messaging_rabbit": {**quorum, "rabbit_transient_queues_ttl": 60}}
    topic = cluster.exchange
    engine_ids: list[str] = []
    try:
        cluster.engine()
        engine_ids = _run_across(cluster)
        assert len(engine_ids) == 1
        with kombu.Connection(URL, connect_timeout=5) as conn:
            for name in (topic, f"{topic}.{engine_ids[0]}"):
                assert _queue_type_is(conn.channel(), name, "quorum"), name
                assert not _queue_type_is(conn.channel(), name, "classic"), name
    finally:
        for proc in cluster.processes:
            proc.stop()
        with kombu.Connection(URL, connect_timeout=5) as conn:
            channel = conn.channel()
            for name in (topic, *(f"{topic}.{e}" for e in engine_ids)):
                with contextlib.suppress(Exception):
                    channel.queue_delete(name)
            for name in (topic, f"{topic}_fanout"):
                with contextlib.suppress(Exception):
                    channel.exchange_delete(name)


@pytest.mark.parametrize("trusted", [True, False], ids=["ssl_ca_file", "untrusted"])
def test_tls_to_the_broker(
    trusted: bool, tmp_path: Path, sqlite_url: str, cluster_factory: Callable[[str], Cluster]
) -> None:
    with TlsProxy(tmp_path) as proxy:
        cluster = cluster_factory(sqlite_url)
        url = f"rabbit://guest:guest@127.0.0.1:{proxy.port}/"
        documented = _documented()
        rabbit: dict[str, Any] = {"ssl": documented["ssl"]}
        assert documented["ssl_ca_file"]  # the operator's CA file: here the proxy's
        if trusted:
            rabbit["ssl_ca_file"] = str(proxy.cert)
        cluster.extra = {"oslo_messaging_rabbit": rabbit}
        if not trusted:
            # the certificate is refused: the API answers and admits, the broker is
            # unreachable (as when it is down), and no TLS session is ever made
            api = cluster.api(transport_url=url)
            with client(api) as c:
                r = c.post("/stacks", json={"stack_name": "tls", "template": HOOKED})
                assert r.status_code == 201, r.text
                assert c.get("/stacks/tls").json()["stack"]["stack_status"] == "CREATE_IN_PROGRESS"
            wait_for(lambda: proxy.refused > 0, 30, "the wake's TLS handshake to fail")
            assert proxy.accepted == 0
            return
        cluster.engine(transport_url=url)
        assert len(_run_across(cluster, transport_url=url)) == 1
        # the engine and the API each opened TLS sessions through the proxy
        assert proxy.accepted >= 2 and proxy.refused == 0
