"""OS::Keystone::Project, User, Group, Role, UserRoleAssignment, GroupRoleAssignment,
Domain, Region, Service and Endpoint: identity objects made with Keystone's v3 API
(admin credentials needed). References by name or ID are resolved before each call."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar
from urllib.parse import quote

from kiln.resources.base import (
    Attribute,
    Properties,
    Property,
    ResourceFailure,
    SupportStatus,
    Token,
)
from kiln.resources.common.cloud import OpenStackResource
from kiln.template.constraints import AllowedValues, CustomConstraint
from kiln.template.definitions import ResourceDefinition

#: kind -> (collection, entity)
_KINDS = {"domain": ("domains", "domain"), "project": ("projects", "project"),
          "user": ("users", "user"), "group": ("groups", "group"),
          "role": ("roles", "role"), "region": ("regions", "region"),
          "service": ("services", "service")}


def _ref(kind: str, description: str, **kwargs: Any) -> Property:
    return Property("string", description,
                    constraints=[CustomConstraint(name=f"keystone.{kind}")], **kwargs)


def _roles_property() -> Property:
    return Property("list", "Roles to grant: a role on a project or on a domain.",
                    update_allowed=True, schema=Property("map", schema={
                        "role": _ref("role", "The role (name or ID).", required=True),
                        "project": _ref("project", "Project it is granted on."),
                        "domain": _ref("domain", "Domain it is granted on."),
                    }))


class KeystoneResource(OpenStackResource):
    """One Keystone object: POST to create, PATCH to update, DELETE to delete."""

    client_name = "keystone"
    service_type = "identity"
    kind: ClassVar[str] = ""
    #: property -> (API field, kind to resolve or None)
    api_names: ClassVar[Mapping[str, tuple[str, str | None]]] = {}
    #: properties handled apart from the body
    not_sent: ClassVar[frozenset[str]] = frozenset()

    @property
    def collection(self) -> str:
        return _KINDS[self.kind][0]

    def live_location(self) -> tuple[str, str] | None:
        """An identity object by its ID (not the role assignments, whose ID is the
        user's or group's)."""
        if self.kind not in _KINDS or isinstance(self, UserRoleAssignment):
            return None
        collection, entity = _KINDS[self.kind]
        return f"/{collection}/{self.resource_id}", entity

    async def find(self, kind: str, value: str) -> str:
        """The ID of the *kind* named or identified by *value*."""
        collection, entity = _KINDS[kind]
        found = await self.api("GET", f"/{collection}/{quote(value)}", ok_missing=True)
        if found:
            return str(found[entity]["id"])
        listing = await self.api("GET", f"/{collection}?name={quote(value)}")
        matches = listing.get(collection, []) if listing else []
        if len(matches) != 1:
            raise ResourceFailure(f"The {kind.capitalize()} ({value}) could not be found.",
                                  exc_type="EntityNotFound")
        return str(matches[0]["id"])

    async def body(self, values: Mapping[str, Any], *, create: bool) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key, value in values.items():
            if key in self.not_sent or value is None:
                continue
            field, kind = self.api_names.get(key, (key, None))
            if kind is not None and isinstance(value, str):
                value = await self.find(kind, value)
            out[field] = value
        if create and "name" in self.properties_schema and not out.get("name"):
            out["name"] = self.physical_resource_name()
        return out

    async def handle_create(self) -> Token:
        entity = _KINDS[self.kind][1]
        answer = await self.api("POST", f"/{self.collection}",
                                {entity: await self.body(self.properties, create=True)})
        obj = answer[entity]
        self.resource_id = str(obj["id"])
        self.remember(obj)
        await self.after_create()
        return None

    async def after_create(self) -> None:
        """Grants, memberships: what takes calls of its own."""

    async def handle_update(self, new_definition: ResourceDefinition,
                            new_properties: Properties, prop_diff: Mapping[str, Any]) -> Token:
        entity = _KINDS[self.kind][1]
        body = await self.body(prop_diff, create=False)
        if "name" in prop_diff and prop_diff["name"] is None:
            body["name"] = self.physical_resource_name()
        if body:
            answer = await self.api("PATCH", f"/{self.collection}/{self.resource_id}",
                                    {entity: body})
            self.remember(answer[entity])
        await self.update_extra(prop_diff)
        return None

    async def update_extra(self, prop_diff: Mapping[str, Any]) -> None:
        """Changes applied by calls of their own."""

    def object_path(self, resource_id: str) -> str | None:
        return f"/{self.collection}/{resource_id}"

    async def handle_delete(self) -> Token:
        if self.resource_id is not None:
            await self.before_delete()
        return await super().handle_delete()

    async def before_delete(self) -> None:
        """What must go before the object (a domain must be disabled)."""

    # -- role grants shared by users, groups and the assignment types -------------------
    async def _grant_path(self, actor: str, actor_id: str, grant: Mapping[str, Any]) -> str:
        role = await self.find("role", grant["role"])
        if grant.get("project"):
            return (f"/projects/{await self.find('project', grant['project'])}/{actor}/"
                    f"{actor_id}/roles/{role}")
        if grant.get("domain"):
            return (f"/domains/{await self.find('domain', grant['domain'])}/{actor}/"
                    f"{actor_id}/roles/{role}")
        raise ResourceFailure("Either project or domain must be specified for role "
                              f"{grant['role']}", exc_type="StackValidationFailed")

    async def grant(self, actor: str, actor_id: str, grants: list[Any]) -> None:
        for item in grants:
            await self.api("PUT", await self._grant_path(actor, actor_id, item))

    async def revoke(self, actor: str, actor_id: str, grants: list[Any]) -> None:
        for item in grants:
            await self.api("DELETE", await self._grant_path(actor, actor_id, item),
                           ok_missing=True)

    async def regrant(self, actor: str, actor_id: str, old: list[Any],
                      new: list[Any]) -> None:
        await self.revoke(actor, actor_id, [g for g in old if g not in new])
        await self.grant(actor, actor_id, [g for g in new if g not in old])

    # -- the ``roles`` property of a user or group (granted on the object itself) --------
    #: where the object's own grants are made (``users`` or ``groups``)
    actor: ClassVar[str] = ""

    async def grant_own_roles(self) -> None:
        await self.grant(self.actor, self.resource_id or "",
                         list(self.properties.get("roles") or []))

    async def regrant_own_roles(self, prop_diff: Mapping[str, Any]) -> None:
        """Revoke the grants dropped from ``roles`` and grant the new ones."""
        if "roles" in prop_diff:
            await self.regrant(self.actor, self.resource_id or "",
                               list(self.properties.get("roles") or []),
                               list(prop_diff["roles"] or []))


class Domain(KeystoneResource):
    """A Keystone domain (disabled before it is deleted, as Keystone requires)."""

    type_name = "OS::Keystone::Domain"
    support_status = SupportStatus(version="8.0.0", message="Supported versions: keystone v3")
    kind = "domain"
    properties_schema = {
        "name": Property("string", "Name of the domain.", update_allowed=True),
        "description": Property("string", "Description.", update_allowed=True),
        "enabled": Property("boolean", "Whether the domain is enabled.", default=True,
                            update_allowed=True),
    }

    async def before_delete(self) -> None:
        await self.api("PATCH", f"/domains/{self.resource_id}",
                       {"domain": {"enabled": False}}, ok_missing=True)


class Project(KeystoneResource):
    """A Keystone project."""

    type_name = "OS::Keystone::Project"
    support_status = SupportStatus(version="2015.1", message="Supported versions: keystone v3")
    kind = "project"
    api_names = {"domain": ("domain_id", "domain"), "parent": ("parent_id", "project")}
    properties_schema = {
        "name": Property("string", "Name of the project.", update_allowed=True),
        "domain": _ref("domain", "Domain of the project.", default="default",
                       update_allowed=True),
        "description": Property("string", "Description.", default="", update_allowed=True),
        "enabled": Property("boolean", "Whether the project is enabled.", default=True,
                            update_allowed=True),
        "parent": _ref("project", "Parent project."),
        "tags": Property("list", "Tags of the project.", default=[], update_allowed=True),
    }
    attributes_schema = {
        "name": Attribute("Name of the project.", "string"),
        "parent_id": Attribute("The parent project.", "string"),
        "domain_id": Attribute("The project's domain.", "string"),
        "enabled": Attribute("Whether the project is enabled.", "boolean"),
        "is_domain": Attribute("Whether the project acts as a domain.", "boolean"),
    }


class Role(KeystoneResource):
    """A Keystone role."""

    type_name = "OS::Keystone::Role"
    support_status = SupportStatus(version="2015.1", message="Supported versions: keystone v3")
    kind = "role"
    api_names = {"domain": ("domain_id", "domain")}
    properties_schema = {
        "name": Property("string", "Name of the role.", update_allowed=True),
        "domain": _ref("domain", "Domain of a domain-specific role."),
    }


class Group(KeystoneResource):
    """A Keystone group, with role grants."""

    type_name = "OS::Keystone::Group"
    support_status = SupportStatus(version="2015.1", message="Supported versions: keystone v3")
    kind = "group"
    actor = "groups"
    api_names = {"domain": ("domain_id", "domain")}
    not_sent = frozenset({"roles"})
    properties_schema = {
        "name": Property("string", "Name of the group.", update_allowed=True),
        "domain": _ref("domain", "Domain of the group.", default="default",
                       update_allowed=True),
        "description": Property("string", "Description.", default="", update_allowed=True),
        "roles": _roles_property(),
    }

    async def after_create(self) -> None:
        await self.grant_own_roles()

    async def update_extra(self, prop_diff: Mapping[str, Any]) -> None:
        await self.regrant_own_roles(prop_diff)


class User(KeystoneResource):
    """A Keystone user, with its groups and role grants."""

    type_name = "OS::Keystone::User"
    support_status = SupportStatus(version="2015.1", message="Supported versions: keystone v3")
    kind = "user"
    actor = "users"
    api_names = {"domain": ("domain_id", "domain"),
                 "default_project": ("default_project_id", "project")}
    not_sent = frozenset({"roles", "groups"})
    properties_schema = {
        "name": Property("string", "Name of the user.", update_allowed=True),
        "domain": _ref("domain", "Domain of the user.", default="default",
                       update_allowed=True),
        "description": Property("string", "Description.", default="", update_allowed=True),
        "enabled": Property("boolean", "Whether the user is enabled.", default=True,
                            update_allowed=True),
        "email": Property("string", "E-mail address.", update_allowed=True),
        "password": Property("string", "Password.", update_allowed=True),
        "default_project": _ref("project", "Default project.", update_allowed=True),
        "groups": Property("list", "Groups the user belongs to.", update_allowed=True,
                           schema=_ref("group", "A group (name or ID).")),
        "roles": _roles_property(),
    }
    attributes_schema = {
        "name": Attribute("Name of the user.", "string"),
        "default_project_id": Attribute("The default project.", "string"),
        "domain_id": Attribute("The user's domain.", "string"),
        "enabled": Attribute("Whether the user is enabled.", "boolean"),
        "password_expires_at": Attribute("When the password expires.", "string"),
    }

    async def _groups(self, groups: list[str], method: str) -> None:
        for group in groups:
            group_id = await self.find("group", group)
            await self.api(method, f"/groups/{group_id}/users/{self.resource_id}",
                           ok_missing=method == "DELETE")

    async def after_create(self) -> None:
        await self._groups(list(self.properties.get("groups") or []), "PUT")
        await self.grant_own_roles()

    async def update_extra(self, prop_diff: Mapping[str, Any]) -> None:
        if "groups" in prop_diff:
            old = set(self.properties.get("groups") or [])
            new = set(prop_diff["groups"] or [])
            await self._groups(sorted(old - new), "DELETE")
            await self._groups(sorted(new - old), "PUT")
        await self.regrant_own_roles(prop_diff)


class UserRoleAssignment(KeystoneResource):
    """Role grants of an existing user (its ID is the user's)."""

    type_name = "OS::Keystone::UserRoleAssignment"
    support_status = SupportStatus(version="5.0.0", message="Supported versions: keystone v3")
    kind = "user"
    actor = "users"
    properties_schema = {
        "user": _ref("user", "The user (name or ID).", required=True, update_allowed=True),
        "roles": _roles_property(),
    }

    async def handle_create(self) -> Token:
        actor_id = await self.find(self.kind, self.properties[self.kind])
        await self.grant(self.actor, actor_id, self.properties.get("roles") or [])
        self.resource_id = actor_id
        return None

    async def handle_update(self, new_definition: ResourceDefinition,
                            new_properties: Properties, prop_diff: Mapping[str, Any]) -> Token:
        old_roles = list(self.properties.get("roles") or [])
        await self.revoke(self.actor, self.resource_id or "", old_roles)
        actor_id = await self.find(self.kind, new_properties[self.kind])
        await self.grant(self.actor, actor_id, list(new_properties.get("roles") or []))
        self.resource_id = actor_id
        return None

    async def handle_delete(self) -> Token:
        if self.resource_id:
            await self.revoke(self.actor, self.resource_id,
                              list(self.properties.get("roles") or []))
        return None


class GroupRoleAssignment(UserRoleAssignment):
    """Role grants of an existing group (its ID is the group's)."""

    type_name = "OS::Keystone::GroupRoleAssignment"
    support_status = SupportStatus(version="5.0.0", message="Supported versions: keystone v3")
    kind = "group"
    actor = "groups"
    properties_schema = {
        "group": _ref("group", "The group (name or ID).", required=True,
                      update_allowed=True),
        "roles": _roles_property(),
    }


class Region(KeystoneResource):
    """A Keystone region (its ID may be chosen)."""

    type_name = "OS::Keystone::Region"
    support_status = SupportStatus(version="6.0.0", message="Supported versions: keystone v3")
    kind = "region"
    api_names = {"parent_region": ("parent_region_id", "region")}
    properties_schema = {
        "id": Property("string", "ID of the region (default: generated)."),
        "parent_region": _ref("region", "Parent region.", update_allowed=True),
        "description": Property("string", "Description.", update_allowed=True),
        "enabled": Property("boolean", "Whether the region is enabled.", default=True,
                            update_allowed=True),
    }


class Service(KeystoneResource):
    """A catalog service."""

    type_name = "OS::Keystone::Service"
    support_status = SupportStatus(version="5.0.0", message="Supported versions: keystone v3")
    kind = "service"
    properties_schema = {
        "name": Property("string", "Name of the service.", update_allowed=True),
        "description": Property("string", "Description.", update_allowed=True),
        "type": Property("string", "Service type (compute, network, ...).", required=True,
                         update_allowed=True),
        "enabled": Property("boolean", "Whether the service is enabled.", default=True,
                            update_allowed=True),
    }


class Endpoint(KeystoneResource):
    """A catalog endpoint of a service."""

    type_name = "OS::Keystone::Endpoint"
    support_status = SupportStatus(version="5.0.0", message="Supported versions: keystone v3")
    kind = "endpoint"
    api_names = {"region": ("region_id", "region"), "service": ("service_id", "service")}
    properties_schema = {
        "name": Property("string", "Name of the endpoint.", update_allowed=True),
        "region": _ref("region", "Region of the endpoint.", update_allowed=True),
        "service": _ref("service", "The service (name or ID).", required=True,
                        update_allowed=True),
        "interface": Property("string", "Interface of the endpoint.", required=True,
                              update_allowed=True,
                              constraints=[AllowedValues(allowed=("public", "internal",
                                                                  "admin"))]),
        "url": Property("string", "URL of the endpoint.", required=True,
                        update_allowed=True),
        "enabled": Property("boolean", "Whether the endpoint is enabled.", default=True,
                            update_allowed=True),
    }


_KINDS["endpoint"] = ("endpoints", "endpoint")
