"""Value types the template layer hands to the engine, and the one protocol it needs back.

They live apart from the parser so the engine and plugins can depend on them without
pulling in parsing, and so their shape is fixed by docs/contracts.md rather than by
whichever module happens to build them.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol


@dataclass(frozen=True)
class StackIdentity:
    """Where pseudo parameters (OS::stack_name, AWS::StackId, ...) come from."""

    stack_name: str
    stack_id: str
    project_id: str
    region: str = "RegionOne"


class ResourceResolver(Protocol):
    """What resolving get_resource/get_attr/Ref/Fn::GetAtt needs from the engine."""

    def reference(self, name: str) -> Any: ...

    def attribute(self, name: str, attr: str, path: Sequence[Any]) -> Any: ...

    def all_attributes(self, name: str) -> Mapping[str, Any] | None: ...

    def resource_type(self, name: str) -> str: ...

    def facade(self, kind: str) -> Any: ...

    def availability_zones(self) -> list[str]: ...


#: one shared empty name set: CPython builds a new 216-byte object for every empty
#: ``frozenset(...)``, and most resources of a wide stack depend on nothing
NO_NAMES: frozenset[str] = frozenset()


def name_set(names: Iterable[str]) -> frozenset[str]:
    """``names`` as a frozenset, sharing the object when it already is one (a stack's
    definitions, graph and slots then hold one set per resource, not one each)."""
    if type(names) is frozenset:
        return names or NO_NAMES
    return frozenset(names) or NO_NAMES


_NO_SNIPPET: Mapping[str, Any] = {}


@dataclass(frozen=True, slots=True)
class ResourceDefinition:
    """One resource as the template declares it; properties and metadata stay unresolved."""

    name: str
    type: str
    properties: Any = None
    metadata: Any = None
    depends_on: frozenset[str] = NO_NAMES
    deletion_policy: str = "Delete"
    update_policy: Any = None
    external_id: Any = None
    condition: str | None = None
    #: the resource's raw snippet as written, for export/abandon and update diffs
    raw: Mapping[str, Any] = field(default_factory=dict)

    def superseded(self) -> ResourceDefinition:
        """This definition as a resource that a replacement superseded needs it: its
        delete reads the type, the policies and (rarely) the properties, never the
        snippet as written, which is a stack's largest per-resource object."""
        return dataclasses.replace(self, metadata=None, raw=_NO_SNIPPET)

    def freeze(self) -> dict[str, Any]:
        """A JSON-able snapshot used to compare old and new definitions on update."""
        return dict(self.raw)
