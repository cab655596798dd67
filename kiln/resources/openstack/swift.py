"""OS::Swift::Container: a Swift container with its ACLs and metadata.

Heat allows no property to change in place, so an update replaces the container. A
delete refuses a container that still holds objects unless ``PurgeOnDelete`` is true;
then the objects are deleted first, as many per poll as one listing returns, so a big
container is emptied across polls rather than in one long call. ``ObjectCount``,
``BytesUsed`` and ``HeadContainer`` are the container's HEAD, read again whenever an
output shows them; the URL attributes come from the catalog's object-store endpoint.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import quote, urlparse

from kiln.clients import rest
from kiln.resources.base import Attribute, Property, ResourceFailure, SupportStatus, Token
from kiln.resources.common.swift import SwiftResource

_COUNTS = {"ObjectCount": "x-container-object-count", "BytesUsed": "x-container-bytes-used"}


class SwiftContainer(SwiftResource):
    """A container: a namespace for objects."""

    type_name = "OS::Swift::Container"
    live_attributes = frozenset({"ObjectCount", "BytesUsed", "HeadContainer"})
    properties_schema = {
        "name": Property("string", "Name of the container (default: a unique name)."),
        "X-Container-Read": Property("string", "Who may read the container's objects (a "
                                               "Swift ACL)."),
        "X-Container-Write": Property("string", "Who may write objects into the "
                                                "container (a Swift ACL)."),
        "X-Container-Meta": Property("map", "Metadata of the container.", default={}),
        "X-Account-Meta": Property("map", "Metadata set on the account.", default={}),
        "PurgeOnDelete": Property("boolean", "Delete the container's objects with it.",
                                  default=False,
                                  support_status=SupportStatus(version="2015.1")),
    }
    attributes_schema = {
        "DomainName": Attribute("The host of the container's URL.", "string"),
        "WebsiteURL": Attribute("The container's URL.", "string"),
        "RootURL": Attribute("The account's URL, the container's parent.", "string"),
        "ObjectCount": Attribute("How many objects the container holds.", "integer"),
        "BytesUsed": Attribute("How many bytes the container's objects take.", "integer"),
        "HeadContainer": Attribute("The container's headers.", "map"),
    }

    def physical_resource_name(self) -> str:
        return str(self.properties.get("name") or super().physical_resource_name())

    def _path(self, container: str | None = None) -> str:
        return "/" + quote(container or self.resource_id or "", safe="")

    async def handle_create(self) -> Token:
        p = self.properties
        name = self.physical_resource_name()
        headers = {f"X-Container-Meta-{k}": str(v)
                   for k, v in (p.get("X-Container-Meta") or {}).items()}
        for key in ("X-Container-Read", "X-Container-Write"):
            if p.get(key) is not None:
                headers[key] = str(p[key])
        await self.swift("PUT", self._path(name), headers)
        account = {f"X-Account-Meta-{k}": str(v)
                   for k, v in (p.get("X-Account-Meta") or {}).items()}
        if account:
            await self.swift("POST", "", account)
        self.resource_id = name
        await self.refresh_live()
        return None

    async def fetch_live(self) -> dict[str, Any] | None:
        if self.resource_id is None:
            return None
        answer = await self.swift("HEAD", self._path(), ok_missing=True)
        if answer is None:
            return None
        url = await self.clients.call(lambda conn: rest.endpoint(conn, self.service_type))
        return {"endpoint": url, "headers": answer[0]}

    async def _objects(self) -> list[str] | None:
        """Names of (up to one listing of) the container's objects; None if it is gone."""
        listing = await self.api("GET", f"{self._path()}?format=json", ok_missing=True)
        if listing is None:
            return None
        return [str(o["name"]) for o in listing] if isinstance(listing, list) else []

    async def handle_delete(self) -> Token:
        if self.resource_id is None:
            return None
        objects = await self._objects()
        if objects is None:
            return None
        if objects and not self.properties.get("PurgeOnDelete"):
            raise ResourceFailure(
                f"Deleting non-empty container ({self.resource_id}) when PurgeOnDelete "
                "is False is not supported for resource.",
                exc_type="ResourceActionNotSupported")
        return {"container": self.resource_id}

    async def check_delete_complete(self, token: Token) -> bool:
        if not token:
            return True
        objects = await self._objects()
        if objects is None:
            return True
        for name in objects:
            await self.api("DELETE", f"{self._path()}/{quote(name)}", ok_missing=True)
        if objects:
            return False
        await self.api("DELETE", self._path(), ok_missing=True)
        return True

    async def handle_check(self) -> Token:
        if await self._objects() is None:
            raise ResourceFailure(f"Container {self.resource_id} not found",
                                  exc_type="NotFound")
        await self.refresh_live()
        return None

    def reference_id(self) -> str:
        return str(self.resource_id)

    def show(self) -> Any:
        return self.shown().get("headers")

    def resolve_attribute(self, name: str) -> Any:
        shown = self.shown()
        headers: dict[str, str] = shown.get("headers") or {}
        url = urlparse(str(shown.get("endpoint") or ""))
        root = f"{url.scheme}://{url.netloc}{url.path}"
        if name == "DomainName":
            return url.hostname
        if name == "RootURL":
            return root
        if name == "WebsiteURL":
            return f"{root}/{self.resource_id}"
        if name in _COUNTS:
            return headers.get(_COUNTS[name])  # Heat gives the header as it came
        if name == "HeadContainer":
            return headers or None
        return None
