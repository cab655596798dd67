"""The order of a graceful stop, observed on a real socket with a stand-in engine and app.

The engine is replaced by a recorder (this is about the server's sequencing, not the
engine): a request in flight when the stop arrives must complete, new connections must
be refused from then on, and the engine must be stopped only after the request finished.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse
from starlette.routing import Route

import kiln.api.app
import kiln.server
from kiln.conf import CONF
from kiln.conf_loader import load_config
from tests.support.ports import free_port


@pytest.fixture(autouse=True)
def _restore_conf() -> Iterator[None]:
    yield
    CONF.clear()


class RecordingService:
    def __init__(self, events: list[str]) -> None:
        self.events = events

    async def start(self) -> None:
        self.events.append("engine started")

    async def stop(self) -> None:
        self.events.append("engine stopped")

    def ec2_keypair_revocations(self) -> int:
        """What the CFN API's keypair cache asks the service (none revoked here)."""
        return 0


class NoAlarms:
    """The alarm side of a process whose engine is a recording stand-in: nothing to
    evaluate, and no CloudWatch service under the CloudWatch app (no request reaches it:
    the tests are about the native API)."""

    alarms: Any = None
    cloudwatch: Any = None

    def start(self) -> None:
        pass

    async def stop(self) -> None:
        pass


async def wait_until_listening(port: int, seconds: float = 60.0) -> None:
    """Bounded by time, not by tries: a loaded machine starts the server slowly."""
    deadline = asyncio.get_running_loop().time() + seconds
    while asyncio.get_running_loop().time() < deadline:
        try:
            _, writer = await asyncio.open_connection("127.0.0.1", port)
        except OSError:
            await asyncio.sleep(0.01)  # readiness poll, bounded by the deadline
            continue
        writer.close()
        await writer.wait_closed()
        return
    raise AssertionError("server never listened")


async def wait_until_refused(port: int, seconds: float = 60.0) -> None:
    """Bounded by time, not by tries, like wait_until_listening."""
    deadline = asyncio.get_running_loop().time() + seconds
    while asyncio.get_running_loop().time() < deadline:
        try:
            _, writer = await asyncio.open_connection("127.0.0.1", port)
        except ConnectionRefusedError:
            return
        except ConnectionResetError:
            # queued on the listener as it closed: reset by the kernel; try again
            await asyncio.sleep(0.01)
            continue
        writer.close()
        await writer.wait_closed()
        await asyncio.sleep(0.01)  # poll for the listener to close, bounded by the loop
    raise AssertionError("listener still accepting after stop")


async def test_stop_refuses_new_connections_finishes_requests_then_stops_engine(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    events: list[str] = []
    entered, release = asyncio.Event(), asyncio.Event()

    async def slow(request: Request) -> PlainTextResponse:
        entered.set()
        await release.wait()
        events.append("request finished")
        return PlainTextResponse("done")

    def fake_app(service: Any, conf: Any) -> Starlette:
        return Starlette(routes=[Route("/slow", slow)])

    monkeypatch.setattr(kiln.api.app, "create_app", fake_app)
    monkeypatch.setattr(kiln.server, "build_service",
                        lambda conf, role: RecordingService(events))
    monkeypatch.setattr(kiln.server, "build_alarms", lambda conf, service, role: NoAlarms())
    port = free_port()
    conf_file = tmp_path / "kiln.conf"
    conf_file.write_text(f"[DEFAULT]\nstate_path = {tmp_path}/state\n"
                         f"[heat_api]\nbind_port = {port}\n"
                         f"[heat_api_cfn]\nbind_port = {free_port()}\n"
                         f"[heat_api_cloudwatch]\nbind_port = {free_port()}\n")
    conf = load_config([str(conf_file)])
    stop = asyncio.Event()
    server = asyncio.create_task(kiln.server.run(conf, "all", stop=stop))
    await wait_until_listening(port)
    async with httpx.AsyncClient(timeout=60) as client:
        in_flight = asyncio.create_task(client.get(f"http://127.0.0.1:{port}/slow"))
        await entered.wait()
        stop.set()
        await wait_until_refused(port)
        assert events == ["engine started"]
        release.set()
        response = await in_flight
    await asyncio.wait_for(server, 60)
    assert response.status_code == 200
    assert response.text == "done"
    assert response.headers["x-openstack-request-id"].startswith("req-")
    assert events == ["engine started", "request finished", "engine stopped"]


async def test_engine_that_will_not_stop_is_bounded_by_graceful_shutdown_timeout(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        caplog: pytest.LogCaptureFixture) -> None:
    class Stuck(RecordingService):
        async def stop(self) -> None:
            await asyncio.Event().wait()

    monkeypatch.setattr(kiln.server, "build_service", lambda conf, role: Stuck([]))
    monkeypatch.setattr(kiln.server, "build_alarms", lambda conf, service, role: NoAlarms())
    monkeypatch.setattr(kiln.server, "STOP_GRACE", 0.5)
    conf_file = tmp_path / "kiln.conf"
    conf_file.write_text(f"[DEFAULT]\nstate_path = {tmp_path}/state\n"
                         "graceful_shutdown_timeout = 1\n")
    conf = load_config([str(conf_file)])
    stop = asyncio.Event()
    stop.set()
    # the stop itself takes about 1.5 s; the bound only ends a wait that would hang, and
    # leaves a loaded machine (load 15+ on 2 CPUs) room for the rest of run()
    await asyncio.wait_for(kiln.server.run(conf, "engine", stop=stop), 60)
    assert "engine did not finish or checkpoint its work within 1.5s" in caplog.messages
