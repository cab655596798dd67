"""OS::Nova::KeyPair, OS::Nova::Flavor and OS::Nova::ServerGroup."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from urllib.parse import quote

from kiln.resources.base import Attribute, Properties, Property, SupportStatus, Token
from kiln.resources.common.cloud import OpenStackResource
from kiln.resources.common.server import MICROVERSION
from kiln.resources.live_state import GONE, NOT_CHECKED, LiveState, Unread, pick
from kiln.template.constraints import AllowedValues, CustomConstraint, Length
from kiln.template.definitions import ResourceDefinition


class NovaResource(OpenStackResource):
    client_name = "nova"
    service_type = "compute"
    microversion = MICROVERSION
    #: collection path; the object is deleted at ``/<collection>/<resource_id>``
    collection = ""

    def object_path(self, resource_id: str) -> str | None:
        return f"/{self.collection}/{resource_id}"


class KeyPair(NovaResource):
    """An SSH (or x509) keypair: imported from ``public_key``, or generated, in which
    case the private key is kept (encrypted) when ``save_private_key`` is set."""

    type_name = "OS::Nova::KeyPair"
    support_status = SupportStatus(version="2014.1")
    collection = "os-keypairs"
    secret_data = frozenset({"private_key"})
    #: the keypair's ID is its name, which a replacement usually keeps: the old one goes
    #: first (Heat's prepare_for_replace does the same; made first, the new one gets a
    #: 409 from Nova)
    replace_create_first = False
    properties_schema = {
        "name": Property("string", "Name of the keypair.", required=True,
                         constraints=[Length(min=1, max=255)]),
        "save_private_key": Property("boolean", "Keep the generated private key as the "
                                                "private_key attribute.", default=False),
        "public_key": Property("string", "Public key to import (none: generate one)."),
        "type": Property("string", "Keypair type.",
                         constraints=[AllowedValues(allowed=("ssh", "x509"))]),
        "user": Property("string", "User owning the keypair (admin only).",
                         constraints=[CustomConstraint(name="keystone.user")]),
    }
    attributes_schema = {
        "public_key": Attribute("The public key.", "string"),
        "private_key": Attribute("The private key, if generated and saved.", "string"),
    }

    async def handle_create(self) -> Token:
        props = self.properties
        body: dict[str, Any] = {"name": props["name"]}
        if props.get("public_key"):
            body["public_key"] = props["public_key"]
        if props.get("type"):
            body["type"] = props["type"]
        if props.get("user"):
            body["user_id"] = props["user"]
        # 2.92 stopped generating keys; ask for the last version that still does
        answer = await self.api("POST", "/os-keypairs", {"keypair": body},
                                microversion="2.91")
        keypair = answer["keypair"]
        self.resource_id = str(keypair["name"])
        self.data["public_key"] = keypair.get("public_key") or ""
        if props.get("save_private_key") and keypair.get("private_key"):
            self.data["private_key"] = keypair["private_key"]
        return None

    async def live_state(self, expected: Mapping[str, Any]) -> LiveState | Unread:
        """The keypair's public key and type, as Nova shows them now."""
        if self.resource_id is None:
            return NOT_CHECKED
        found = await self.api("GET", f"/os-keypairs/{quote(self.resource_id)}",
                               ok_missing=True)
        if not found:
            return GONE
        keypair = found.get("keypair") or {}
        state = pick(keypair, (("name", "name"), ("type", "type")), expected)
        if expected.get("public_key"):
            state.expected["public_key"] = str(expected["public_key"]).strip()
            state.actual["public_key"] = str(keypair.get("public_key") or "").strip()
        return state

    def resolve_attribute(self, name: str) -> Any:
        if name == "private_key":
            return self.data.get("private_key", "")
        return self.data.get("public_key")


class Flavor(NovaResource):
    """A flavor (admin only); private flavors are shared with ``tenants``."""

    type_name = "OS::Nova::Flavor"
    support_status = SupportStatus(version="2014.2")
    collection = "flavors"
    properties_schema = {
        "tenants": Property("list", "Projects given access to a private flavor.",
                            default=[], update_allowed=True,
                            schema=Property("string", constraints=[
                                CustomConstraint(name="keystone.project")])),
        "flavorid": Property("string", "ID of the flavor (default: generated)."),
        "name": Property("string", "Name of the flavor (default: the physical name)."),
        "ram": Property("integer", "Memory in MB.", required=True),
        "vcpus": Property("integer", "Number of vCPUs.", required=True),
        "disk": Property("integer", "Root disk in GB.", default=0),
        "swap": Property("integer", "Swap in MB.", default=0),
        "ephemeral": Property("integer", "Ephemeral disk in GB.", default=0),
        "rxtx_factor": Property("number", "RX/TX factor.", default=1.0),
        "extra_specs": Property("map", "Extra specs of the flavor.", update_allowed=True),
        "is_public": Property("boolean", "Whether every project may use it.",
                              default=True),
    }
    attributes_schema = {
        "is_public": Attribute("Whether every project may use the flavor.", "boolean"),
        "extra_specs": Attribute("The flavor's extra specs.", "map"),
    }

    async def handle_create(self) -> Token:
        p = self.properties
        body = {"name": p.get("name") or self.physical_resource_name(), "ram": p["ram"],
                "vcpus": p["vcpus"], "disk": p["disk"], "swap": p["swap"],
                "OS-FLV-EXT-DATA:ephemeral": p["ephemeral"],
                "rxtx_factor": p["rxtx_factor"],
                "os-flavor-access:is_public": p["is_public"]}
        if p.get("flavorid"):
            body["id"] = p["flavorid"]
        answer = await self.api("POST", "/flavors", {"flavor": body}, microversion="2.54")
        self.resource_id = str(answer["flavor"]["id"])
        self.remember(answer["flavor"])
        await self._specs(p.get("extra_specs") or {})
        for tenant in p.get("tenants") or []:
            await self._access("addTenantAccess", tenant)
        return None

    async def _specs(self, specs: Mapping[str, Any]) -> None:
        if specs:
            await self.api("POST", f"/flavors/{self.resource_id}/os-extra_specs",
                           {"extra_specs": {k: str(v) for k, v in specs.items()}})
        self.data["extra_specs"] = str(dict(specs))

    async def _access(self, action: str, tenant: str) -> None:
        await self.api("POST", f"/flavors/{self.resource_id}/action",
                       {action: {"tenant": tenant}})

    async def handle_update(self, new_definition: ResourceDefinition,
                            new_properties: Properties, prop_diff: Mapping[str, Any]) -> Token:
        if "extra_specs" in prop_diff:
            old = self.properties.get("extra_specs") or {}
            for key in old:
                await self.api("DELETE",
                               f"/flavors/{self.resource_id}/os-extra_specs/{key}",
                               ok_missing=True)
            await self._specs(prop_diff["extra_specs"] or {})
        if "tenants" in prop_diff:
            old_t = set(self.properties.get("tenants") or [])
            new_t = set(prop_diff["tenants"] or [])
            for tenant in old_t - new_t:
                await self._access("removeTenantAccess", tenant)
            for tenant in new_t - old_t:
                await self._access("addTenantAccess", tenant)
        return None

    def resolve_attribute(self, name: str) -> Any:
        if name == "is_public":
            return self.shown().get("os-flavor-access:is_public")
        return dict(self.properties.get("extra_specs") or {})


class ServerGroup(NovaResource):
    """A server group: a scheduling policy for the servers booted into it."""

    type_name = "OS::Nova::ServerGroup"
    support_status = SupportStatus(version="2014.2")
    collection = "os-server-groups"
    properties_schema = {
        "name": Property("string", "Name of the group."),
        "policies": Property("list", "The scheduling policy (one).",
                             default=["anti-affinity"],
                             constraints=[AllowedValues(allowed=(
                                 "anti-affinity", "affinity", "soft-anti-affinity",
                                 "soft-affinity"))],
                             schema=Property("string")),
        "rules": Property("map", "Rules of the policy.",
                          schema={"max_server_per_host": Property(
                              "number", "Servers per host (anti-affinity).")}),
    }

    async def handle_create(self) -> Token:
        p = self.properties
        body: dict[str, Any] = {"name": p.get("name") or self.physical_resource_name(),
                                "policy": (p.get("policies") or ["anti-affinity"])[0]}
        rules = {k: int(v) for k, v in (p.get("rules") or {}).items() if v is not None}
        if rules:
            body["rules"] = rules
        answer = await self.api("POST", "/os-server-groups", {"server_group": body},
                                microversion="2.64")
        self.resource_id = str(answer["server_group"]["id"])
        return None
