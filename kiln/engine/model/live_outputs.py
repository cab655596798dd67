"""Which outputs Heat reads from the cloud each time they are shown.

Heat keeps an attribute's value once resolved, except the ones a plugin declares
uncached (``show`` of a cloud object, a volume's ``status`` and ``attachments``): an
output naming one of those is the cloud's value whenever the stack is shown. Kiln
stores outputs at the end of each action; for a template whose outputs name such an
attribute, a read refreshes those resources and resolves the outputs again (the
service does that; this module only finds them, from the template alone).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import Any

from kiln.resources.base import Resource
from kiln.template.function import child_nodes
from kiln.template.hot.resources import GetAttThenSelect


def _attribute_references(tree: Any) -> Iterator[tuple[str, str | None]]:
    """(resource, attribute or None for all of them) of every literal get_attr."""
    pending = child_nodes(tree)
    while pending:
        node = pending.pop()
        if isinstance(node, GetAttThenSelect):
            ref = node.literal_reference()
            if ref is not None:
                yield ref
        pending.extend(child_nodes(node.args))


def _is_live(cls: type[Resource], attribute: str | None) -> bool:
    if attribute == "show":
        return cls.refresh_live is not Resource.refresh_live
    if attribute is None:
        return bool(cls.live_attributes)
    return attribute in cls.live_attributes


def live_resources(outputs: Mapping[str, Any],
                   plugin_class: Callable[[str], type[Resource] | None]) -> set[str]:
    """Names of the resources whose attributes the *outputs* (a template's output
    snippets) read live; *plugin_class* gives a resource's plugin class by name."""
    names: set[str] = set()
    for snippet in outputs.values():
        for name, attribute in _attribute_references(snippet.value):
            cls = plugin_class(name)
            if cls is not None and _is_live(cls, attribute):
                names.add(name)
    return names
