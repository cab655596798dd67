"""A stack held in memory while an action runs on it (or while it is being shown).

:class:`LiveStack` ties together the stored stack row, its parsed template bound to its
environment and parameters, and one :class:`Slot` per resource (definition, plugin
instance, row id). It is the :class:`~kiln.template.definitions.ResourceResolver` its
template resolves against and, through :class:`StackRuntime`, the
:class:`~kiln.resources.base.ResourceRuntime` its plugins see. It does no I/O itself:
loading is in :mod:`kiln.engine.loader`, writing in :mod:`kiln.engine.recorder`.
"""

from __future__ import annotations

import hashlib
import hmac
import random
import string
import time
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from kiln.engine.context import RequestContext
from kiln.errors import InvalidTemplateReference, NotSupported
from kiln.resources.base import (
    Resource,
    ResourceState,
    SoftwareConfigStore,
    SoftwareDeploymentStore,
)
from kiln.resources.stores import ServiceConfigStore, ServiceDeploymentStore
from kiln.template.definitions import NO_NAMES, ResourceDefinition, StackIdentity
from kiln.template.limits import DEFAULT_MAX_OUTPUT
from kiln.template.yaql_function import DEFAULT_TIMEOUT as DEFAULT_YAQL_TIMEOUT

if TYPE_CHECKING:
    from kiln.engine.nested import NestedOps


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
        #: type name -> (final type, plugin class), see kiln.engine.loader.plugin_class
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
        from kiln.engine.validation import attribute_known

        return attribute_known(self, name, attr)

    def plugin_class_name(self, name: str) -> str:
        """Heat's cycle message names each resource with its plugin class; asked while
        definitions are built, before the slots exist."""
        from kiln.engine.loader import declared_class

        return declared_class(self, name).__name__

    def validates_definition(self, name: str) -> bool:
        """Whether the template checks validate this resource (not OS::Heat::None)."""
        from kiln.engine.loader import declared_class, validates_definition
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


class StackRuntime:
    """What the plugins of one stack may reach (kiln.resources.base.ResourceRuntime)."""

    def __init__(self, stack: LiveStack) -> None:
        self._stack = stack

    @property
    def stack_id(self) -> str:
        return self._stack.info.id

    @property
    def stack_name(self) -> str:
        return self._stack.info.name

    @property
    def project_id(self) -> str:
        return self._stack.info.project_id

    @property
    def conf(self) -> Any:
        return self._stack.conf

    @property
    def nested(self) -> Any:
        return self._stack.nested

    @property
    def software_configs(self) -> SoftwareConfigStore:
        """The engine's software_config table, acting as the stack's owner."""
        return ServiceConfigStore(self._service(), self._owner())

    @property
    def software_deployments(self) -> SoftwareDeploymentStore:
        """The engine's software_deployment table, acting as the stack's owner; the
        deployments belong to the stack's user project as Heat's do."""
        return ServiceDeploymentStore(
            self._service(), self._owner(),
            stack_user_project_id=self._stack.info.stack_user_project_id)

    def _service(self) -> Any:
        nested = self._stack.nested
        if nested is None:
            raise RuntimeError("this stack was loaded without an engine service")
        return nested.service

    def _owner(self) -> RequestContext:
        """Who the stack's plugins act as: the project (and user) that owns the stack."""
        info = self._stack.info
        return RequestContext(project_id=info.project_id, user_id=info.user_id or "",
                              username=info.username or "", roles=(), is_admin=False)

    @property
    def stack(self) -> LiveStack:
        return self._stack

    def resolve(self, node: Any) -> Any:
        bound = self._stack.bound
        if bound is None:
            return node
        return bound.resolve(node)

    def now(self) -> float:
        return time.time()

    def resource(self, name: str) -> Resource | None:
        slot = self._stack.slots.get(name)
        return slot.plugin if slot is not None else None

    def resource_by_refid(self, refid: str) -> Resource | None:
        for slot in self._stack.slots.values():
            if slot.plugin.reference_id() == refid:
                return slot.plugin
        return None

    def physical_resource_name(self, resource_name: str) -> str:
        return self._stack.physical_resource_name(resource_name)

    def signal_token(self, resource_name: str) -> str | None:
        return None

    async def stack_user(self, resource_name: str, *, password: str | None = None,
                         keypair: bool = False) -> Mapping[str, Any]:
        """Placeholder stack-domain user (no identity service): stable per resource,
        derived from the stack id, the resource name and the encryption key."""
        info = self._stack.info
        conf = self._stack.conf
        seed = f"{info.id}/{resource_name}"
        user: dict[str, Any] = {
            "user_id": uuid.uuid5(uuid.NAMESPACE_URL, "kiln-user:" + seed).hex,
            "project_id": info.stack_user_project_id or info.project_id,
            "auth_url": "",
            "region_name": getattr(conf, "region_name_for_services", "RegionOne"),
        }
        if keypair:
            key = str(getattr(conf, "auth_encryption_key", "")).encode()
            user["access_key_id"] = uuid.uuid5(uuid.NAMESPACE_URL, "kiln-ak:" + seed).hex
            user["secret_access_key"] = hmac.new(key, seed.encode(), hashlib.sha256).hexdigest()
            base = getattr(conf, "heat_metadata_server_url", None) or ""
            user["metadata_url"] = f"{base.rstrip('/')}/v1/" if base else ""
        return user

    def signal_url(self, resource_name: str, kind: str) -> str:
        base = getattr(self._stack.conf, "heat_metadata_server_url", None) or ""
        ident = self._stack.info
        if kind == "heat":
            return (f"{base.rstrip('/')}/v1/{ident.project_id}/stacks/{ident.name}/"
                    f"{ident.id}/resources/{resource_name}/signal")
        arn = (f"arn:openstack:heat::{ident.project_id}:stacks/{ident.name}/{ident.id}/"
               f"resources/{resource_name}")
        path = "waitcondition" if kind == "cfn_waitcondition" else "signal"
        cfn = getattr(self._stack.conf, "heat_waitcondition_server_url", None) or base
        return f"{cfn.rstrip('/')}/v1/{path}/{arn}"



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
