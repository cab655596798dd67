"""Implicit dependencies: what a plugin says a resource waits for beyond its references.

Heat adds them in ``add_dependencies`` (a port waits for every subnet of its network, a
floating IP for the router interface that makes its port reachable, ...), so a template
need not say ``depends_on``. The engine asks each plugin that declares
:meth:`~kiln.resources.base.Resource.implicit_requirements` whenever it builds a stack's
graph, and adds the answers to the slots' requirements (so a stored stack keeps them and
a delete goes the other way round). Only types that override the hook cost anything.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from kiln.engine.model.live_stack import LiveStack
from kiln.errors import KilnError
from kiln.resources.base import Resource
from kiln.template.definitions import name_set


class StackPeers:
    """:class:`kiln.resources.runtime.Peers` over one live stack."""

    def __init__(self, stack: LiveStack) -> None:
        self._stack = stack
        self._by_type: dict[str, list[Resource]] | None = None
        self._values: dict[tuple[str, str], Any] = {}

    def of_type(self, *type_names: str) -> Sequence[Resource]:
        if self._by_type is None:
            self._by_type = {}
            for slot in self._stack.slots.values():
                for key in {slot.definition.type, slot.type_name}:
                    self._by_type.setdefault(key, []).append(slot.plugin)
        if len(type_names) == 1:
            return self._by_type.get(type_names[0], [])
        seen: dict[int, Resource] = {}
        for name in type_names:
            for plugin in self._by_type.get(name, ()):
                seen.setdefault(id(plugin), plugin)
        return list(seen.values())

    def value(self, resource: Resource, key: str) -> Any:
        cached = (resource.name, key)
        if cached not in self._values:
            self._values[cached] = self._resolve(resource, key)
        return self._values[cached]

    def _resolve(self, resource: Resource, key: str) -> Any:
        props = resource.definition.properties
        if not isinstance(props, dict) or key not in props:
            return None
        try:
            return self._stack.runtime.resolve(props[key])
        except (KilnError, TypeError, ValueError):
            # a value that cannot be resolved yet is judged by the plugin's validation
            # later, in its proper context (Heat ignores it here the same way)
            return None

    def requirements(self, name: str) -> frozenset[str]:
        slot = self._stack.slots.get(name)
        return slot.requires if slot is not None else frozenset()


def add_implicit_requirements(stack: LiveStack) -> None:
    """Add each plugin's implicit requirements to its slot (external resources depend
    on nothing, as in Heat)."""
    slots = stack.slots
    asking = [s for s in slots.values()
              if type(s.plugin).implicit_requirements is not Resource.implicit_requirements
              and s.definition.external_id is None]
    if not asking:
        return
    peers = StackPeers(stack)
    extra: dict[str, set[str]] = {}
    for slot in asking:
        names = {n for n in slot.plugin.implicit_requirements(peers)
                 if n in slots and n != slot.name and n not in slot.requires}
        if names:
            extra[slot.name] = names
    for name, names in extra.items():
        slots[name].requires = name_set(slots[name].requires | names)
