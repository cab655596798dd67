"""Which resource types the cloud's catalog makes available, as Heat decides it: a type
needing no OpenStack service always is; one whose client's service types are all
missing from the catalog, or whose Neutron extension (``required_extension``, Heat's
required_service_extension) the cloud lacks, is left out of the listing and refused
with Heat's HEAT-E99001 error (ResourceTypeUnavailable) at validate, create and schema
show."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kiln.clients.manager import network_extension
from kiln.clients.settings import CLIENT_SERVICE_TYPES


def missing_service(cls: Any, types: frozenset[str]) -> str | None:
    """Heat's reason why *cls* is unavailable with catalog *types*, or None."""
    client = str(getattr(cls, "client_name", "") or "")
    if not client:
        return None
    wanted = CLIENT_SERVICE_TYPES.get(client, (client,))
    if not any(t in types for t in wanted):
        return f"{client} {wanted[0]} endpoint is not in service catalog."
    for extension in getattr(cls, "required_extension", ()) or ():
        if network_extension(extension) not in types:
            return f"Required extension {extension} in {client} service is not available."
    if not getattr(cls, "implemented", True):
        return f"Kiln does not implement {getattr(cls, 'type_name', '')}."
    return None


def service_filter(types: frozenset[str]) -> Callable[[Any], bool]:
    """A predicate for Registry.list_types / schema: whether a type is available."""
    return lambda cls: missing_service(cls, types) is None
