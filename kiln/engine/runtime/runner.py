"""Running one resource action: the two-step handle/check contract, persisted.

``handle_<action>`` starts the work and returns a token; ``check_<action>_complete`` is
called at once, and if the work is not done the token is committed before the engine
waits (so any engine can resume from it). A check never changes its token in place; one
that moves a multi-step action on hands over a new token (``Resource.checkpoint``),
which is committed before the next check and given to it; checks then back off from
``poll_initial_delay`` to ``poll_max_delay`` unless the plugin names its own delay. A
handle and its first check are one step for recovery: a crash inside them leaves the
resource IN_PROGRESS without a token, exactly like a crash inside the handle alone.
The final state is committed before the caller returns, and therefore before any
dependant starts.

Recovery resumes an action through the same function (``resume_from``: the persisted
token of a resource already IN_PROGRESS), so a resumed action has the same poll loop,
failure handling and shutdown hand-off as one started here: there is one way to run a
resource action.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from kiln.engine.model.live_stack import LiveStack, Slot, describe
from kiln.engine.model.states import (
    ADOPT,
    CHECK,
    COMPLETE,
    CREATE,
    DELETE,
    FAILED,
    IN_PROGRESS,
    RESTORE,
    RESUME,
    SNAPSHOT,
    SUSPEND,
    TIMED_OUT,
    UPDATE,
)
from kiln.engine.store.recorder import Recorder
from kiln.errors import KilnError, format_path
from kiln.resources.base import Resource, ResourceFailure, UpdateReplace

LOG = logging.getLogger(__name__)


class ActionFailed(Exception):
    """A resource action failed; ``reason`` is Heat's resource status reason,
    ``stack_reason`` what the stack's reason quotes when Heat words it differently."""

    def __init__(self, reason: str, action: str = "", *,
                 stack_reason: str | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.action = action
        self.stack_reason = reason if stack_reason is None else stack_reason


_PROPERTY_ERROR = "Property error: resources"


def _quoted_by_stack(slot: Slot, exc: BaseException, reason: str) -> str:
    """A property error from inside a nested stack, as the parent stack's reason quotes
    it: Heat puts the resource's name in front of the inner path there (``Property
    error: p.resources.f.properties.value``, a group's member ``[0].resources...``), not
    in the resource's own reason (seen on the Heat 27 peer)."""
    if not (is_nested(slot) and isinstance(exc, KilnError)
            and exc.error_type == "StackValidationFailed"):
        return reason
    head, sep, rest = reason.partition(_PROPERTY_ERROR)
    if not sep:
        return reason
    name = f"[{slot.name}]" if slot.name.isdigit() else slot.name
    return f"{head}Property error: {name}.resources{rest}"


def failure_reason(name: str, exc: BaseException) -> str:
    """Heat's ``<ExceptionType>: resources.<name>: <message>``."""
    if isinstance(exc, ResourceFailure):
        return exc.status_reason(name)
    if isinstance(exc, ActionFailed):
        return exc.reason
    kind = exc.error_type if isinstance(exc, KilnError) else type(exc).__name__
    return f"{kind}: {format_path(('resources', name))}: {exc}"


def is_nested(slot: Slot) -> bool:
    """Resources that only wait for a child stack: they hold no concurrency slot, and
    their token is persisted before the first (whole-child-stack) check."""
    return slot.plugin.is_nested_stack


Handle = Callable[[], Awaitable[Any]]
Check = Callable[[Any], Awaitable[bool]]


def plugin_steps(plugin: Resource, action: str) -> tuple[Handle, Check]:
    """The plugin's own ``handle_<action>`` and ``check_<action>_complete`` for the
    actions whose handle takes no argument, named in code (never looked up by string)."""
    steps: dict[str, tuple[Handle, Check]] = {
        CREATE: (plugin.handle_create, plugin.check_create_complete),
        DELETE: (plugin.handle_delete, plugin.check_delete_complete),
        SUSPEND: (plugin.handle_suspend, plugin.check_suspend_complete),
        RESUME: (plugin.handle_resume, plugin.check_resume_complete),
        CHECK: (plugin.handle_check, plugin.check_check_complete),
        SNAPSHOT: (plugin.handle_snapshot, plugin.check_snapshot_complete),
    }
    return steps[action]


def plugin_check(plugin: Resource, action: str) -> Check:
    """``check_<action>_complete`` of any action: what a resumed action polls."""
    checks: dict[str, Check] = {
        UPDATE: plugin.check_update_complete, RESTORE: plugin.check_restore_complete,
        ADOPT: plugin.check_adopt_complete}
    found = checks.get(action)
    return found if found is not None else plugin_steps(plugin, action)[1]


@dataclass(frozen=True)
class Persisted:
    """The token a resource action committed before its engine went away."""

    token: Any


def log_unexpected(stack: LiveStack, slot: Slot, action: str, reason: str) -> None:
    """A plugin failed in a way it did not mean to (a bug, not a ResourceFailure): the
    status reason shows only the message, so the traceback goes to the log, as one record
    naming the stack and resource an operator is asked about. Call inside ``except``."""
    LOG.exception("resource %s of stack %s failed: %s", slot.name, stack.info.name, reason,
                  extra={"stack_id": stack.info.id, "stack_name": stack.info.name,
                         "resource_name": slot.name, "resource_type": slot.type_name,
                         "action": action})


async def _cancel_plugin(stack: LiveStack, slot: Slot, action: str, token: Any) -> None:
    """Let the plugin settle what its interrupted action started; a failure here is
    logged, never allowed to hide the abort itself (Heat logs it the same way)."""
    try:
        await slot.plugin.handle_cancel(action, token)
    except Exception:
        LOG.exception("error cancelling resource %s of stack %s (%s)", slot.name,
                      stack.info.name, action)


class Poller:
    """Backoff settings shared by every action of an engine."""

    def __init__(self, initial: float, maximum: float) -> None:
        self.initial = initial
        self.maximum = maximum


async def run_action(recorder: Recorder, poller: Poller, stack: LiveStack, slot: Slot,
                     action: str, handle: Handle, check: Check, *,
                     on_complete: Callable[[], None] | None = None,
                     abort_reason: Callable[[], str | None] = lambda: None,
                     resume_from: Persisted | None = None,
                     remove_row: bool = False) -> None:
    """Drive ``slot`` through ``action`` to COMPLETE, or FAILED and raise ActionFailed.
    ``remove_row``: COMPLETE also deletes the row (see :meth:`Recorder.resource`).

    With ``resume_from`` the resource is already IN_PROGRESS with that token committed
    (by an engine that went away): ``handle`` is not called again, only the checks run."""
    # Heat names the interrupted task as it was when it started ("Task create from
    # SoftwareDeployment "d" Stack "s" [id]"), in the reason of a timed-out resource
    task = f"Task {action.lower()} from {describe(stack, slot)}"
    if resume_from is None:
        started = recorder.resource(stack, slot, action, IN_PROGRESS)
    else:
        started = asyncio.get_running_loop().create_future()
        started.set_result(None)
    handled = False
    token: Any = None
    try:
        if resume_from is None and not slot.plugin.side_effect_free:
            await started  # durable before anything outside Kiln's rows can happen
        slot.plugin.take_checkpoint()  # none left from an earlier action of the plugin
        token = await handle() if resume_from is None else resume_from.token
        handled = True
        delay = poller.initial
        first = resume_from is None
        if first and is_nested(slot):
            # the first check waits for a whole child stack: persist the token first
            first = False
            await started
            await recorder.progress(slot, token)
        while not await check(token):
            moved = slot.plugin.take_checkpoint()
            if moved is not None:
                token = moved[0]  # the check moved the action on: persist every new token
            if first or moved is not None:
                first = False
                await started
                await recorder.progress(slot, token)
            hint = slot.plugin.poll_delay(token)
            await asyncio.sleep(delay if hint is None else max(hint, 0.0))
            delay = min(delay * 2, poller.maximum)
    except asyncio.CancelledError:
        if recorder.handoff:
            raise  # engine shutdown: the next engine resumes from the persisted state
        if handled:
            # Heat calls handle_<action>_cancel when a check loop is interrupted
            await asyncio.shield(_cancel_plugin(stack, slot, action, token))
        why = abort_reason()
        if why == TIMED_OUT:
            why = f"{task} {why}"
        reason = f"{action} aborted" + (f" ({why})" if why else "")
        await asyncio.shield(recorder.resource(stack, slot, action, FAILED, reason))
        raise
    except UpdateReplace:
        # not a failure: the update ends COMPLETE and the caller replaces the resource
        if not started.done():
            await started
        raise
    except Exception as exc:  # every plugin error becomes the resource's FAILED state
        if not started.done():
            await started
        reason = failure_reason(slot.name, exc)
        if not isinstance(exc, KilnError | ActionFailed):
            log_unexpected(stack, slot, action, reason)
        await recorder.resource(stack, slot, action, FAILED, reason)
        raise ActionFailed(reason, action,
                           stack_reason=_quoted_by_stack(slot, exc, reason)) from exc
    if on_complete is not None:
        on_complete()
    await recorder.resource(stack, slot, action, COMPLETE, remove_row=remove_row)
