"""Parsed templates by raw-template id, shared by every read and action of an engine.
"""

from __future__ import annotations

from kiln.db.records import RawTemplateRecord
from kiln.template.template import Template


class TemplateCache:
    """Parsed templates by raw-template id: parsing is the cost of every stack read.

    Bounded by the resources the cached templates declare (``max_resources``) as well as
    by their number: one 10,000-resource template weighs as much as the whole cache of
    small ones would, and a cache of 256 such templates would be gigabytes. The most
    recently used template always stays, however big. The default holds one
    10,000-resource template beside small ones (a big ResourceGroup's child beside its
    parent's templates: evicting the child makes the next read parse it again) but not
    two: once an update caches its new template, the old one goes.
    """

    def __init__(self, size: int = 256, max_resources: int = 15000) -> None:
        self.size = size
        self.max_resources = max_resources
        self._items: dict[int, tuple[Template, int]] = {}
        self._weight = 0

    def __contains__(self, raw_id: object) -> bool:
        """Safe from the database's reader threads (one atomic dict lookup)."""
        return raw_id in self._items

    def cached(self, raw_id: int) -> Template | None:
        """The parsed template for ``raw_id`` if it is cached, else None."""
        found = self._items.pop(raw_id, None)
        if found is None:
            return None
        self._items[raw_id] = found  # most recently used last
        return found[0]

    def get(self, raw: RawTemplateRecord) -> Template:
        found = self.cached(raw.id)
        if found is not None:
            return found
        from kiln.template import load_template

        tmpl = load_template(raw.template, files=raw.files, max_size=1 << 62)
        self.put(raw.id, tmpl)
        return tmpl

    def put(self, raw_id: int, template: Template) -> None:
        """Cache a template parsed from the body that ``raw_id`` stores (a create or an
        update already has it: reads then need not parse the stored copy again)."""
        self.discard(raw_id)
        weight = max(1, len(template.resource_names))
        self._items[raw_id] = (template, weight)
        self._weight += weight
        while len(self._items) > 1 and (len(self._items) > self.size
                                        or self._weight > self.max_resources):
            self.discard(next(iter(self._items)))

    def discard(self, raw_id: int | None) -> None:
        if raw_id is None:
            return
        found = self._items.pop(raw_id, None)
        if found is not None:
            self._weight -= found[1]
