"""Template versions as data: each is a table of function names plus its section rules.

A :class:`TemplateVersion` holds only what it *adds or changes* relative to its parent;
lookups walk the parent chain, so ``heat_template_version.2017-09-01`` lists five new
functions, not thirty. Old versions stay valid forever: nothing is ever taken out of a
table; a version that drops a function maps the name to :class:`~kiln.template.function.
Removed` (using it is then an error), and a name the version does not know at all is left
as plain data, exactly as Heat does with a function newer than the template's version.

Registry
--------
Versions live in one explicit registry, :data:`REGISTRY`. A version is created once with
:func:`define` (key + date, its parent, sections, resource and output keys, aliases) and
functions are added with :meth:`TemplateVersion.add_functions` /
:meth:`TemplateVersion.add_condition_functions`. Function groups register themselves on
import; :func:`ensure_loaded` imports the HOT and CFN packages, so any caller that needs
the full tables calls it (``load_template`` does).

How to add a function to a version (e.g. for the CFN package)::

    from kiln.template import versions
    v = versions.REGISTRY.get("AWSTemplateFormatVersion", "2010-09-09")
    v.add_functions({"Fn::Join": Join, "Fn::Select": Select})
    v.add_condition_functions({"Fn::Equals": Equals})

How to add a version: ``versions.define(key, date, family=..., parent=..., sections=...,
resource_keys=..., output_keys=..., conditions_section=...)``. Pass ``registered=False``
for an abstract base (Heat's ``CfnTemplateBase``) that only exists to be a parent.

Condition functions: inside the ``conditions`` section (and resource/output
``condition:`` values) only the version's condition table applies; every other function
name the version knows becomes :class:`~kiln.template.function.Invalid` there (removed
ones stay :class:`Removed`), as in Heat.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from kiln.template.errors import version_error
from kiln.template.function import Function, Invalid, Removed

Family = Literal["hot", "cfn"]
FunctionClass = type[Function]


@dataclass(eq=False)
class TemplateVersion:
    """One template format version; compares by identity."""

    key: str
    date: str
    family: Family
    parent: TemplateVersion | None = None
    #: top-level sections this version allows (the version key included)
    sections: frozenset[str] = frozenset()
    #: keys allowed inside a resource / an output
    resource_keys: frozenset[str] = frozenset()
    output_keys: frozenset[str] = frozenset()
    #: the section holding conditions, or None if the version has none
    conditions_section: str | None = None
    deletion_policies: Mapping[str, str] = field(default_factory=dict)
    aliases: tuple[str, ...] = ()
    registered: bool = True
    _own: dict[str, FunctionClass] = field(default_factory=dict)
    _own_cond: dict[str, FunctionClass] = field(default_factory=dict)
    _cache: dict[str, dict[str, FunctionClass]] = field(default_factory=dict)

    @property
    def name(self) -> str:
        """``heat_template_version.2018-08-31`` — Heat's name in template_versions."""
        return f"{self.key}.{self.date}"

    @property
    def type(self) -> str:
        """``hot`` or ``cfn`` as Heat's template_versions API reports it."""
        return self.family

    def add_functions(self, table: Mapping[str, FunctionClass]) -> None:
        self._own.update(table)
        _invalidate_caches()

    def add_condition_functions(self, table: Mapping[str, FunctionClass]) -> None:
        self._own_cond.update(table)
        _invalidate_caches()

    def functions(self) -> Mapping[str, FunctionClass]:
        """Every function name this version knows (``Removed`` ones included)."""
        table = self._cache.get("fn")
        if table is None:
            table = dict(self.parent.functions()) if self.parent else {}
            table.update(self._own)
            self._cache["fn"] = table
        return table

    def condition_functions(self) -> Mapping[str, FunctionClass]:
        """The table that applies inside conditions (Invalid for the rest)."""
        table = self._cache.get("cond")
        if table is None:
            own: dict[str, FunctionClass] = {}
            chain: list[TemplateVersion] = []
            v: TemplateVersion | None = self
            while v is not None:
                chain.append(v)
                v = v.parent
            for ver in reversed(chain):
                own.update(ver._own_cond)
            table = {name: (Removed if cls is Removed or issubclass(cls, Removed)
                            else Invalid)
                     for name, cls in self.functions().items()}
            table.update(own)
            self._cache["cond"] = table
        return table

    def available_functions(self, *, conditions: bool = False) -> dict[str, FunctionClass]:
        """Names usable (not removed/invalid) — what template_functions lists."""
        table = self.condition_functions() if conditions else self.functions()
        return {n: c for n, c in table.items() if not issubclass(c, Removed | Invalid)}

    def __repr__(self) -> str:
        return f"<TemplateVersion {self.name}>"


class VersionRegistry:
    """All known versions, looked up by (key, date-or-alias)."""

    def __init__(self) -> None:
        self._versions: dict[tuple[str, str], TemplateVersion] = {}
        self._all: list[TemplateVersion] = []

    def add(self, version: TemplateVersion) -> None:
        self._all.append(version)
        if not version.registered:
            return
        for label in (version.date, *version.aliases):
            self._versions[(version.key, label)] = version

    def get(self, key: str, value: str) -> TemplateVersion:
        ensure_loaded()
        try:
            return self._versions[(key, value)]
        except KeyError:
            pass
        if key not in self.keys():
            raise version_error("Template version was not provided")
        available = sorted(label for (k, label) in self._versions if k == key)
        if len(available) > 1:
            raise version_error(f'"{key}: {value}". "{key}" should be one of: '
                                + ", ".join(available))
        raise version_error(f'"{key}: {value}". "{key}" should be: {available[0]}')

    def keys(self) -> set[str]:
        return {k for (k, _label) in self._versions}

    def detect(self, data: Mapping[Any, Any]) -> TemplateVersion:
        """The version a parsed template declares (Heat's rules for ambiguity)."""
        ensure_loaded()
        present = [k for k in self.keys() if isinstance(data.get(k), str)]
        if len(present) > 1:
            raise version_error("Ambiguous versions (" + ", ".join(sorted(present)) + ")")
        if not present:
            raise version_error("Template version was not provided")
        value = data[present[0]]
        assert isinstance(value, str)
        return self.get(present[0], value)

    def listing(self) -> list[tuple[str, str, list[str]]]:
        """(``key.date``, type, [``key.alias``...]) per version: Heat's template_versions."""
        ensure_loaded()
        rows = [(v.name, v.family, [f"{v.key}.{a}" for a in v.aliases])
                for v in self._all if v.registered]
        return sorted(rows)

    def all_versions(self) -> list[TemplateVersion]:
        ensure_loaded()
        return [v for v in self._all if v.registered]


REGISTRY = VersionRegistry()


def define(key: str, date: str, *, family: Family, parent: TemplateVersion | None = None,
           sections: Iterable[str] | None = None, resource_keys: Iterable[str] | None = None,
           output_keys: Iterable[str] | None = None, conditions_section: str | None = "",
           deletion_policies: Mapping[str, str] | None = None,
           aliases: Iterable[str] = (), registered: bool = True) -> TemplateVersion:
    """Create and register a version; unspecified rules are inherited from ``parent``."""

    def inherit(value: Iterable[str] | None, attr: str) -> frozenset[str]:
        if value is not None:
            return frozenset(value)
        return getattr(parent, attr) if parent else frozenset()

    version = TemplateVersion(
        key=key, date=date, family=family, parent=parent,
        sections=inherit(sections, "sections"),
        resource_keys=inherit(resource_keys, "resource_keys"),
        output_keys=inherit(output_keys, "output_keys"),
        conditions_section=(conditions_section if conditions_section != ""
                            else (parent.conditions_section if parent else None)),
        deletion_policies=(dict(deletion_policies) if deletion_policies is not None
                           else dict(parent.deletion_policies) if parent else {}),
        aliases=tuple(aliases), registered=registered)
    REGISTRY.add(version)
    return version


def _invalidate_caches() -> None:
    for v in REGISTRY._all:
        v._cache.clear()


_loaded = False
_loading = False
_load_lock = threading.RLock()


def ensure_loaded() -> None:
    """Import the packages that define and fill the version tables (idempotent).

    Thread-safe: a server validates its first templates in worker threads at once, and
    a thread that found the tables marked loaded while another was still filling them
    answered "Template version was not provided" (seen on a fresh server, a different
    case each run). Other threads wait for the imports; the importing thread's own
    calls made while importing return at once."""
    global _loaded, _loading
    if _loaded:
        return
    with _load_lock:
        if _loaded or _loading:
            return
        _loading = True
        try:
            import importlib

            for module in ("kiln.template.hot", "kiln.template.cfn"):
                try:
                    importlib.import_module(module)
                except ModuleNotFoundError as exc:  # a family not written yet
                    if exc.name != module:
                        raise
        finally:
            _loading = False
        _loaded = True
