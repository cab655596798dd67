"""What a group's members wait for in the group's own stack.

A ResourceGroup's members live in a child stack, so the implicit dependencies their type
declares (a server waits for the subnets of its networks) cannot reach the parent's
resources: the group waits only for what ``resource_def`` refers to. Heat has the same
gap and usually gets away with it, its child stack taking long enough to build that a
sibling subnet is ready when the first server boots; Kiln starts members sooner, and
Nova refuses a server on a network without a subnet. So the group itself waits for what
a member would wait for, were it in the parent stack (the mission's first template: a
server group on a network whose subnet is a sibling of the group).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from kiln.errors import KilnError
from kiln.resources.base import Peers, Resource
from kiln.template.definitions import ResourceDefinition


class _MemberPeers:
    """The parent stack's peers, with the would-be member's properties as resolved
    from the group's ``resource_def``."""

    def __init__(self, peers: Peers, member: Resource, values: Mapping[str, Any]) -> None:
        self._peers = peers
        self._member = member
        self._values = values

    def of_type(self, *type_names: str) -> Sequence[Resource]:
        return self._peers.of_type(*type_names)

    def value(self, resource: Resource, key: str) -> Any:
        if resource is self._member:
            return self._values.get(key)
        return self._peers.value(resource, key)

    def requirements(self, name: str) -> frozenset[str]:
        return self._peers.requirements(name)


def member_requirements(group: Resource, peers: Peers, definition: Any) -> Iterable[str]:
    """The implicit requirements of a member built from *definition* (the resolved
    ``resource_def``), among the group's peers; none for a type the stack cannot run
    or one without such rules."""
    if not isinstance(definition, Mapping) or not isinstance(definition.get("type"), str):
        return ()
    try:
        cls = group.runtime.plugin_class(definition["type"])
    except (KilnError, TypeError, ValueError):
        # a type the stack cannot run fails its members on their own, in their stack
        return ()
    if cls.implicit_requirements is Resource.implicit_requirements:
        return ()
    values = definition.get("properties")
    if not isinstance(values, Mapping):
        return ()
    member = cls(group.name, ResourceDefinition(name=group.name, type=definition["type"],
                                                properties=dict(values)), group.runtime)
    return list(member.implicit_requirements(_MemberPeers(peers, member, values)))
