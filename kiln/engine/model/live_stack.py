"""A stack held in memory while an action runs on it (or while it is being shown).

:class:`LiveStack` ties together the stored stack row, its parsed template bound to its
environment and parameters, and one :class:`Slot` per resource (definition, plugin
instance, row id). It is the :class:`~kiln.template.definitions.ResourceResolver` its
template resolves against and, through :class:`StackRuntime`, the
:class:`~kiln.resources.base.ResourceRuntime` its plugins see. It does no I/O itself:
loading is in :mod:`kiln.engine.store.loader`, writing in :mod:`kiln.engine.store.recorder`.
"""

from __future__ import annotations

import random
import string
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from kiln.engine.model.stack_runtime import StackRuntime
from kiln.errors import InvalidTemplateReference, NotSupported
from kiln.resources.base import (
    Resource,
    ResourceState,
)
from kiln.template.definitions import NO_NAMES, ResourceDefinition, StackIdentity
from kiln.template.limits import DEFAULT_MAX_OUTPUT
from kiln.template.yaql_function import DEFAULT_TIMEOUT as DEFAULT_YAQL_TIMEOUT

if TYPE_CHECKING:
    from kiln.engine.actions.nested import NestedOps


@dataclass
class StackInfo:
    """The stored stack row's fields the engine reads and changes during an action."""

    id: str
    name: str
    project_id: str
    action: str
    status: str
    status_reason: str = ""
    raw_template_id: int = 0
    prev_raw_template_id: int | None = None
    timeout_mins: int | None = None
    disable_rollback: bool = True
    tags: tuple[str, ...] = ()
    owner_id: str | None = None
    root_stack_id: str = ""
    nested_depth: int = 0
    parent_resource_name: str | None = None
    username: str | None = None
    user_id: str | None = None
    stack_user_project_id: str | None = None
    current_traversal: str | None = None


@dataclass(slots=True)
class Slot:
    """One resource row of a live stack (one per resource, so slotted: ~10,000 of them
    are alive at once while a big stack's action runs)."""

    name: str
    definition: ResourceDefinition
    type_name: str                      # the registry's final type (after env mapping)
    plugin: Resource
    db_id: int = 0
    uuid: str = ""
    requires: frozenset[str] = NO_NAMES
    created_at: Any = None
    updated_at: Any = None
    #: row ids for replacement bookkeeping
    replaces: int | None = None
    replaced_by: int | None = None
    #: data keys as last persisted (to write only the difference)
    saved_data: dict[str, str] = field(default_factory=dict)
    #: properties were validated from a definition that references no resource, so
    #: the create can use them as they are
    props_final: bool = False

    @property
    def state(self) -> ResourceState:
        return self.plugin.state

    @property
    def physical_id(self) -> str | None:
        return self.plugin.resource_id


#: a resource in these actions has no attributes yet (or any more): get_attr gives None,
#: as in Heat (outputs read while a create runs, before the resource is created)
_NO_ATTRIBUTES = frozenset({"INIT", "DELETE"})


def short_id(length: int = 12) -> str:
    """Heat's physical-name suffix alphabet: lowercase letters and digits."""
    return "".join(random.choices(string.ascii_lowercase + string.digits, k=length))


def describe(stack: LiveStack, slot: Slot) -> str:
    """How Heat names a resource in messages: ``NoneResource "a" [id] Stack "s" [id]``."""
    kind = type(slot.plugin).__name__
    where = f'Stack "{stack.info.name}" [{stack.info.id}]'
    if slot.physical_id is not None:
        return f'{kind} "{slot.name}" [{slot.physical_id}] {where}'
    return f'{kind} "{slot.name}" {where}'


class LiveStack:
    """Template + environment + resources of one stack, for one action or one read."""

    def __init__(self, info: StackInfo, *, template: Any, environment: Any,
                 user_params: Mapping[str, Any], files: Mapping[str, str],
                 conf: Any, nested: NestedOps | None = None,
                 parent_facade: Mapping[str, Any] | None = None) -> None:
        self.info = info
        self.template = template
        self.environment = environment
        self.user_params = dict(user_params)
        self.files = dict(files)
        self.conf = conf
        self.nested = nested
        self.parent_facade = dict(parent_facade or {})
        self.slots: dict[str, Slot] = {}
        #: rows superseded by a replacement but not yet deleted (ResourceRecord)
        self.stale: list[Any] = []
        #: type name -> (final type, plugin class), see kiln.engine.model.plugins.plugin_class
        self.type_cache: dict[str, Any] = {}
        self.type_cache_usable: bool | None = None
        self.runtime = StackRuntime(self)
        self.bound: Any = None

    @property
    def identity(self) -> StackIdentity:
        return StackIdentity(stack_name=self.info.name, stack_id=self.info.id,
                             project_id=self.info.project_id,
                             region=getattr(self.conf, "region_name_for_services", "RegionOne"))

    def bind(self, *, validate_params: bool | None = True) -> Any:
        self.bound = self.template.bind(environment=self.environment,
                                        user_params=self.user_params,
                                        identity=self.identity, resolver=self,
                                        validate_params=validate_params,
                                        max_output=_max_output(self.conf),
                                        yaql_limits=_yaql_limits(self.conf),
                                        yaql_timeout=_yaql_timeout(self.conf))
        return self.bound

    def identity_dict(self) -> dict[str, str]:
        return {"stack_name": self.info.name, "stack_id": self.info.id,
                "tenant": self.info.project_id, "path": ""}

    # -- ResourceResolver -----------------------------------------------------------------
    def _slot(self, name: str) -> Slot:
        slot = self.slots.get(name)
        if slot is None:
            raise InvalidTemplateReference(
                f'The specified reference "{name}" (in unknown) is incorrect.')
        return slot

    def reference(self, name: str) -> Any:
        return self._slot(name).plugin.reference_id()

    def attribute(self, name: str, attr: str, path: Sequence[Any]) -> Any:
        plugin = self._slot(name).plugin
        if plugin.state.action in _NO_ATTRIBUTES:
            return None
        return plugin.get_attribute(attr, *path)

    def all_attributes(self, name: str) -> Mapping[str, Any] | None:
        plugin = self._slot(name).plugin
        if plugin.state.action in _NO_ATTRIBUTES:
            return None
        return plugin.all_attributes()

    def resource_type(self, name: str) -> str:
        return self._slot(name).definition.type

    def facade(self, kind: str) -> Any:
        """The parent resource's ``kind``; a top-level stack has no parent, so an output
        using resource_facade carries an ``output_error`` (Heat 27's is a leaked Python
        error, ``'NoneType' object has no attribute 'metadata_get'``)."""
        if self.info.owner_id is None and not self.parent_facade:
            raise NotSupported(
                f"resource_facade ({kind}) is only available in a nested stack; "
                f'stack "{self.info.name}" has no parent resource.')
        return self.parent_facade.get(kind)

    def has_attribute(self, name: str, attr: str) -> bool:
        """Lets the template layer reject an unknown ``get_attr`` name before a create or
        update starts (Heat's 400); a stored stack (it has a template row) is never
        re-judged, so one that failed on such a name can still be deleted."""
        if self.info.raw_template_id:
            return True
        from kiln.engine.model.plugins import attribute_known

        return attribute_known(self, name, attr)

    def plugin_class_name(self, name: str) -> str:
        """Heat's cycle message names each resource with its plugin class; asked while
        definitions are built, before the slots exist."""
        from kiln.engine.model.plugins import declared_class

        return declared_class(self, name).__name__

    def validates_definition(self, name: str) -> bool:
        """Whether the template checks validate this resource (not OS::Heat::None)."""
        from kiln.engine.model.plugins import declared_class, validates_definition
        from kiln.errors import KilnError

        try:
            cls = declared_class(self, name)
        except KilnError:
            return True  # the unknown type is reported with the resource's own error
        return validates_definition(cls)

    def availability_zones(self) -> list[str]:
        return ["nova"]

    # -- helpers ------------------------------------------------------------------------
    def physical_resource_name(self, resource_name: str) -> str:
        return f"{self.info.name}-{resource_name}-{short_id()}"


def _max_output(conf: Any) -> int:
    """``[kiln_engine] max_function_output_size`` (the template layer's default for a
    runtime configured without the group, as some tests build one)."""
    group = getattr(conf, "kiln_engine", None)
    return int(getattr(group, "max_function_output_size", DEFAULT_MAX_OUTPUT))


def _yaql_limits(conf: Any) -> tuple[int, int]:
    """``[yaql] limit_iterators`` and ``memory_quota`` (Heat's defaults without them)."""
    group = getattr(conf, "yaql", None)
    return (int(getattr(group, "limit_iterators", 200)),
            int(getattr(group, "memory_quota", 10000)))


def _yaql_timeout(conf: Any) -> float:
    return float(getattr(getattr(conf, "yaql", None), "timeout", DEFAULT_YAQL_TIMEOUT))
