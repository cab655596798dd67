"""gc_paused: the collector is off during bulk parsing and back on afterwards, and a
process's permanently frozen objects (kiln.server freezes its start-up state) stay
frozen through it."""

from __future__ import annotations

import gc

from kiln.template.function import gc_paused


def test_the_collector_is_paused_inside_and_restored_after() -> None:
    assert gc.isenabled()
    with gc_paused():
        assert not gc.isenabled()
    assert gc.isenabled()


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
