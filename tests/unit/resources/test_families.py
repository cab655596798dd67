"""The plugin families (kiln.resources.aws, .heat, .openstack) each register their own
types, and moving what they share into kiln.resources.common changed no registration.

``builtin_types.json`` is the listing as it was before the move (issue 23): every type
there is still registered once, by the same class of the same family module, listed in
the same order. A type added since only has to follow the family rule.
"""

from __future__ import annotations

import importlib
import json
import pkgutil
from collections import Counter
from pathlib import Path

from kiln.resources.registry import BUILTIN_PACKAGES, build_registry, plugins_in_module

SNAPSHOT = Path(__file__).with_name("builtin_types.json")
FAMILY = {"kiln.resources.aws", "kiln.resources.heat", "kiln.resources.openstack"}


def offered() -> Counter[str]:
    """How many built-in plugin modules offer each type name (a placeholder for a
    service Kiln does not drive, ``implemented = False``, not counted: it never
    replaces a real plugin)."""
    counts: Counter[str] = Counter()
    for package_name in BUILTIN_PACKAGES:
        package = importlib.import_module(package_name)
        for info in pkgutil.iter_modules(package.__path__):
            if not info.ispkg and not info.name.startswith("_"):
                module = importlib.import_module(f"{package_name}.{info.name}")
                counts.update(
                    name for name, cls in plugins_in_module(module).items() if cls.implemented
                )
    return counts


def test_every_type_is_offered_by_exactly_one_family_module() -> None:
    twice = {name: n for name, n in offered().items() if n != 1}
    assert twice == {}


def test_every_type_is_a_class_of_its_own_family() -> None:
    registry = build_registry(use_entry_points=False)
    outside = {
        name: registry.get(name).__module__
        for name in registry.types()
        if registry.get(name).__module__.rsplit(".", 1)[0] not in FAMILY
    }
    assert outside == {}


def test_the_listing_before_the_move_is_unchanged() -> None:
    before = [tuple(entry) for entry in json.loads(SNAPSHOT.read_text())]
    registry = build_registry(use_entry_points=False)
    now = [
        (name, registry.get(name).__module__, registry.get(name).__qualname__)
        for name in registry.types()
    ]
    known = {name for name, _, _ in before}
    assert [entry for entry in now if entry[0] in known] == before
