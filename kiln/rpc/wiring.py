"""A process's part on the broker, for kiln.server: the client every role uses, and in
the roles that run stack actions (``kiln engine``, ``kiln serve``) the RPC server.

In an API role (``kiln api``, ``kiln api-cfn``, ``kiln api-cloudwatch``) the engine runs
no action: it admits each one and hands it off (kiln.engine.runtime.engine.Engine.launch)
to be taken by an engine, woken over the broker or, the broker being unreachable, by the
engines' sweep within min(periodic_interval, engine_dead_after / 2) seconds.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
from typing import Any

from oslo_config import cfg

from kiln.rpc import transport as rpc_transport
from kiln.rpc.client import EngineClient
from kiln.rpc.server import EngineServer

LOG = logging.getLogger(__name__)

#: the roles whose engine runs stack actions (the others hand them off)
ACTION_ROLES = ("all", "engine")
#: how long stopping waits for the broker connections to close
CLEANUP_SECONDS = 1.0


class Messaging:
    """Built before the service starts (the service reads ``dispatch`` then), started
    once it has, stopped before it stops."""

    def __init__(self, conf: cfg.ConfigOpts, role: str) -> None:
        self.conf = conf
        self.runs_actions = role in ACTION_ROLES
        self.transport = rpc_transport.rpc_transport(conf)
        self.client = EngineClient(conf, runs_actions=self.runs_actions,
                                   transport=self.transport)
        self.server: EngineServer | None = None

    def attach(self, service: Any) -> None:
        service.dispatch = self.client

    async def start(self, service: Any) -> None:
        self.client.open_replies()
        engine = service.engine
        if not self.runs_actions:
            engine.handoff = self.client.wake
            LOG.info("stack actions are handed to the engines on topic %s (exchange %s)",
                     self.conf.kiln_engine.rpc_topic,
                     self.conf.control_exchange)
            return
        recovery = service.recovery
        self.server = EngineServer(self.conf, service, engine.engine_id, recovery.take,
                                   self.transport)
        await asyncio.to_thread(self.server.start_in, asyncio.get_running_loop())

    async def stop(self) -> None:
        if self.server is not None:
            await self.server.stop()
        self.client.close()  # the transport is ours, closed by _cleanup
        await self._cleanup()

    async def _cleanup(self) -> None:
        """Close the broker connections, waiting at most :data:`CLEANUP_SECONDS`: with
        the broker out of reach, oslo.messaging's cleanup waits for the reply queue still
        being made (:meth:`EngineClient.open_replies`), as long as the broker stays away.
        It runs in a daemon thread so that it never holds the process's exit."""
        done = threading.Event()

        def run() -> None:
            with contextlib.suppress(Exception):
                self.transport.cleanup()
            done.set()

        threading.Thread(target=run, name="kiln-rpc-cleanup", daemon=True).start()
        if not await asyncio.to_thread(done.wait, CLEANUP_SECONDS):
            LOG.warning("the broker connections were not closed within %g s (the broker "
                        "is out of reach): stopping without", CLEANUP_SECONDS)


def build(conf: cfg.ConfigOpts, role: str) -> Messaging | None:
    """The process's messaging when ``transport_url`` is set; None otherwise (nothing
    is imported or started: ``kiln serve``'s all-in-one)."""
    if not rpc_transport.configured(conf):
        return None
    return Messaging(conf, role)
