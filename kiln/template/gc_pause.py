"""Pausing the cyclic garbage collector around bulk template work, from any thread.

Parsing a template and validating a stack allocate many objects and no cycles: the
collector's repeated passes over a large template would make that work superlinear in
its size, so it is paused meanwhile (reference counting still frees everything).

The collector's switch is one per process, while the work runs on several threads at
once (a create's and an update's parse and validation run on worker threads, a stack
load on the event loop). So the pauses are counted under a lock: the first one to begin
switches the collector off and notes whether it was on, the last one to end switches it
back. Each pause deciding alone from what it saw (``was_enabled = gc.isenabled()`` then
``gc.disable()``) lost the collector for good whenever one pause ended between another's
two calls: that one had seen it off, turned it off again and left it off. From then on
no reference cycle was freed, and a stack's loaded form is a web of cycles, so at ~10
stack lives a second ``kiln serve`` grew by ~90 KB per stack life (bench/README.md,
"Soak (issue 10)": 92 -> 420 MB in 20 minutes).
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager


class _Pauses:
    """The pauses in progress in this process and what to restore after the last."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.active = 0
        self.resume = False


_PAUSES = _Pauses()


@contextmanager
def gc_paused() -> Iterator[None]:
    """The collector is off for the body (and for as long as any other thread's pause
    lasts); once the last pause ends it is on again if it was on when the first began.

    What survives the work (a parsed template, a stack's definitions) lives as long as
    the stack is loaded, so when the last pause ends it is moved straight to the oldest
    generation (``gc.freeze()`` then ``gc.unfreeze()``, two list splices): otherwise the
    next two young collections would each traverse all of it on its way there, which at
    10,000 resources costs about as much as a tenth of the parse, and more than linearly
    (the traversal no longer fits in the CPU caches). Objects promoted so are still
    collected by the next full collection. In a server that froze its start-up objects
    the promotion is skipped (it would thaw them), and young collections pay instead."""
    pauses = _PAUSES
    with pauses.lock:
        if pauses.active == 0:
            pauses.resume = gc.isenabled()
            gc.disable()
        pauses.active += 1
    try:
        yield
    finally:
        with pauses.lock:
            pauses.active -= 1
            if pauses.active == 0:
                # not when the process has frozen objects for good (kiln.server freezes
                # what exists after start-up): unfreeze() would hand them all back
                if gc.get_freeze_count() == 0:
                    gc.freeze()
                    gc.unfreeze()
                if pauses.resume:
                    gc.enable()
