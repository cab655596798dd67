"""Parsed templates by raw-template id, shared by every read and action of an engine."""

from __future__ import annotations

import hashlib
import json
import weakref
from collections.abc import Mapping
from typing import Any

from kiln.db.records import RawTemplateRecord
from kiln.template.template import Template


class _Entry:
    """One parsed template and the raw-template ids that name it."""

    __slots__ = ("ids", "key", "template", "weight")

    def __init__(self, template: Template, key: bytes | None) -> None:
        self.template = template
        self.key = key
        self.weight = max(1, len(template.resources))
        self.ids = 0


def content_key(raw: Mapping[str, Any], files: Mapping[str, str]) -> bytes | None:
    """A digest of a template body and its files, in their order (the order of the
    resources is part of a template); None if the body is not plain JSON data. Two
    bodies with the same key are also compared (``==``) before one parse stands for
    both, so what the digest cannot tell apart (an integer key and its string, a date
    and its text) is never shared."""
    try:
        text = json.dumps([raw, sorted(files)], separators=(",", ":"), default=repr)
    except (TypeError, ValueError, RecursionError):
        return None
    digest = hashlib.blake2b(text.encode(), digest_size=20)
    for name in sorted(files):
        digest.update(hashlib.blake2b(files[name].encode(), digest_size=20).digest())
    return digest.digest()


class TemplateCache:
    """Parsed templates by raw-template id: parsing is the cost of every stack read.

    Bounded by the resources the cached templates declare (``max_resources``) as well as
    by their number: one 10,000-resource template weighs as much as the whole cache of
    small ones would, and a cache of 256 such templates would be gigabytes. The most
    recently used template always stays, however big. The default holds one
    10,000-resource template beside small ones (a big ResourceGroup's child beside its
    parent's templates: evicting the child makes the next read parse it again) but not
    two: once an update caches its new template, the old one goes.

    Ids whose stored bodies are the same (the children of a ResourceGroup, or of many
    groups with the same member definition) share one parsed template, which counts
    once against ``max_resources``: 100 groups of 1,000 identical members are 1,000
    resources to the cache, not 100,000, so a delete of them loads every child without
    parsing its template again, and a create parses the first child's template only
    (:meth:`load`). A :class:`Template` is immutable, so sharing it is safe.
    """

    def __init__(self, size: int = 256, max_resources: int = 15000) -> None:
        self.size = size
        self.max_resources = max_resources
        self._items: dict[int, _Entry] = {}
        self._by_key: dict[bytes, _Entry] = {}
        #: every template parsed through the cache that something still holds (the
        #: children of a group being created are parsed before the first one is cached)
        self._alive: weakref.WeakValueDictionary[bytes, Template] = weakref.WeakValueDictionary()
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
        return found.template

    def get(self, raw: RawTemplateRecord) -> Template:
        found = self.cached(raw.id)
        if found is not None:
            return found
        from kiln.template import load_template
        from kiln.template.template import internal_keys

        files = raw.files or {}
        with internal_keys():   # a stored template is one Kiln wrote
            key = _keyed(content_key(raw.template, files), raw.template)
            template = self._same(key, raw.template, files)
            if template is None:
                template = load_template(raw.template, files=files, max_size=1 << 62)
        self._add(raw.id, template, key)
        return template

    def load(self, body: Mapping[str, Any], files: Mapping[str, str], *, max_size: int) -> Template:
        """``load_template(body, files=files, max_size=max_size)``, or the cached parse
        of the same body and files. The size and shape checks run either way (they are
        what a parse would refuse first, and cheap beside a parse)."""
        from kiln.template import parser
        from kiln.template.template import build_template

        data = parser.load_data(body, max_size=max_size)
        key = _keyed(content_key(data, files), data)
        template = self._same(key, data, files)
        if template is None:
            template = build_template(data, files=files)
            if key is not None:
                self._alive[key] = template
        return template

    def put(self, raw_id: int, template: Template) -> None:
        """Cache a template parsed from the body that ``raw_id`` stores (a create or an
        update already has it: reads then need not parse the stored copy again)."""
        from kiln.template.template import internal_keys

        with internal_keys():   # a body whose CFN ExternalId was kept was Kiln's
            key = _keyed(content_key(template.raw, template.files), template.raw)
        self._add(raw_id, self._same(key, template.raw, template.files) or template, key)

    def discard(self, raw_id: int | None) -> None:
        if raw_id is None:
            return
        found = self._items.pop(raw_id, None)
        if found is None:
            return
        found.ids -= 1
        if found.ids == 0:
            self._weight -= found.weight
            if found.key is not None and self._by_key.get(found.key) is found:
                del self._by_key[found.key]

    # -- internals ------------------------------------------------------------------------
    def _same(
        self, key: bytes | None, raw: Mapping[str, Any], files: Mapping[str, str]
    ) -> Template | None:
        """A template already parsed from this body and files, if one is known."""
        if key is None:
            return None
        entry = self._by_key.get(key)
        found = entry.template if entry is not None else self._alive.get(key)
        if found is None or found.raw != raw or found.files != files:
            return None
        return found

    def _add(self, raw_id: int, template: Template, key: bytes | None) -> None:
        self.discard(raw_id)
        entry = self._by_key.get(key) if key is not None else None
        if entry is None or entry.template is not template:
            entry = _Entry(template, key)
        entry.ids += 1
        if entry.ids == 1:
            self._weight += entry.weight
            if key is not None:
                self._by_key.setdefault(key, entry)
                self._alive[key] = template
        self._items[raw_id] = entry
        while len(self._items) > 1 and (
            len(self._items) > self.size or self._weight > self.max_resources
        ):
            self.discard(next(iter(self._items)))


def _keyed(key: bytes | None, data: Mapping[str, Any]) -> bytes | None:
    """The content key of a parse, told apart when the body has a CFN ``ExternalId``:
    honoured in a template Kiln wrote, dropped from a user's (see
    :data:`kiln.template.template.INTERNAL_KEYS`)."""
    from kiln.template.template import INTERNAL_KEYS

    resources = data.get("Resources")
    if key is None or not INTERNAL_KEYS.get() or not isinstance(resources, Mapping):
        return key
    marked = any(isinstance(r, Mapping) and "ExternalId" in r for r in resources.values())
    return key + b"\x01" if marked else key
