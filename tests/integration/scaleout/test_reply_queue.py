"""The reply queue an API process's calls to engines wait on is made at start, in the
background (kiln.rpc.client). Making it may fail outright instead of waiting for the
broker (a broker that refuses the login while the deployment tool has not yet made the
user, say): before, the process then refused every forwarded request (503) until it was
restarted; now it tries again with a growing delay and serves them once it succeeds.

The client and the engine's side are oslo.messaging on the machine's RabbitMQ; only the
first attempt to make the reply queue is made to fail (oslo.messaging's own method is
called from the second on).
"""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
import warnings
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from kiln.conf import CONF
from kiln.conf_loader import load_config
from kiln.engine.model.context import RequestContext
from kiln.errors import ServiceUnavailable
from kiln.oslo_notifier import _oslo_messaging
from kiln.rpc import transport as rpc_transport
from kiln.rpc.client import EngineClient
from tests.support.rabbitmq import TRANSPORT_URL


@pytest.fixture
def broker_conf(rabbit: None, tmp_path: Path) -> Iterator[Any]:
    name = f"kiln-test-{uuid.uuid4().hex[:10]}"
    path = tmp_path / "kiln.conf"
    path.write_text(f"[DEFAULT]\ntransport_url = {TRANSPORT_URL}\ncontrol_exchange = {name}\n"
                    "engine_life_check_timeout = 1\nrpc_response_timeout = 10\n"
                    f"[kiln_engine]\nrpc_topic = {name}\n"
                    "[oslo_messaging_rabbit]\namqp_auto_delete = true\n")
    yield load_config([str(path)])
    CONF.clear()


class Engine:
    """What an engine's endpoint answers (kiln.rpc.server.Endpoint's ``invoke``)."""

    def invoke(self, ctxt: Mapping[str, Any], name: str,
               kwargs: Mapping[str, Any]) -> dict[str, Any]:
        return {"reply": f"{name} run"}


def test_a_failed_reply_queue_is_made_again_and_calls_then_go_through(
        broker_conf: Any, caplog: pytest.LogCaptureFixture) -> None:
    om = _oslo_messaging()
    engine_transport = rpc_transport.rpc_transport(broker_conf)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        server = om.get_rpc_server(engine_transport, rpc_transport.target(broker_conf, "e1"),
                                   [Engine()], executor="threading")
    server.start()
    client = EngineClient(broker_conf, runs_actions=False)
    driver = client._transport._driver
    real = driver._get_reply_q
    attempts: list[float] = []

    def first_refused() -> Any:
        attempts.append(time.monotonic())
        if len(attempts) == 1:
            raise OSError("ACCESS_REFUSED - Login was refused")
        return real()

    driver._get_reply_q = first_refused
    ctx = RequestContext(project_id="p", user_id="u", username="u", roles=("member",))
    try:
        with caplog.at_level(logging.WARNING, logger="kiln.rpc.client"):
            client.open_replies()

            async def call_until_served() -> Any:
                deadline = time.monotonic() + 20
                while True:
                    try:
                        return await client.invoke("stack_show", ctx, {})
                    except ServiceUnavailable:  # each waited engine_life_check_timeout
                        if time.monotonic() > deadline:
                            raise

            answer = asyncio.run(call_until_served())
        assert answer == "stack_show run"
        # made again after a delay, not in a loop (a call asks the driver for it too)
        assert len(attempts) >= 2, attempts
        assert attempts[1] - attempts[0] >= 0.4, attempts
        assert any("trying again" in r.getMessage() for r in caplog.records)
    finally:
        client.close()
        server.stop()
        server.wait()
        engine_transport.cleanup()
