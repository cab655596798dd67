"""The shape every Neutron plugin shares.

A Neutron object is created with one POST and deleted with one DELETE, so most plugins
only say which properties go into the body and under which API names
(:attr:`NeutronResource.api_names`); ``value_specs`` is merged into the body as Heat
merges it; ``tags`` are set with Neutron's tag API after the create. Objects with a
``status`` are polled until built (ACTIVE or DOWN; ERROR fails), as Heat polls them.
A delete is OpenStackResource's: done when the object answers 404.
References by name or ID (``network: private``) are resolved to IDs before the call.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from kiln.resources.base import Properties, ResourceFailure, Token
from kiln.resources.common.cloud import OpenStackResource
from kiln.resources.common.lookup import find_id as find_id  # (re-exported: Neutron plugins use it)
from kiln.resources.live_state import GONE, NOT_CHECKED, LiveState, Unread
from kiln.resources.schema import Property
from kiln.template.constraints import CustomConstraint
from kiln.template.definitions import ResourceDefinition


def value_specs_property() -> Property:
    return Property("map", "Extra attributes sent to Neutron as they are.", default={},
                    update_allowed=True)


def tags_property() -> Property:
    return Property("list", "Tags attached to the object.", update_allowed=True,
                    schema=Property("string"))


def ref_property(kind: str, description: str, *, required: bool = False,
                 update_allowed: bool = False) -> Property:
    return Property("string", description, required=required, update_allowed=update_allowed,
                    constraints=[CustomConstraint(name=f"neutron.{kind}")])


class NeutronResource(OpenStackResource):
    """Base of OS::Neutron::* plugins (one Neutron object each)."""

    client_name = "neutron"
    service_type = "network"
    #: the object's name in bodies (``network``) and its collection path (``networks``)
    entity: ClassVar[str] = ""
    collection: ClassVar[str] = ""
    #: property -> (API field, kind of object to resolve by name, or None)
    api_names: ClassVar[Mapping[str, tuple[str, str | None]]] = {}
    #: properties that never go into the body as they are
    not_sent: ClassVar[frozenset[str]] = frozenset({"value_specs", "tags"})
    #: whether the object has a status to wait on
    has_status: ClassVar[bool] = False
    #: whether an unnamed object gets the physical resource name (Heat's behaviour for
    #: objects with a ``name`` property)
    names_itself: ClassVar[bool] = True

    #: the properties drift detection reads back from the object (each under its
    #: :attr:`api_names` field, or its own name); none: the type is not checked
    live_properties: ClassVar[tuple[str, ...]] = ()

    #: the Neutron extensions the type needs (Heat's required_service_extension): without
    #: them the type is unavailable (kiln.clients.availability)
    required_extension: ClassVar[tuple[str, ...]] = ()

    def collection_path(self) -> str:
        """Where objects of the type are created (a QoS rule's depends on its policy)."""
        return f"/{self.collection}"

    @property
    def path(self) -> str:
        return f"{self.collection_path()}/{self.resource_id}"

    def object_path(self, resource_id: str) -> str | None:
        return f"{self.collection_path()}/{resource_id}"

    async def find_id(self, kind: str, value: str) -> str:
        return await find_id(self, kind, value)

    def live_location(self) -> tuple[str, str] | None:
        return self.path, self.entity

    async def body_from(self, values: Mapping[str, Any], *,
                        create: bool) -> dict[str, Any]:
        """The API body for property *values* (None values dropped, names mapped,
        references resolved, value_specs merged)."""
        body: dict[str, Any] = {}
        for key, value in values.items():
            if key in self.not_sent or value is None:
                continue
            field, kind = self.api_names.get(key, (key, None))
            if kind is not None and isinstance(value, str):
                value = await self.find_id(kind, value)
            body[field] = value
        if create and self.names_itself and "name" in self.properties_schema \
                and not body.get("name"):
            body["name"] = self.physical_resource_name()
        specs = values.get("value_specs")
        if specs:
            body.update(specs)
        return body

    async def create_body(self) -> dict[str, Any]:
        return await self.body_from(dict(self.properties), create=True)

    # -- create ------------------------------------------------------------------------
    async def handle_create(self) -> Token:
        body = await self.create_body()
        answer = await self.api("POST", self.collection_path(), {self.entity: body})
        obj = answer[self.entity]
        self.resource_id = str(obj["id"])
        self.remember(obj)
        tags = self.properties.get("tags") if "tags" in self.properties_schema else None
        if tags:
            await self.set_tags(tags)
        await self.after_create(obj)
        return None

    async def after_create(self, obj: Mapping[str, Any]) -> None:
        """Extra calls once the object exists (a router's agents, ...)."""

    async def set_tags(self, tags: list[str]) -> None:
        await self.api("PUT", f"{self.path}/tags", {"tags": list(tags)})

    async def replaces_when_failed(self) -> bool:
        """Heat's rule for Neutron objects: replaced when gone or in ERROR."""
        if self.resource_id is None:
            return True
        found = await self.refresh()
        return found is None or found.get("status") == "ERROR"

    async def refresh(self) -> dict[str, Any] | None:
        """Read the object again and remember it; None when it is gone."""
        answer = await self.api("GET", self.path, ok_missing=True)
        if answer is None:
            return None
        obj: dict[str, Any] = answer[self.entity]
        self.remember(obj)
        return obj

    async def check_create_complete(self, token: Token) -> bool:
        if not self.has_status:
            return True
        obj = await self.refresh()
        if obj is None:
            raise ResourceFailure(f"The {self.entity} {self.resource_id} disappeared",
                                  exc_type="NotFound")
        return self.is_built(obj)

    # -- update ------------------------------------------------------------------------
    async def handle_update(self, new_definition: ResourceDefinition,
                            new_properties: Properties, prop_diff: Mapping[str, Any]) -> Token:
        diff = dict(prop_diff)
        tags = diff.pop("tags", None) if "tags" in diff else None
        if "value_specs" in diff:
            old_specs = self.properties.get("value_specs") or {}
            specs = {k: v for k, v in (diff.get("value_specs") or {}).items()
                     if old_specs.get(k) != v}
            diff["value_specs"] = specs
        if "name" in diff and diff["name"] is None and self.names_itself:
            diff["name"] = self.physical_resource_name()
        await self.update_extra(diff, new_properties)
        body = await self.body_from(diff, create=False)
        if body:
            answer = await self.api("PUT", self.path, {self.entity: body})
            self.remember(answer[self.entity])
        if "tags" in prop_diff:
            await self.set_tags(tags or [])
        return None

    async def update_extra(self, diff: dict[str, Any], new_properties: Properties) -> None:
        """Apply (and pop from *diff*) changes that are not a plain body field."""

    async def check_update_complete(self, token: Token) -> bool:
        obj = await self.refresh()
        if obj is None or not self.has_status:
            return True
        return self.is_built(obj)

    # -- check -------------------------------------------------------------------------
    async def handle_check(self) -> Token:
        if self.resource_id is None:
            return None
        obj = await self.refresh()
        if obj is None:
            raise ResourceFailure(f"The {self.entity} ({self.resource_id}) could not be "
                                  "found.", exc_type="NotFound")
        if self.has_status:
            self.is_built(obj)
        return None

    # -- drift detection -------------------------------------------------------------
    async def live_state(self, expected: Mapping[str, Any]) -> LiveState | Unread:
        """The object's fields under :attr:`live_properties` (references by name
        compared as the IDs they name now, tags as a set, ``value_specs`` by the keys
        the template gave)."""
        if not self.live_properties or self.resource_id is None:
            return NOT_CHECKED
        answer = await self.api("GET", self.path, ok_missing=True)
        if answer is None:
            return GONE
        obj: dict[str, Any] = answer[self.entity]
        state = LiveState()
        for prop in self.live_properties:
            if prop not in expected or prop == "value_specs":
                continue
            field, kind = self.api_names.get(prop, (prop, None))
            want = expected[prop]
            if kind is not None and isinstance(want, str):
                want = await self.id_or_name(kind, want)
            state.expected[prop] = want
            state.actual[prop] = obj.get(field)
        if "tags" in state.expected:
            state.expected["tags"] = sorted(state.expected["tags"] or [])
            state.actual["tags"] = sorted(state.actual["tags"] or [])
        specs = expected.get("value_specs")
        if specs and "value_specs" in self.live_properties:
            state.expected["value_specs"] = dict(specs)
            state.actual["value_specs"] = {k: obj.get(k) for k in specs}
        await self.shape_live(obj, expected, state)
        return state

    async def shape_live(self, obj: Mapping[str, Any], expected: Mapping[str, Any],
                         state: LiveState) -> None:
        """A type's own comparisons beyond plain fields (a group's rules)."""

    async def id_or_name(self, kind: str, value: str) -> str:
        """The ID *value* names now; *value* itself when nothing matches (a network
        named in the template and deleted since is compared by its name)."""
        try:
            return await self.find_id(kind, value)
        except ResourceFailure:
            return value
