"""Kiln's engines over RabbitMQ: oslo.messaging RPC on ``[DEFAULT] transport_url``.

Deployed as Heat is (``kiln api`` and ``kiln engine`` processes on one database), the
processes talk over the broker for two things only; the database stays the record of
every unit of work (kiln.engine.model.dispatch):

- ``wake(stack_id)``, a cast to the topic ``kiln-engine``: one engine takes the stack an
  API process admitted and left queued (IN_PROGRESS, unheld) and runs it now;
- ``invoke(method, kwargs)``, a call to one engine (``server=<engine_id>``) or any: runs
  one EngineService method there (a delete or a cancel reaching the engine that runs the
  stack's action) and returns its JSON reply or the kiln.errors error it raised.

Modules: :mod:`~kiln.rpc.transport` (options, transport, targets), :mod:`~kiln.rpc.wire`
(what crosses the broker: contexts and errors), :mod:`~kiln.rpc.server` (an engine's RPC
server), :mod:`~kiln.rpc.client` (the :class:`~kiln.engine.model.dispatch.Dispatch` every
process uses).
"""
