"""Heat's ``converge`` flag on a stack update: before the update decides what to do with
each resource, the resource's properties are taken as the cloud shows them now rather
than as the last action left them, so a resource that drifted differs from the template
and is brought back to it (in place where its properties allow, else replaced).

A resource whose physical object is gone is marked ``CHECK_FAILED`` (with an event
saying so), which the update replaces, as it replaces any failed resource. A resource
that cannot be read, or whose type is not checked, is left as it was (as Heat only logs
a live state it cannot read). Reads are bounded by ``[kiln_engine] drift_concurrency``,
as a drift detection's.

The reads run inside the update the engine runs (:func:`kiln.engine.actions.update.run_update`),
after the stack is ``UPDATE_IN_PROGRESS``: the request is answered before the cloud is
read, as Heat's is. A nested stack is not read here: with converge, the update updates
every nested-stack resource (:func:`kiln.engine.actions.plan.decide`), and the child's
own update, which inherits the flag, reads its resources.
"""

from __future__ import annotations

import asyncio
import copy
import logging
from collections.abc import Mapping
from typing import Any

from kiln.engine.actions.drift import expected_of
from kiln.engine.model import drift as model
from kiln.engine.model.live_stack import LiveStack, Slot
from kiln.engine.model.states import CHECK, COMPLETE, DELETE, FAILED, INIT
from kiln.engine.runtime.engine import Engine
from kiln.errors import KilnError
from kiln.resources.live_state import GONE, LiveState
from kiln.resources.schema import Properties

LOG = logging.getLogger(__name__)

GONE_REASON = "The physical resource no longer exists (found by an update with converge)."


def overlaid(props: Properties, changes: Mapping[str, Any]) -> Properties:
    """*props* with *changes* in place of their values, not validated again: the
    cloud's values are only compared with the template's (a server's whole stored set
    need not pass its checks again for one drifted value to be seen)."""
    out = copy.copy(props)
    out.__dict__["_values"] = {**dict(props.items()), **changes}
    return out


def _top_key(path: str) -> str:
    return path.split("/")[1].replace("~1", "/").replace("~0", "~")


async def take_live_state(engine: Engine, current: LiveStack) -> list[str]:
    """Overlay each readable resource's drifted properties with the cloud's values;
    returns the names of the resources that drifted or are gone."""
    limit = asyncio.Semaphore(max(1, int(engine.conf.kiln_engine.drift_concurrency)))

    async def one(slot: Slot) -> str | None:
        state = slot.state
        if (state.action == INIT and state.status == COMPLETE) or slot.physical_id is None \
                or (state.action == DELETE and state.status == COMPLETE) \
                or slot.plugin.is_nested_stack:
            return None
        plugin = slot.plugin
        try:
            expected = expected_of(plugin)
            async with limit:
                live = await plugin.live_state(expected)
        except KilnError as exc:
            LOG.info("converge: %s of stack %s left as it is, not read: %s", slot.name,
                     current.info.name, exc)
            return None
        except Exception as exc:  # a plugin's read failing any other way  # noqa: BLE001
            LOG.warning("converge: %s of stack %s left as it is, its live state could not "
                        "be read: %s: %s", slot.name, current.info.name,
                        type(exc).__name__, exc)
            return None
        if live is GONE:
            await engine.recorder.resource(current, slot, CHECK, FAILED, GONE_REASON)
            return slot.name
        if not isinstance(live, LiveState):
            return None
        diffs = model.differences(live.expected, live.actual)
        if not diffs:
            return None
        keys = {_top_key(d.path) for d in diffs}
        plugin.properties = overlaid(plugin.properties,
                                     {k: live.actual.get(k) for k in keys})
        return slot.name

    found = await asyncio.gather(*(one(s) for s in list(current.slots.values())))
    return [name for name in found if name is not None]
