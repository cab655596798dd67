"""The engine: runs stack actions over plugins and stores every step.

Five sub-packages, each importing only those listed after it (checked by the layer
contracts in ``pyproject.toml``):

- :mod:`~kiln.engine.service`: EngineService, the one interface the APIs call, and its
  replies (Heat's REST field names).
- :mod:`~kiln.engine.actions`: one module per stack action (create, delete, update,
  lifecycle, snapshot, adopt, recover, nested, validation), each a walk of the stack's
  graph that runs resource actions through the runtime.
- :mod:`~kiln.engine.runtime`: the :class:`~kiln.engine.runtime.engine.Engine` (running
  actions, claims and locks), the scheduler (concurrency limit, deadlines, cancel), the
  runner (one way to run a resource action) and lifecycle hooks.
- :mod:`~kiln.engine.store`: a live stack from its rows, transitions to rows, the
  parsed-template cache.
- :mod:`~kiln.engine.model`: states, the request context, the live stack and its slots,
  outputs; no I/O.
"""
