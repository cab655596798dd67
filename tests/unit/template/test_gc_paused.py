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


def test_objects_frozen_before_stay_frozen() -> None:
    gc.freeze()
    try:
        frozen = gc.get_freeze_count()
        assert frozen > 0
        with gc_paused():
            made = [[i] for i in range(1000)]
        assert gc.get_freeze_count() >= frozen
        assert len(made) == 1000
    finally:
        gc.unfreeze()
