"""The :class:`~kiln.engine.model.dispatch.Dispatch` of a process on the broker.

oslo.messaging's client blocks (a call waits for the reply, a cast for the broker), so
each send runs on a worker thread and the event loop keeps serving requests.

A call needs the process's reply queue, which oslo.messaging makes on the first call with
a connection it retries forever, whatever the call's ``retry``: with the broker out of
reach that call's thread never returns (and neither would the request waiting on it, nor
the executor it took a thread of). So the reply queue is made once, by a thread of its
own started with the process (:meth:`EngineClient.open_replies`), and until it exists a
call is refused at once (503), as a send to an unreachable broker is (found by the
multi-process probe of issue 24). When making it fails outright (the broker refuses the
login, say, rather than being out of reach), it is tried again, after 0.5 s, then twice as
long each time up to 30 s, so calls are served again once the broker accepts it.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Mapping
from typing import Any

from oslo_config import cfg

from kiln.engine.model.context import RequestContext
from kiln.errors import ServiceUnavailable
from kiln.oslo_notifier import _oslo_messaging
from kiln.rpc import transport as rpc_transport
from kiln.rpc.wire import context_to_dict, error_from_dict

LOG = logging.getLogger(__name__)

#: the wait before making the reply queue again after an attempt failed, doubled after
#: each failure up to :data:`REPLY_RETRY_MAX` seconds
REPLY_RETRY_FIRST = 0.5
REPLY_RETRY_MAX = 30.0


class EngineClient:
    """Casts ``wake`` and calls ``invoke`` on the topic ``kiln-engine``."""

    def __init__(self, conf: cfg.ConfigOpts, *, runs_actions: bool,
                 transport: Any = None) -> None:
        om = _oslo_messaging()
        self.conf = conf
        self.runs_actions = runs_actions
        self._transport = transport or rpc_transport.rpc_transport(conf)
        self._own_transport = transport is None
        self._client = om.get_rpc_client(self._transport, rpc_transport.target(conf))
        # a cast to a broker that is down must not hold the request: oslo.messaging
        # would retry forever by default
        self._cast_client = self._client.prepare(retry=0)
        self._errors: tuple[type[BaseException], ...] = (om.MessagingException,
                                                          OSError)
        self._timeout = om.MessagingTimeout
        #: set once the reply queue calls wait on exists (:meth:`open_replies`)
        self._replies = threading.Event()
        #: set by :meth:`close`: the reply queue is no longer tried for
        self._closed = threading.Event()

    def open_replies(self) -> None:
        """Make the reply queue in a daemon thread (it may wait for the broker as long
        as it is unreachable, and is tried again with a growing delay when making it
        fails); calls are refused until it exists. A driver without
        oslo.messaging's AMQP reply queue (not the rabbit driver) needs nothing made."""
        driver = getattr(self._transport, "_driver", None)
        make = getattr(driver, "_get_reply_q", None)
        if make is None:
            self._replies.set()
            return

        def run() -> None:
            delay, failures = REPLY_RETRY_FIRST, 0
            while not self._closed.is_set():
                try:
                    make()
                except Exception as exc:  # noqa: BLE001 - the driver's errors: try again
                    failures += 1
                    LOG.warning("cannot make the reply queue for calls to engines (the "
                                "broker: %s): requests forwarded to an engine are refused "
                                "until it is made; trying again in %g s", exc, delay)
                    if self._closed.wait(delay):
                        return
                    delay = min(delay * 2, REPLY_RETRY_MAX)
                    continue
                if failures:
                    LOG.info("reply queue for calls to engines made after %d failed "
                             "attempts: forwarded requests are served again", failures)
                self._replies.set()
                return

        threading.Thread(target=run, name="kiln-rpc-replies", daemon=True).start()

    async def _reachable(self) -> None:
        """Refuse a call before it starts when its reply queue does not exist yet (made
        within ``engine_life_check_timeout``: a process just started is given that)."""
        life = float(self.conf.engine_life_check_timeout)
        if not self._replies.is_set() and not await asyncio.to_thread(self._replies.wait,
                                                                      life):
            raise ServiceUnavailable("The engine cannot be reached: no connection to the "
                                     "message broker.")

    async def wake(self, stack_id: str) -> bool:
        try:
            await asyncio.to_thread(self._cast_client.cast, {}, "wake", stack_id=stack_id)
        except Exception as exc:  # noqa: BLE001 - the driver's errors (kombu's, OSError,
            # oslo.messaging's) all mean the same here: the stack waits for the sweep
            LOG.warning("cannot wake an engine for stack %s (the broker: %s): it stays "
                        "queued for the engines' sweep", stack_id, exc)
            return False
        return True

    async def invoke(self, method: str, ctx: RequestContext, kwargs: Mapping[str, Any], *,
                     server: str | None = None) -> Any:
        await self._reachable()
        timeout = float(self.conf.rpc_response_timeout)
        client = self._client.prepare(server=server, timeout=timeout, retry=0)
        # the caller's context travels as the message's context, as in Heat
        call = asyncio.ensure_future(asyncio.to_thread(
            client.call, context_to_dict(ctx), "invoke", name=method, kwargs=dict(kwargs)))
        try:
            answer = await self._answer(call, server)
        except self._timeout:
            raise ServiceUnavailable(f"The engine did not answer {method} within "
                                     f"{timeout:g} s.") from None
        except self._errors as exc:
            raise ServiceUnavailable(f"The engine cannot be reached: {exc}") from None
        if isinstance(answer, dict) and "error" in answer:
            raise error_from_dict(answer["error"])
        return answer.get("reply") if isinstance(answer, dict) else None

    async def _answer(self, call: asyncio.Future[Any], server: str | None) -> Any:
        """The reply of ``call`` (sent to engine ``server``). An engine that stopped
        answering while its heartbeat is still fresh costs about twice
        ``engine_life_check_timeout``, not ``rpc_response_timeout``, as in Heat: a reply
        later than that is waited for only while the engine answers a ping. Heat pings
        before every such call; here the ping is sent only for a late reply, so a
        forwarded call is one request and one reply."""
        if server is None:
            return await call
        life = float(self.conf.engine_life_check_timeout)
        done, _ = await asyncio.wait({call}, timeout=life)
        if done or await self.ping(server):
            return await call
        # the call's message expires in the engine's queue after rpc_response_timeout
        call.add_done_callback(_drop_result)
        raise ServiceUnavailable(f"The engine {server} holding the stack does not answer.")

    async def alive(self, server: str) -> bool | None:
        if not self._replies.is_set():
            return None  # no reply queue yet (start-up, or the broker is away)
        return await self.ping(server)

    async def ping(self, server: str) -> bool:
        """Whether engine ``server`` answers within ``engine_life_check_timeout``."""
        if not self._replies.is_set():
            return False
        life = float(self.conf.engine_life_check_timeout)
        client = self._client.prepare(server=server, timeout=life, retry=0)
        try:
            # bounded here too: the answer must not depend on the driver's own timeout
            await asyncio.wait_for(asyncio.to_thread(client.call, {}, "ping"), life + 1)
        except Exception:  # noqa: BLE001 - any failure to answer is "not alive"
            return False
        return True

    def close(self) -> None:
        """Stop trying for the reply queue; close the transport if this client made
        it."""
        self._closed.set()
        if self._own_transport:
            self._transport.cleanup()


def _drop_result(call: asyncio.Future[Any]) -> None:
    """Retrieve the late result of a call given up on (no "never retrieved" warning)."""
    if not call.cancelled():
        call.exception()
