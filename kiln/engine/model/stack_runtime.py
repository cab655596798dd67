"""What the plugins of one live stack may reach: the engine's side of
:class:`kiln.resources.runtime.ResourceRuntime`.
"""

from __future__ import annotations

import time
import weakref
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from kiln.clients import CloudClients, clients_for_owner
from kiln.engine.model.context import RequestContext
from kiln.engine.model.server_access import ServerAccess
from kiln.engine.model.settings import EngineConf
from kiln.notifications import autoscaling_event
from kiln.resources.base import (
    Resource,
    SoftwareConfigStore,
    SoftwareDeploymentStore,
)
from kiln.resources.runtime import AlarmStore
from kiln.template.definitions import ResourceDefinition

if TYPE_CHECKING:
    from kiln.engine.model.live_stack import LiveStack, PluginServices


class StackRuntime(ServerAccess):
    """What the plugins of one stack may reach (kiln.resources.base.ResourceRuntime).

    The stack owns its runtime and every plugin holds it, so the way back to the stack is
    a weak reference: a strong one closed a cycle (stack -> slots -> plugins -> runtime ->
    stack) that only the cycle collector could free, and a released stack lingered with
    all its slots until the next full collection (tests/unit/engine/test_no_cycles.py).
    Whoever uses a plugin holds its stack for as long (an action, a read)."""

    def __init__(self, stack: LiveStack) -> None:
        self._stack_ref = weakref.ref(stack)

    @property
    def _stack(self) -> LiveStack:
        stack = self._stack_ref()
        if stack is None:
            raise RuntimeError("the stack of this resource was released")
        return stack

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
    def conf(self) -> EngineConf:
        return self._stack.conf

    @property
    def nested(self) -> PluginServices | None:
        return self._stack.nested

    @property
    def clients(self) -> CloudClients:
        """OpenStack clients acting for the stack's owner (kiln.clients)."""
        return clients_for_owner(self._stack.conf, self._owner())

    @property
    def files(self) -> Mapping[str, str]:
        return self._stack.files

    def plugin_class(self, type_name: str) -> type[Resource]:
        return self._stack.plugin_class(ResourceDefinition(name="", type=type_name))[1]

    @property
    def software_configs(self) -> SoftwareConfigStore:
        """The engine's software_config table, acting as the stack's owner."""
        return self._services().config_store(self._owner())

    @property
    def alarms(self) -> AlarmStore:
        """The alarms the watcher evaluates, for this stack's alarm resources (an
        adapter over the service's database, as the software stores are)."""
        info = self._stack.info
        return self._services().alarms(info.project_id, info.id)

    @property
    def software_deployments(self) -> SoftwareDeploymentStore:
        """The engine's software_deployment table, acting as the stack's owner; the
        deployments belong to the stack's user project as Heat's do."""
        return self._services().deployment_store(
            self._owner(), self._stack.info.stack_user_project_id)

    def _live(self) -> LiveStack:
        return self._stack

    def _services(self) -> PluginServices:
        services = self._stack.nested
        if services is None:
            raise RuntimeError("this stack was loaded without an engine service")
        return services

    def _owner(self) -> RequestContext:
        """Who the stack's plugins act as: the project (and user) that owns the stack,
        with the identity the stack's current work acts with when deferred
        authentication gave one (kiln.engine.model.delegation), else the caller of the
        request validating the stack (``LiveStack.requester``: a create's lookups run
        before anything is delegated, with the caller's token as Heat's do)."""
        stack = self._stack
        info = stack.info
        acting = stack.support.acting.get(info.root_stack_id or info.id)
        if acting is not None:
            return acting
        if stack.requester is not None:  # a request's validation, before any work
            return stack.requester
        return RequestContext(project_id=info.project_id, user_id=info.user_id or "",
                              username=info.username or "", roles=(), is_admin=False)

    @property
    def stack(self) -> LiveStack:
        return self._stack

    def resolve(self, node: Any) -> Any:
        if not self._stack.is_bound:
            return node
        return self._stack.bound.resolve(node)

    def stack_parameter(self, name: str) -> Any:
        if not self._stack.is_bound:
            raise KeyError(name)
        return self._stack.bound.parameters[name]

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

    def notify_autoscaling(self, suffix: str, body: Mapping[str, Any]) -> None:
        notifier = self._stack.support.notifier
        if notifier.enabled:
            from kiln.engine.model import notice

            event_type, priority = autoscaling_event(suffix)
            with notice.never_failing(event_type):
                notifier.send(event_type, priority,
                              notice.stack_payload(self._stack) | dict(body),
                              notice.context(self._stack))

    async def save_resource(self, resource_name: str, *,
                            event: tuple[str, str] | None = None) -> None:
        if self._stack.nested is not None:
            await self._stack.nested.save_resource(self._stack, resource_name, event=event)
