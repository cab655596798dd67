"""What `kiln serve` sets up for the garbage collector once it has started: start-up
objects frozen, and a youngest-generation threshold large enough that a 100,000-resource
create does not spend a growing share collecting (bench/README.md, "Garbage collection
at 100,000 resources")."""

from __future__ import annotations

import gc

from kiln.server import freeze_startup_objects


def test_startup_objects_frozen_and_the_young_threshold_raised() -> None:
    before = gc.get_threshold()
    try:
        freeze_startup_objects()
        assert gc.get_freeze_count() > 0
        assert gc.get_threshold() == (7000, 10, 10)
    finally:
        gc.unfreeze()
        gc.set_threshold(*before)
