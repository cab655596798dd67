"""An engine's RPC server: one per engine, ``server=<engine_id>`` on the topic
``kiln-engine``, so a cast to the topic reaches any one engine and a call with
``server`` the engine holding a stack.

oslo.messaging's ``threading`` executor runs each message on a worker thread; the work
itself runs on the service's event loop (``run_coroutine_threadsafe``), where every
EngineService call runs. Heat's eventlet executor is not used: Kiln is asyncio.
"""

from __future__ import annotations

import asyncio
import logging
import warnings
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from oslo_config import cfg

from kiln.engine.service.forwarding import forwarded_call
from kiln.engine.service.interface import EngineServiceAPI
from kiln.errors import KilnError
from kiln.oslo_notifier import _oslo_messaging
from kiln.rpc import transport as rpc_transport
from kiln.rpc.wire import context_from_dict, error_to_dict

LOG = logging.getLogger(__name__)

#: the EngineService methods an API process may run on an engine: the public ones
INVOKABLE = frozenset(name for name in vars(EngineServiceAPI)
                      if not name.startswith("_") and callable(getattr(EngineServiceAPI, name)))


class Endpoint:
    """The methods the broker delivers (oslo.messaging calls them with the message's
    context dict first)."""

    def __init__(self, service: Any, loop: asyncio.AbstractEventLoop,
                 wake: Callable[[str], Awaitable[bool]]) -> None:
        self._service = service
        self._loop = loop
        self._wake = wake

    def _run(self, coro: Awaitable[Any]) -> Any:
        async def wrapped() -> Any:
            return await coro
        return asyncio.run_coroutine_threadsafe(wrapped(), self._loop).result()

    def ping(self, ctxt: Mapping[str, Any]) -> bool:
        return True

    def wake(self, ctxt: Mapping[str, Any], stack_id: str) -> None:
        try:
            self._run(self._wake(stack_id))
        except Exception:
            LOG.exception("taking stack %s on wake failed", stack_id)

    def invoke(self, ctxt: Mapping[str, Any], name: str,
               kwargs: Mapping[str, Any]) -> dict[str, Any]:
        """Run EngineService ``name`` for the caller ``ctxt`` (the message's context):
        ``{"reply": ...}`` or ``{"error": ...}`` (kiln.rpc.wire)."""
        if name not in INVOKABLE:
            return {"error": error_to_dict(KilnError(f"unknown engine method {name!r}"))}
        call = getattr(self._service, name)
        try:
            reply = self._run(forwarded_call(call(context_from_dict(ctxt), **kwargs)))
        except KilnError as exc:
            return {"error": error_to_dict(exc)}
        return {"reply": reply}


class EngineServer:
    """The RPC server of one engine, started with the service and stopped before it."""

    def __init__(self, conf: cfg.ConfigOpts, service: Any, engine_id: str,
                 wake: Callable[[str], Awaitable[bool]], transport: Any) -> None:
        self._conf = conf
        self._service = service
        self._engine_id = engine_id
        self._wake = wake
        self._transport = transport
        self._server: Any = None

    def start_in(self, loop: asyncio.AbstractEventLoop) -> None:
        """Start listening (blocks on the broker: call it off ``loop``, the service's)."""
        om = _oslo_messaging()
        endpoint = Endpoint(self._service, loop, self._wake)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            self._server = om.get_rpc_server(
                self._transport, rpc_transport.target(self._conf, self._engine_id),
                [endpoint], executor="threading")
            self._server.start()
        LOG.info("engine %s listens on topic %s (exchange %s)", self._engine_id,
                 self._conf.kiln_engine.rpc_topic,
                 self._conf.control_exchange)

    async def stop(self) -> None:
        """Stop taking messages; those delivered already are run and answered first."""
        server, self._server = self._server, None
        if server is not None:
            def halt() -> None:
                self._nudge()
                server.stop()
                _wait_for_work(server)
            await asyncio.to_thread(halt)

    def _nudge(self) -> None:
        """End the listener's wait for the broker now. Between two checks for stop it
        waits up to 5 s for a message (longer the longer it was idle: oslo.messaging's
        ``ACK_REQUEUE_EVERY_SECONDS_MAX``), which made every engine's stop take that
        long. A ``ping`` cast to this engine's own queue arrives within milliseconds,
        is answered as any message, and the listener sees the stop."""
        om = _oslo_messaging()
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                client = om.get_rpc_client(
                    self._transport, rpc_transport.target(self._conf, self._engine_id))
                client.prepare(retry=0).cast({}, "ping")
        except Exception as exc:  # noqa: BLE001 - the broker is gone: nothing waits on it
            LOG.debug("cannot nudge the RPC listener of engine %s: %s", self._engine_id,
                      exc)


def _wait_for_work(server: Any) -> None:
    """Until every message the server took is run and answered, then its threads gone.
    oslo.messaging's ``wait`` does that, but its executor's idle worker threads look for
    the stop only once a second (futurist's ``MAX_IDLE_FOR``; Python's exit joins them
    too), so each is handed one no-op first: it runs it, sees the stop and ends."""
    executor = getattr(server, "_work_executor", None)
    try:
        from futurist import Future
        from futurist._utils import WorkItem

        queued = executor._work_queue  # type: ignore[union-attr]
        workers = list(executor._workers)  # type: ignore[union-attr]
    except (ImportError, AttributeError):  # another oslo.messaging or futurist
        server.wait()
        return
    queued.join()  # every message taken is run and answered
    executor.shutdown(wait=False)  # type: ignore[union-attr]
    for _ in workers:
        queued.put(WorkItem(Future(), _nothing))
    server.wait()


def _nothing() -> None:
    """The work that wakes an idle worker thread so that it sees the stop."""
