"""The engine's shared machinery: store, recorder, limits, running actions, locks.

One :class:`Engine` per process. Each running stack action is an asyncio task registered
under its stack id, started through the stack's claim (:mod:`kiln.engine.runtime.claims`): a
second action on the same stack is refused with Heat's ActionInProgress (409) while
``delete`` pre-empts a running action the way Heat lets it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import uuid
from collections.abc import Awaitable, Callable
from typing import Any

from kiln.db.records import StackRecord
from kiln.engine.model.context import RequestContext
from kiln.engine.model.delegation import Delegation
from kiln.engine.model.implicit import add_implicit_requirements
from kiln.engine.model.live_stack import LiveStack, PluginLookup, PluginServices, StackSupport
from kiln.engine.model.settings import EngineConf
from kiln.engine.runtime.claims import Claim, Claims
from kiln.engine.runtime.hooks import Breakpoints
from kiln.engine.runtime.plugin_loader import find_plugin
from kiln.engine.runtime.runner import Poller
from kiln.engine.runtime.scheduler import Limit
from kiln.engine.store import DATABASE_ERRORS, Store
from kiln.engine.store.loader import stored_live_stack
from kiln.engine.store.template_cache import TemplateCache
from kiln.graph import Graph
from kiln.graph.graph import resource_label
from kiln.notifications import NULL, Notifier

LOG = logging.getLogger(__name__)


class Engine:
    """Everything an action runs with, all given here: the store, the configuration,
    the services plugins reach (child stacks, software configs: the service's
    :class:`~kiln.engine.actions.nested.NestedOps`; None for an engine that runs no
    nested plugins) and the plugin lookup."""

    def __init__(self, store: Store, conf: EngineConf, *,
                 services: PluginServices | None = None,
                 plugins: PluginLookup = find_plugin,
                 engine_id: str | None = None,
                 delegation: Delegation | None = None,
                 notifier: Notifier = NULL) -> None:
        #: the engine's one door to the database (kiln.engine.store)
        self.store = store
        self.conf = conf
        #: root stack id -> the identity its latest work acts with (kiln.engine.runtime.acting)
        self.acting: dict[str, RequestContext] = {}
        self.support = StackSupport(conf=conf, plugins=plugins, services=services,
                                    acting=self.acting, notifier=notifier)
        self.engine_id = engine_id or str(uuid.uuid4())
        self.recorder = store.recorder(self.engine_id)
        self.recorder.notifier = notifier
        opts = conf.kiln_engine
        self.poller = Poller(opts.poll_initial_delay, opts.poll_max_delay)
        self.limit = Limit(max(1, opts.max_concurrency))
        self.tasks: dict[str, asyncio.Task[None]] = {}
        self.cancels: dict[str, asyncio.Event] = {}
        #: set by cancel_update: whether the cancelled update must roll back
        self.cancel_rollback: dict[str, bool] = {}
        self.template_cache = TemplateCache()
        #: the LiveStack each running action works on (signals must reach its plugins)
        self.live: dict[str, LiveStack] = {}
        self.claims = Claims(self)
        #: the lifecycle hooks this engine's actions are paused at
        self.breakpoints = Breakpoints()
        #: work started by a request that was answered before it ended (a policy's
        #: signal), awaited or cancelled by :meth:`stop`
        self.side_tasks: dict[asyncio.Task[Any], str] = {}
        #: deferred authentication (kiln.engine.model.delegation; None: noauth)
        self.delegation = delegation
        #: set in an API process of a kiln.rpc deployment, which runs no stack action:
        #: :meth:`launch` leaves the admitted stack queued in the database and calls
        #: this to wake an engine (kiln.engine.model.dispatch.Dispatch.wake)
        self.handoff: Callable[[str], Awaitable[bool]] | None = None

    # -- loading ------------------------------------------------------------------------
    async def load(self, stack_id: str, *, show_deleted: bool = False) -> LiveStack:
        cache = self.template_cache
        rec, raw, rows = await self.store.stacks.load(stack_id, show_deleted=show_deleted,
                                                      parsed=cache)
        template = cache.cached(raw.id)
        if template is None:
            if not raw.template:  # evicted since the read: fetch the body after all
                raw = await self.store.stacks.raw_template(raw.id)
            template = cache.get(raw)
        return stored_live_stack(rec, raw, rows, support=self.support,
                                 parent_facade=await self.parent_facade(rec),
                                 template=template)

    async def parent_facade(self, rec: StackRecord) -> dict[str, Any]:
        """resource_facade inside a stored child: the parent resource's metadata."""
        if rec.owner_id is None or rec.parent_resource_name is None:
            return {}
        row = await self.store.resources.by_name(rec.owner_id, rec.parent_resource_name)
        metadata = dict(row.metadata or {}) if row is not None else {}
        return {"metadata": metadata, "deletion_policy": "Delete", "update_policy": {}}

    @staticmethod
    def graph(stack: LiveStack) -> Graph[str]:
        slots = stack.slots
        add_implicit_requirements(stack)
        # a slot's requirements are passed as they are (the graph then shares the
        # definition's frozenset) unless some name is not a slot of this stack
        deps = {n: s.requires if all(r in slots for r in s.requires)
                else [r for r in s.requires if r in slots] for n, s in slots.items()}
        graph = Graph.from_edges(slots, deps)
        graph.check_acyclic(lambda n: resource_label(type(slots[n].plugin).__name__, n))
        return graph

    # -- running actions ----------------------------------------------------------------
    def running(self, stack_id: str) -> bool:
        """Whether this process runs an action on the stack (launched: a claim still
        setting up does not count, see :attr:`claims`)."""
        task = self.tasks.get(stack_id)
        return task is not None and not task.done()

    def claim(self, stack_id: str, name: str, action: str, *, preempt: bool = False,
              take_from_dead: bool = False) -> contextlib.AbstractAsyncContextManager[Claim]:
        """The one way to start an action on an existing stack: see
        :meth:`kiln.engine.runtime.claims.Claims.claim`."""
        return self.claims.claim(stack_id, name, action, preempt=preempt,
                                 take_from_dead=take_from_dead)

    def launch(self, stack_id: str, work: Callable[[], Awaitable[None]],
               stack: LiveStack | None = None) -> asyncio.Task[None]:
        """Run ``work`` as the action of the stack's claim (:meth:`Claim.launch` calls
        this); the claim and the row lock are given back when it ends.

        Once ``work`` is done nothing here refers to its stacks any more (the callable is
        dropped, ``live`` forgets the stack), and a LiveStack makes no reference cycles,
        so reference counting frees it there and then, before the event purge."""
        if self.handoff is not None:
            return self._hand_off(stack_id, self.handoff)
        cancel = asyncio.Event()
        self.cancels[stack_id] = cancel
        if stack is not None:
            self.live[stack_id] = stack
        pending = [work]

        async def body() -> None:
            try:
                await pending.pop()()
                self.claims.finishing(stack_id, task)
                if self.tasks.get(stack_id) is task:
                    self.live.pop(stack_id, None)
                await self.purge_events(stack_id)
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # a bug must not leave the stack locked forever
                LOG.exception("stack action on %s crashed", stack_id)
                with contextlib.suppress(*DATABASE_ERRORS):
                    await self.store.stacks.mark_crashed(
                        stack_id, f"Engine error: {type(exc).__name__}: {exc}")
            finally:
                pending.clear()
                self.claims.finishing(stack_id, task)
                if self.tasks.get(stack_id) is task:
                    del self.tasks[stack_id]
                    self.cancels.pop(stack_id, None)
                    self.live.pop(stack_id, None)
                claim = self.claims.get(stack_id)
                if claim is not None and claim.task is task:
                    await self.claims.give_back(claim)

        task = asyncio.ensure_future(body())
        self.tasks[stack_id] = task
        return task

    def _hand_off(self, stack_id: str,
                  wake: Callable[[str], Awaitable[bool]]) -> asyncio.Task[None]:
        """Instead of running the admitted action: give the claim and the row lock back
        (the stack stays IN_PROGRESS with nobody holding it: queued, in the database),
        then wake an engine. The engine resumes the action from what admission stored
        (kiln.engine.actions.recover), exactly as it continues a dead engine's. A wake
        the broker does not take leaves it queued for the engines' sweep."""
        async def body() -> None:
            try:
                claim = self.claims.get(stack_id)
                if claim is not None and claim.task is task:
                    await self.claims.give_back(claim)
                await wake(stack_id)
            except Exception:  # the stack stays queued: the engines' sweep runs it
                LOG.exception("cannot wake an engine for stack %s", stack_id)
            finally:
                if self.tasks.get(stack_id) is task:
                    del self.tasks[stack_id]

        task = asyncio.ensure_future(body())
        self.tasks[stack_id] = task
        return task

    def background(self, stack_id: str, work: Awaitable[Any],
                   name: str) -> asyncio.Task[Any]:
        """Run ``work`` on the stack after its request has been answered; a failure is
        logged (the caller is gone). :meth:`wait_side` waits for it; :meth:`stop` lets
        it finish like an action, then cancels it."""
        async def body() -> None:
            try:
                await work
            except asyncio.CancelledError:
                raise
            except Exception:
                LOG.exception("%s failed", name)

        task = asyncio.ensure_future(body())
        self.side_tasks[task] = stack_id
        task.add_done_callback(lambda t: self.side_tasks.pop(t, None))
        return task

    async def wait_side(self, stack_id: str) -> None:
        """Until no :meth:`background` work of this engine runs on the stack."""
        while pending := [t for t, s in self.side_tasks.items() if s == stack_id]:
            await asyncio.wait(pending)

    async def purge_events(self, stack_id: str) -> None:
        """Keep at most ``max_events_per_stack`` events, purging the oldest in batches
        of ``event_purge_batch_size`` (Heat's options)."""
        keep = int(self.conf.max_events_per_stack)
        if keep > 0:
            await self.store.events.purge(stack_id, keep,
                                          int(self.conf.event_purge_batch_size))

    async def wait(self, stack_id: str) -> None:
        """Until no action of this engine runs on the stack (bound it with a timeout)."""
        task = self.tasks.get(stack_id)
        if task is not None and not task.done():
            await asyncio.shield(task)

    async def stop(self) -> None:
        """Let running actions finish for ``graceful_shutdown_timeout`` seconds (0: no
        limit); then stop the rest *without* failing them: their resources stay
        IN_PROGRESS with their persisted tokens and the lock is released, so the next
        engine's recovery sweep continues them."""
        running = [t for t in [*self.tasks.values(), *self.side_tasks] if not t.done()]
        if running:
            limit = float(self.conf.graceful_shutdown_timeout or 0)
            await asyncio.wait(running, timeout=limit or None)
        self.recorder.handoff = True
        side = list(self.side_tasks)
        for task in [*self.tasks.values(), *side]:
            task.cancel()
        for task in [*self.tasks.values(), *side]:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task

    def timeout_seconds(self, stack: LiveStack) -> float:
        mins = stack.info.timeout_mins
        return float(mins * 60) if mins else float(self.conf.stack_action_timeout)
