"""EngineService.resource_signal: the path agents, wait conditions and users take to a
resource while its stack runs (or rests).

A signal goes to the plugin instance the running action works on when this engine runs
one on the stack (a wait condition polls its handle's in-memory signals), otherwise to a
plugin loaded from the database; either way what the plugin changed (metadata, data, the
signals it keeps, appended as rows of their own by the store's resources room) is persisted
with Heat's ``SIGNAL`` event. A signal over what the resource may keep
(``RequestLimitExceeded``) is refused on every route, also where Heat only logs a
refused signal. A plugin whose signals take long (a scaling policy resizing its group,
``signals_in_background``) is answered once the checks pass, and its ``handle_signal``
runs in an engine task (:meth:`Engine.background`).
``{"unset_hook": "<hook>"}`` is not for the plugin: it clears a lifecycle breakpoint
(:mod:`kiln.engine.runtime.hooks`).

Checks and messages follow Heat 27 (observed on the live peer): a resource being
suspended or deleted refuses signals (``NotSupported``) and records why; an unknown or
unset hook is ``InvalidBreakPointHook``; a plugin without ``handle_signal`` answers
``ResourceActionNotSupported``.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from kiln.engine.model.context import RequestContext
from kiln.engine.model.live_stack import LiveStack, Slot, describe
from kiln.engine.runtime import acting, hooks
from kiln.engine.service import stack_user_reach
from kiln.engine.service.interface import Identity
from kiln.engine.service.shared import ResourceNotFound, ServiceCore
from kiln.engine.service.unheld import UnheldOps
from kiln.engine.store import SignalWrite
from kiln.errors import InvalidBreakPointHook, NotSupported, RequestLimitExceeded
from kiln.resources.base import Resource, ResourceState
from kiln.template.environment import HOOK_TYPES

LOG = logging.getLogger(__name__)
#: characters of a signal's reason an event keeps (Heat's event column holds 255): each
#: signal is an event, and a sender's reason must not make every event as big as it
MAX_EVENT_REASON = 255


def _details_text(details: Any) -> str:
    """The event reason Heat writes when the plugin returned nothing to say."""
    if details is None:
        return "No signal details provided"
    if isinstance(details, str):
        return details
    if isinstance(details, Mapping) and all(k in details
                                            for k in ("previous", "current", "reason")):
        return ("alarm state changed from "
                f"{details['previous']} to {details['current']} ({details['reason']})")
    return "Unknown"


def _unsaved_signals(state: ResourceState) -> list[SignalWrite]:
    """The signals the plugin kept since the last save, to append (or rewrite, for a
    repeated id) as rows of their own."""
    if not state.unsaved_signals:
        return []
    unsaved, state.unsaved_signals = state.unsaved_signals, {}
    return [SignalWrite(key, state.signals[key], state.signal_sizes[key], new)
            for key, new in unsaved.items() if key in state.signals]


def _reaches(ctx: RequestContext, stack: LiveStack, named: Any) -> bool:
    """``_find``'s rules over a running stack: the caller's project (or the stack's user
    project) unless admin, and the name, when the identity gives one, must be its own."""
    info = stack.info
    if named and named != info.name:
        return False
    return ctx.is_admin or ctx.project_id in (info.project_id, info.stack_user_project_id)


class SignalOps:
    """Signals and notes to a resource; ``unheld`` serves them on a stack nobody runs."""

    def __init__(self, core: ServiceCore, unheld: UnheldOps) -> None:
        self.core = core
        self.unheld = unheld

    async def _signal_target(self, ctx: RequestContext, stack_identity: Identity,
                             resource_name: str) -> tuple[LiveStack, Slot]:
        engine = self.core.engine
        live = engine.live
        # a signal naming a stack this engine is running (a wait condition or deployment
        # waiting: most signals) needs no read of the stack's row, under _find's rules
        running = live.get(str(stack_identity.get("stack_id") or ""))
        if running is not None and resource_name in running.slots and \
                _reaches(ctx, running, stack_identity.get("stack_name")):
            return running, running.slots[resource_name]
        rec = await self.core.find(ctx, stack_identity)
        stack = live.get(rec.id)
        if stack is None or resource_name not in stack.slots:
            stack = await engine.load(rec.id)
        slot = stack.slots.get(resource_name)
        if slot is None:
            raise ResourceNotFound.in_stack(resource_name, rec.name)
        return stack, slot

    async def resource_signal(self, ctx: RequestContext, stack_identity: Identity,
                              resource_name: str, details: Any,
                              sync_call: bool = False) -> Any:
        # a running stack's plugins live in the engine running it (a wait condition
        # counts its handle's signals there, a hook is released there): a signal reaching
        # another process goes on to that engine, and is answered once it handled it
        return await self.unheld.at_stack(
            "resource_signal", ctx, stack_identity,
            lambda _held: self._signal_here(ctx, stack_identity, resource_name, details,
                                                   sync_call),
            resource_name=resource_name, details=details, sync_call=sync_call)

    async def _signal_here(self, ctx: RequestContext, stack_identity: Identity,
                           resource_name: str, details: Any, sync_call: bool) -> Any:
        stack, slot = await self._signal_target(ctx, stack_identity, resource_name)
        await stack_user_reach.confine(self.core, ctx, stack.info.id, resource_name, read=False)
        # no request of the owner's is behind a signal: it acts through the stack's trust
        await acting.without_request(self.core.engine, stack)
        state = slot.state
        if state.action in slot.plugin.no_signal_actions:
            await hooks.save_side_state(self.core.engine, stack, slot, event=hooks.resource_event(
                stack, slot, f"Cannot signal resource during {state.action}"))
            raise NotSupported(f"Signal resource during {state.action} is not supported.")
        if isinstance(details, Mapping) and "unset_hook" in details:
            await self._unset_hook(stack, slot, str(details["unset_hook"]))
            return None
        plugin = slot.plugin
        if type(plugin).handle_signal is Resource.handle_signal:
            return await plugin.handle_signal(details)  # raises Heat's "not supported"
        if not sync_call and plugin.signals_in_background:
            # Heat answers now and handles the signal in a thread of its own
            self.core.engine.background(stack.info.id,
                                        self._handle_signal(stack, slot, details, False),
                                        f"signal {describe(stack, slot)}")
            return None
        return await self._handle_signal(stack, slot, details, sync_call)

    async def _handle_signal(self, stack: LiveStack, slot: Slot, details: Any,
                             sync_call: bool) -> Any:
        state = slot.state
        metadata = dict(state.metadata)
        try:
            result = await slot.plugin.handle_signal(details)
        except RequestLimitExceeded:
            raise  # over what the resource may keep: the sender is told, whichever route
        except Exception:
            if sync_call:
                raise
            # Heat handles asynchronous signals in a background thread: the caller has
            # already been answered, and a refused signal is only logged.
            LOG.info("signal to %s refused", describe(stack, slot), exc_info=True)
            return None
        reason = f"Signal: {result}" if result else _details_text(details)
        # a handle's signals are rows of their own, written with the event: the
        # resource row is rewritten only when the plugin changed the metadata document
        # (a scaling group's cooldown)
        await hooks.save_side_state(self.core.engine, stack, slot,
                                         metadata=state.metadata != metadata,
                                         signals=_unsaved_signals(state),
                                         event=hooks.resource_event(
                                             stack, slot, reason[:MAX_EVENT_REASON],
                                             action="SIGNAL"))
        return state.shown_metadata() if sync_call else None

    async def resource_note(self, ctx: RequestContext, stack_identity: Identity,
                            resource_name: str, reason: str) -> None:
        stack, slot = await self._signal_target(ctx, stack_identity, resource_name)
        event = hooks.resource_event(stack, slot, reason, action="SIGNAL")
        await self.core.engine.store.events.note(event)

    async def _unset_hook(self, stack: LiveStack, slot: Slot, hook: str) -> None:
        if hook not in HOOK_TYPES:
            raise InvalidBreakPointHook(
                f'Invalid hook type "{hook}" for {describe(stack, slot)}')
        if slot.state.data.get(hook) != hooks.SET:
            raise InvalidBreakPointHook(
                f'The "{hook}" hook is not defined on {describe(stack, slot)}')
        del slot.state.data[hook]
        await hooks.save_side_state(self.core.engine, stack, slot, event=hooks.resource_event(
            stack, slot, f"Hook {hook} is cleared"))
        self.core.engine.breakpoints.release(stack.info.id, slot.name, hook)
