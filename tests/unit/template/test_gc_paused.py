"""gc_paused: the collector is off during bulk parsing and back on afterwards, however
pauses on several threads overlap, and a process's permanently frozen objects
(kiln.server freezes its start-up state) stay frozen through it."""

from __future__ import annotations

import gc
import sys
import threading

from kiln.template.gc_pause import gc_paused


def test_the_collector_is_paused_inside_and_restored_after() -> None:
    assert gc.isenabled()
    with gc_paused():
        assert not gc.isenabled()
    assert gc.isenabled()


def test_overlapping_pauses_keep_it_off_until_the_last_ends() -> None:
    """Two pauses that overlap (a create's parse on a worker thread, a stack load on the
    event loop): the first to end must not switch the collector back on under the
    other, and the last to end must. Each pause deciding alone is what once left a
    server's collector off for good (kiln/template/gc_pause.py)."""
    assert gc.isenabled()
    first, second = gc_paused(), gc_paused()
    first.__enter__()
    second.__enter__()
    first.__exit__(None, None, None)
    assert not gc.isenabled()
    second.__exit__(None, None, None)
    assert gc.isenabled()


def test_pauses_racing_on_threads_leave_it_on() -> None:
    """Many threads pausing at once, switched between as often as the interpreter
    allows: afterwards the collector is on. (Before the pauses were counted, a pause
    ending between another's ``isenabled()`` and ``disable()`` left it off in about one
    round in five here.)"""
    assert gc.isenabled()

    def work() -> None:
        for _ in range(5000):
            with gc_paused():
                [object() for _ in range(20)]

    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        for _ in range(20):
            threads = [threading.Thread(target=work) for _ in range(4)]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
            assert gc.isenabled()
    finally:
        sys.setswitchinterval(interval)
        gc.enable()


def _frozen(obj: object) -> bool:
    """Whether ``obj`` (a tracked object) is in the permanent generation: gc.get_objects()
    lists generations 0-2 only. Asked of one object rather than of the freeze count,
    which falls whenever any frozen object is freed (an xdist worker's I/O thread frees
    some at any moment)."""
    assert gc.is_tracked(obj)
    return all(o is not obj for o in gc.get_objects())


def test_objects_frozen_before_stay_frozen() -> None:
    kept = [object()]
    gc.freeze()
    try:
        assert _frozen(kept)
        with gc_paused():
            made = [[i] for i in range(1000)]
        assert _frozen(kept)
        assert len(made) == 1000
    finally:
        gc.unfreeze()
    assert not _frozen(kept)
