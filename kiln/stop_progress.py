"""What a stopping process says while it waits: a silent stop of a minute looks like a
hang, so every few seconds it names the requests and stack actions it still waits for
and how long it may still wait (kiln.server runs it beside the stop)."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Sequence
from typing import Any

import uvicorn

LOG = logging.getLogger("kiln.server")


#: Seconds between the lines a stopping process logs about what it still waits for.
STOP_PROGRESS_INTERVAL = 5.0


def _plural(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"


def _running_actions(service: Any) -> list[str]:
    """The names of the stacks whose actions this process's engine is running."""
    try:
        engine = service.engine
    except RuntimeError:  # not started
        return []
    names = []
    for stack_id, task in list(engine.tasks.items()):
        if not task.done():
            live = engine.live.get(stack_id)
            names.append(live.info.name if live is not None else stack_id)
    return names


async def report_stop_progress(stop: asyncio.Event, servers: Sequence[uvicorn.Server], service: Any,
                               budget: float | None) -> None:
    """Once ``stop`` is set, say every few seconds what the stop is still waiting for (a
    silent stop of a minute looks like a hang), and how long it may still wait. Cancelled
    when the stop is done."""
    await stop.wait()
    began = time.monotonic()
    while True:
        requests = sum(len(http.server_state.tasks) for http in servers)
        actions = _running_actions(service)
        if requests or actions:
            waits = []
            if requests:
                waits.append(_plural(requests, "request") + " in flight")
            if actions:
                waits.append(_plural(len(actions), "stack action") + f" ({', '.join(actions)})")
            left = ("no time limit (graceful_shutdown_timeout = 0)" if budget is None else
                    f"{max(0, round(budget - (time.monotonic() - began)))} s left before "
                    "running actions are checkpointed for the next engine to continue")
            LOG.info("stopping: waiting for %s to finish; %s", " and ".join(waits), left,
                     extra={"requests_in_flight": requests, "stack_actions": actions})
        await asyncio.sleep(STOP_PROGRESS_INTERVAL)  # a progress report's period
