"""A stack held in memory while an action runs on it (or while it is being shown).

:class:`LiveStack` ties together the stored stack row, its parsed template bound to its
environment and parameters, and one :class:`Slot` per resource (definition, plugin
instance, row id). It is the :class:`~kiln.template.definitions.ResourceResolver` its
template resolves against and, through :class:`StackRuntime`, the
:class:`~kiln.resources.base.ResourceRuntime` its plugins see. It does no I/O itself:
loading is in :mod:`kiln.engine.store.loader`, writing in :mod:`kiln.engine.store.recorder`.
"""

from __future__ import annotations

import datetime as dt
import random
import string
import weakref
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from kiln.db.records import ResourceRecord
from kiln.engine.model.context import RequestContext
from kiln.engine.model.settings import EngineConf
from kiln.engine.model.shapes import IssuedKeypair as IssuedKeypair
from kiln.engine.model.shapes import StackIdentityReply as StackIdentityReply
from kiln.engine.model.stack_runtime import StackRuntime
from kiln.errors import InvalidTemplateReference, KilnError, NotSupported, ResourceTypeNotFound
from kiln.notifications import NULL, Notifier
from kiln.resources.base import Resource, ResourceState
from kiln.resources.nested import NestedStackOps
from kiln.resources.provider import TemplateResource
from kiln.resources.runtime import AlarmStore, SoftwareConfigStore, SoftwareDeploymentStore
from kiln.template.bound import BoundTemplate
from kiln.template.definitions import NO_NAMES, ResourceDefinition, StackIdentity
from kiln.template.environment import Environment
from kiln.template.template import Template


class PluginLookup(Protocol):
    """Finds plugin classes: the engine passes one in (the registry and provider
    templates, :mod:`kiln.engine.runtime.plugin_loader`), so the model never loads one."""

    def __call__(self, type_name: str, files: Mapping[str, str]) -> type[Resource]:
        """The class for a type the environment's registry resolved (a provider template
        when it names a file); raises ResourceTypeNotFound."""
        ...


class PluginServices(NestedStackOps, Protocol):
    """What the engine lends a live stack's plugins beyond the stack itself: child stacks
    run in the same engine and the service's software configs and deployments."""

    def config_store(self, owner: RequestContext) -> SoftwareConfigStore: ...

    def deployment_store(self, owner: RequestContext,
                         stack_user_project_id: str | None) -> SoftwareDeploymentStore: ...

    def alarms(self, project_id: str, stack_id: str) -> AlarmStore:
        """The stack's alarms store (kiln.alarms.stack_store.StackAlarms)."""
        ...

    async def save_resource(self, stack: LiveStack, name: str, *,
                            event: tuple[str, str] | None = None) -> None:
        """Persist a resource's data and metadata changed outside any action."""
        ...

    async def issue_ec2_keypair(self, *, project_id: str, user_id: str, stack_id: str,
                                resource_name: str) -> IssuedKeypair:
        """A new keypair on the store (kiln.engine.actions.identity.Identities)."""
        ...

    async def delete_ec2_keypair(self, access_key: str) -> bool: ...

    async def resource_ec2_keypair(self, stack_id: str,
                                   resource_name: str) -> IssuedKeypair | None: ...

    def keystone_stack_users(self) -> bool:
        """Whether stack users are Keystone's (keystone mode), not Kiln's placeholders."""
        ...

    async def stack_domain_user(self, info: StackInfo, resource_name: str, *,
                                username: str, password: str | None) -> dict[str, Any]:
        """The resource's Keystone stack user, made on first use
        (kiln.engine.actions.identity)."""
        ...

    async def stack_user_keypair(self, info: StackInfo, resource_name: str, *,
                                 user_resource: str, username: str) -> IssuedKeypair:
        """A Keystone EC2 credential of ``user_resource``'s stack user."""
        ...

    async def set_stack_user_enabled(self, info: StackInfo, resource_name: str,
                                     enabled: bool) -> None:
        """Disable or enable the resource's Keystone stack user (suspend, resume)."""
        ...

    async def remove_stack_users(self, info: StackInfo) -> None:
        """Delete the stack's Keystone users (and a top-level stack's user project)."""
        ...

    def build_child(self, parent: Resource, template: Mapping[str, Any],
                    parameters: Mapping[str, Any], files: Mapping[str, str] | None, *,
                    name: str) -> LiveStack:
        """The child stack ``parent`` would make, validated but not stored (preview)."""
        ...


@dataclass(frozen=True, slots=True)
class StackSupport:
    """What a live stack gets from whoever builds it: the configuration, the plugin
    lookup, and the services its plugins reach (None for a stack only validated)."""

    conf: EngineConf
    plugins: PluginLookup
    services: PluginServices | None = None
    #: root stack id -> the identity its work acts with (the engine's, see
    #: kiln.engine.runtime.acting); the plugins' clients use it
    acting: Mapping[str, RequestContext] = field(default_factory=dict)
    #: where stack and autoscaling notifications go (kiln.notifications)
    notifier: Notifier = NULL


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
    #: the row's times, for notifications (None until the row is stored)
    created_at: dt.datetime | None = None
    updated_at: dt.datetime | None = None


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
    created_at: dt.datetime | None = None
    updated_at: dt.datetime | None = None
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

    def __init__(self, info: StackInfo, *, template: Template, environment: Environment,
                 user_params: Mapping[str, Any], files: Mapping[str, str],
                 support: StackSupport,
                 parent_facade: Mapping[str, Any] | None = None) -> None:
        self.info = info
        self.template = template
        self.environment = environment
        self.user_params = dict(user_params)
        self.files = dict(files)
        self.support = support
        self.parent_facade = dict(parent_facade or {})
        self.slots: dict[str, Slot] = {}
        #: rows superseded by a replacement but not yet deleted
        self.stale: list[ResourceRecord] = []
        #: type name -> (final type, plugin class), see :meth:`plugin_class`
        self.type_cache: dict[str, tuple[str, type[Resource]]] = {}
        self.type_cache_usable: bool | None = None
        self.runtime = StackRuntime(self)
        self._bound: BoundTemplate | None = None
        #: the request that is validating this stack (a create's or an update's): its
        #: plugins' cloud lookups (a flavor, an image, a network named in the template)
        #: act with the caller's own token, as Heat validates in the request's context,
        #: while no work identity is registered for the stack yet (StackRuntime._owner)
        self.requester: RequestContext | None = None
        #: an update with Heat's ``converge`` flag: the update reads each resource's live
        #: state before deciding (:mod:`kiln.engine.actions.converge`), and hands the flag
        #: on to the nested stacks it updates (set on the update's new stack only)
        self.converge = False

    @property
    def conf(self) -> EngineConf:
        return self.support.conf

    @property
    def nested(self) -> PluginServices | None:
        return self.support.services

    @property
    def bound(self) -> BoundTemplate:
        """The template bound by :meth:`bind` (every stack the engine builds is)."""
        if self._bound is None:
            raise RuntimeError(f"stack {self.info.name} is not bound yet")
        return self._bound

    @property
    def is_bound(self) -> bool:
        return self._bound is not None

    @property
    def identity(self) -> StackIdentity:
        return StackIdentity(stack_name=self.info.name, stack_id=self.info.id,
                             project_id=self.info.project_id,
                             region=self.conf.region_name_for_services)

    def bind(self, *, validate_params: bool | None = True) -> BoundTemplate:
        """The stack keeps its bound template, which resolves against the stack: through
        a weak proxy, so that the two make no reference cycle (see StackRuntime)."""
        conf = self.conf
        resolver: LiveStack = weakref.proxy(self)
        self._bound = self.template.bind(
            environment=self.environment, user_params=self.user_params,
            identity=self.identity, resolver=resolver, validate_params=validate_params,
            max_output=conf.kiln_engine.max_function_output_size,
            yaql_limits=(conf.yaql.limit_iterators, conf.yaql.memory_quota),
            yaql_timeout=conf.yaql.timeout)
        return self._bound

    def identity_dict(self) -> StackIdentityReply:
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
        if name not in self.slots and name in self.template.resources:
            # read while the slots are made (an external_id naming a sibling): as in
            # Heat, a resource that does not exist yet is referred to by its name
            return name
        return self._slot(name).plugin.reference_id()

    def attribute(self, name: str, attr: str, path: Sequence[Any]) -> Any:
        if name not in self.slots and name in self.template.resources:
            return None  # no attributes before the resource exists
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
        return self.attribute_known(name, attr)

    def attribute_known(self, name: str, attr: str) -> bool:
        """Whether ``get_attr: [name, attr]`` names an attribute resource ``name`` can
        have (the template layer asks while it builds definitions, as Heat checks at
        validation)."""
        snippet = self.template.resources.get(name)
        if snippet is None or not isinstance(snippet.type, str):
            return True
        try:
            _, cls = self.plugin_class(ResourceDefinition(name=name, type=snippet.type))
        except KilnError:
            return True  # the unknown type is reported with the resource's own error
        return not _attributes_fixed(cls) or attr in cls.attribute_names()

    def plugin_class_name(self, name: str) -> str:
        """Heat's cycle message names each resource with its plugin class; asked while
        definitions are built, before the slots exist."""
        return self.declared_class(name).__name__

    def validates_definition(self, name: str) -> bool:
        """Whether the template checks validate this resource (not OS::Heat::None)."""
        try:
            cls = self.declared_class(name)
        except KilnError:
            return True  # the unknown type is reported with the resource's own error
        return cls.validates_definition

    # -- plugin classes -------------------------------------------------------------------
    def plugin_class(self, definition: ResourceDefinition) -> tuple[str, type[Resource]]:
        """(final type name, plugin class) for a definition, through the environment's
        registry and the injected :class:`PluginLookup`."""
        registry = self.environment.registry
        # without per-resource registry entries the answer depends on the type alone:
        # resolve each type once per stack (a stack of 1,000 of one type asks once)
        if self.type_cache_usable is None:
            self.type_cache_usable = not (registry.as_dict().get("resources") or {})
        if self.type_cache_usable:
            hit = self.type_cache.get(definition.type)
            if hit is not None:
                return hit
        resolved = registry.resolve(definition.type, definition.name)
        if registry.is_template(resolved):  # a provider template: its own errors stand
            found = resolved, self.support.plugins(resolved, self.files)
        else:
            try:
                found = resolved, self.support.plugins(resolved, self.files)
            except (KeyError, ResourceTypeNotFound) as exc:
                suggestion = exc.hint if isinstance(exc, ResourceTypeNotFound) else None
                raise ResourceTypeNotFound(
                    f"The Resource Type ({definition.type}) could not be found.",
                    hint=f"resources.{definition.name}.type: "
                         f"{suggestion or 'no resource type of that name'}") from None
        if self.type_cache_usable:
            self.type_cache[definition.type] = found
        return found

    def declared_class(self, name: str) -> type[Resource]:
        """The plugin class of resource ``name`` as the template declares it (its slot
        may not exist yet: the template checks ask while definitions are built); an
        unknown type raises Heat's ResourceTypeNotFound."""
        slot = self.slots.get(name)
        if slot is not None:
            return type(slot.plugin)
        snippet = self.template.resources[name]
        rtype = snippet.type if isinstance(snippet.type, str) else ""
        return self.plugin_class(ResourceDefinition(name=name, type=rtype))[1]

    def availability_zones(self) -> list[str]:
        return ["nova"]

    # -- helpers ------------------------------------------------------------------------
    def physical_resource_name(self, resource_name: str) -> str:
        return f"{self.info.name}-{resource_name}-{short_id()}"



def _attributes_fixed(cls: type[Resource]) -> bool:
    """Whether Heat checks ``get_attr`` names against this plugin's schema: not for
    plugins whose attributes are dynamic (they answer any name) nor provider templates."""
    return (cls.get_attribute is Resource.get_attribute
            and not issubclass(cls, TemplateResource))
