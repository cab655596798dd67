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
from collections.abc import Iterator, Mapping
from typing import Any, ClassVar

from kiln.clients import CloudClients, clients_for, errors, rest
from kiln.errors import StackValidationFailed
from kiln.resources.base import Property, Resource, ResourceFailure, SupportStatus, Token
from kiln.resources.common import constraints as _constraints  # noqa: F401  (registers them)
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
                  ok_missing: bool = False, headers: dict[str, str] | None = None) -> Any:
        """One REST call; failures become ResourceFailure (NotFound gives None when
        *ok_missing*)."""
        stype = service or self.service_type
        version = microversion or (self.microversion if stype == self.service_type else None)

        def call(conn: Any) -> Any:
            return rest.request(conn, stype, method, path, body=body, microversion=version,
                                headers=headers)

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

    # -- checks at create and update -------------------------------------------------------
    async def validate_external(self, values: Mapping[str, Any],
                                cache: dict[Any, Any]) -> None:
        """Heat's lookup constraints (``nova.flavor``, ``glance.image``,
        ``neutron.network``, ...) on the properties that wait for no resource, down to
        list items and map keys (``networks[0].network``), with Heat's ``Property error:
        ... Error validating value 'x': <reason>``. *cache* is the request's: each name
        is looked up once however many resources use it."""
        from kiln.errors import format_path
        from kiln.resources.translation import translate

        try:
            # checked under the current names, as Heat validates translated properties
            values = translate(self.translation_rules, values)
        except StackValidationFailed:
            return  # both names given: the properties' own check reports it
        for path, name, value in _lookups(self.properties_schema, values, ()):
            seen = (name, value)
            if seen not in cache:
                cache[seen] = await self._look_up(name, value)
            if cache[seen] is not None:
                where = ("resources", self.name, "properties", *path)
                raise StackValidationFailed(
                    f"Property error: {format_path(where)}: "
                    f"Error validating value '{value}': {cache[seen]}", path=where)

    async def _look_up(self, constraint: str, value: str) -> str | None:
        """None when *value* names an existing object, else why not (Heat's words)."""
        from kiln.resources.common.lookup import LOOKUPS

        try:
            await LOOKUPS[constraint](self, value)
        except ResourceFailure as exc:
            return exc.message
        return None

    # -- the object as the service shows it now -------------------------------------------
    def live_location(self) -> tuple[str, str] | None:
        """(path, key of the object in the answer) of the physical object, for the
        types that can read it back by their ID; None for the others (an association
        whose ID joins two objects)."""
        return None

    async def fetch_live(self) -> dict[str, Any] | None:
        """The physical object as the service shows it now; None when it is gone."""
        where = self.live_location()
        if where is None or self.resource_id is None:
            return None
        path, key = where
        answer = await self.api("GET", path, ok_missing=True)
        found = answer.get(key) if isinstance(answer, dict) else None
        return found if isinstance(found, dict) else None

    async def refresh_live(self) -> None:
        """Re-read the object so that ``show`` and the attributes are the cloud's now,
        as Heat reads them; a read that fails leaves the last copy (a show never
        fails)."""
        try:
            found = await self.fetch_live()
        except ResourceFailure:
            return
        if found is not None:
            self.remember(found)

    async def validate_external_id(self, external_id: str) -> None:
        """Heat's check of an ``external_id`` at create: the object must exist (for the
        types that can read it back: a :meth:`live_location` or their own
        :meth:`fetch_live`)."""
        if self.live_location() is None and \
                type(self).fetch_live is OpenStackResource.fetch_live:
            return
        kept = self.resource_id
        self.resource_id = external_id
        try:
            found = await self.fetch_live()
        finally:
            self.resource_id = kept
        if found is None:
            raise StackValidationFailed(
                f"Invalid external resource: Resource {external_id} ({self.type_name}) "
                "can not be found.")

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

    # -- delete: one DELETE, then polled until the object answers 404 -------------------
    def object_path(self, resource_id: str) -> str | None:
        """The object's URL path on :attr:`service_type` (deleted, then polled there);
        None for a type that has no object of its own to delete."""
        return None

    async def handle_delete(self) -> Token:
        path = None if self.resource_id is None else self.object_path(self.resource_id)
        if path is None:
            return None
        await self.api("DELETE", path, ok_missing=True)
        return {"deleting": self.resource_id}

    async def check_delete_complete(self, token: Token) -> bool:
        if not token:
            return True
        path = self.object_path(str(token["deleting"]))
        found = None if path is None else await self.api("GET", path, ok_missing=True)
        if found is None:
            return True
        self.check_deleting(found)
        return False

    def check_deleting(self, answer: Mapping[str, Any]) -> None:
        """Raise if the object still there (*answer* is its GET) failed to delete."""


def _lookups(schema: Mapping[str, Property], values: Mapping[str, Any],
             path: tuple[str | int, ...]) -> Iterator[tuple[tuple[str | int, ...], str, str]]:
    """(path, constraint, value) of every non-empty string under *values* whose schema
    carries a lookup constraint, walking maps' keys and lists' items."""
    for key, value in values.items():
        prop = schema.get(key)
        if prop is not None:
            yield from _walk(prop, value, (*path, key))


def _walk(prop: Property, value: Any, path: tuple[str | int, ...],
          ) -> Iterator[tuple[tuple[str | int, ...], str, str]]:
    from kiln.resources.common.lookup import LOOKUPS

    if isinstance(value, str):
        for constraint in prop.constraints if value else ():
            name = getattr(constraint, "name", "")
            if isinstance(constraint, CustomConstraint) and name in LOOKUPS:
                yield path, name, value
    elif isinstance(value, Mapping) and prop.key_schemas is not None:
        yield from _lookups(prop.key_schemas, value, path)
    elif isinstance(value, list) and prop.item_schema is not None:
        for index, entry in enumerate(value):
            yield from _walk(prop.item_schema, entry, (*path, index))


#: the support status of properties kept only so old templates still validate
HIDDEN = SupportStatus(status="HIDDEN")


def custom(name: str) -> list[CustomConstraint]:
    """A property's constraints: the named custom constraint (a cloud lookup or a format)."""
    return [CustomConstraint(name=name)]


def without_none(values: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in values.items() if v is not None}
