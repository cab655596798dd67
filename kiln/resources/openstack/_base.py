"""What every OpenStack resource plugin shares: reaching the cloud, failing like Heat,
and remembering the physical object.

A plugin never builds a session: :attr:`OpenStackResource.clients` is the runtime's
:class:`~kiln.clients.CloudClients` (the request's identity, or the configured
single-user credentials). :meth:`OpenStackResource.api` makes one REST call with
retries of transient errors; any other error becomes a :class:`ResourceFailure` whose
status reason reads as Heat's (``BadRequest: resources.net: <the service's message>``).

Attributes are answered synchronously from the last copy of the object the plugin read
(kept as JSON in ``data["show"]``), refreshed at the end of every action and by a stack
check; Heat reads them live, which the engine's synchronous attribute contract cannot.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, ClassVar

from kiln.clients import CloudClients, clients_for, errors, rest
from kiln.errors import StackValidationFailed
from kiln.resources.base import Resource, ResourceFailure, SupportStatus, Token
from kiln.resources.openstack import _constraints  # noqa: F401  (registers them)
from kiln.template.constraints import CustomConstraint


class ResourceInError(ResourceFailure):
    """The service put the object in an error state (Heat's ResourceInError)."""

    def __init__(self, status: str, reason: str = "Unknown") -> None:
        super().__init__(f"Went to status {status} due to \"{reason}\"",
                         exc_type="ResourceInError")


class ResourceUnknownStatus(ResourceFailure):
    def __init__(self, status: str, result: str) -> None:
        super().__init__(f"{result} - Unknown status {status} due to \"Unknown\"",
                         exc_type="ResourceUnknownStatus")


class OpenStackResource(Resource):
    """Base of the plugins backed by an OpenStack service."""

    #: the service type REST calls go to
    service_type: ClassVar[str] = ""
    #: compute microversion (or other service's) sent with every call, if any
    microversion: ClassVar[str | None] = None

    @property
    def clients(self) -> CloudClients:
        return clients_for(self.runtime)

    # -- calls ------------------------------------------------------------------------
    async def api(self, method: str, path: str, body: Any = None, *,
                  service: str | None = None, microversion: str | None = None,
                  ok_missing: bool = False) -> Any:
        """One REST call; failures become ResourceFailure (NotFound gives None when
        *ok_missing*)."""
        stype = service or self.service_type
        version = microversion or (self.microversion if stype == self.service_type else None)

        def call(conn: Any) -> Any:
            return rest.request(conn, stype, method, path, body=body, microversion=version)

        try:
            return await self.clients.call(call, what=f"{method} {stype}{path}")
        except ResourceFailure:
            raise
        except Exception as exc:
            if ok_missing and errors.is_not_found(exc):
                return None
            raise self.failure(exc) from exc

    def failure(self, exc: BaseException) -> ResourceFailure:
        from kiln.clients.manager import CloudNotConfigured

        if isinstance(exc, CloudNotConfigured):
            return ResourceFailure(
                f"Service {self.client_name} is not available for resource type "
                f"{self.type_name}, reason: no cloud is configured",
                exc_type="ResourceTypeUnavailable")
        return ResourceFailure(errors.message_of(exc), exc_type=errors.heat_error_name(exc))

    # -- checks at create -----------------------------------------------------------------
    async def validate_external(self, values: Mapping[str, Any],
                                cache: dict[Any, Any]) -> None:
        """Heat's lookup constraints (``nova.flavor``, ``glance.image``,
        ``neutron.network``, ...) on the properties that wait for no resource, with
        Heat's ``Property error: ... Error validating value 'x': <reason>``."""
        from kiln.resources.openstack._lookup import LOOKUPS

        for key, value in values.items():
            schema = self.properties_schema.get(key)
            if schema is None or not isinstance(value, str) or not value:
                continue
            for constraint in schema.constraints:
                lookup = LOOKUPS.get(getattr(constraint, "name", ""))
                if not isinstance(constraint, CustomConstraint) or lookup is None:
                    continue
                seen = (constraint.name, value)
                if seen not in cache:
                    try:
                        await lookup(self, value)
                        cache[seen] = None
                    except ResourceFailure as exc:
                        cache[seen] = exc.message
                if cache[seen] is not None:
                    raise StackValidationFailed(
                        f"Property error: resources.{self.name}.properties.{key}: "
                        f"Error validating value '{value}': {cache[seen]}",
                        path=("resources", self.name, "properties", key))

    # -- the remembered object ----------------------------------------------------------
    def remember(self, obj: Mapping[str, Any] | None) -> None:
        if obj is not None:
            self.data["show"] = json.dumps(obj, sort_keys=True, default=str)

    def shown(self) -> dict[str, Any]:
        raw = self.data.get("show")
        if not raw:
            return {}
        value = json.loads(raw)
        return value if isinstance(value, dict) else {}

    def show(self) -> Any:
        return self.shown() or None

    def resolve_attribute(self, name: str) -> Any:
        return self.shown().get(name)

    def reference_id(self) -> str:
        return self.resource_id if self.resource_id is not None else self.name

    # -- status polling ------------------------------------------------------------------
    @staticmethod
    def is_built(obj: Mapping[str, Any]) -> bool:
        """Heat's rule for Neutron objects: BUILD waits, ACTIVE/DOWN done, ERROR fails."""
        status = str(obj.get("status", "ACTIVE"))
        if status == "BUILD":
            return False
        if status in ("ACTIVE", "DOWN"):
            return True
        if status in ("ERROR", "DEGRADED"):
            raise ResourceInError(status)
        raise ResourceUnknownStatus(status, "Resource is not built")

    def poll_delay(self, token: Token) -> float | None:
        return None


#: the support status of properties kept only so old templates still validate
HIDDEN = SupportStatus(status="HIDDEN")


def custom(name: str) -> list[CustomConstraint]:
    """A property's constraints: the named custom constraint (a cloud lookup or a format)."""
    return [CustomConstraint(name=name)]


def without_none(values: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in values.items() if v is not None}
