"""What the Swift-backed plugins share: one object-store call, the account's URL, the
caller's names for ACLs, and Swift temp URLs signed with the container's key.

Swift answers in headers and raw bodies rather than JSON, so :meth:`SwiftResource.swift`
returns both. Temp URLs are signed with a container's ``Temp-URL-Key`` (Swift's tempurl
middleware accepts a container's keys beside the account's), created (random) when the
container has none; HMAC-SHA256 (Swift's default digest) over ``METHOD\\nEXPIRES\\nPATH``,
expiring just before 2038 as Heat's (effectively never). Heat signs with the account's
key instead; a container's is used here because an account's key is shared by every
engine making URLs in the project: two engine processes that both found the account
keyless would each set their own key, and the loser's URLs would answer 401. A
container's key is only ever created on a container that has none (so no URL already
handed out is revoked), the container is the stack's, and one engine runs a stack's
action, within which the check-then-create is serialised; the account's key, which the
tenant may use for other things, is left alone.
"""

from __future__ import annotations

import asyncio
import secrets
import weakref
from typing import Any
from urllib.parse import quote, urlparse

from kiln import tempurl
from kiln.clients import errors, rest
from kiln.resources.common.cloud import OpenStackResource

TEMP_URL_KEY = "x-container-meta-temp-url-key"
#: Heat's temp URL lifetime: the largest 32-bit epoch less a minute
EXPIRES = 2**31 - 1 - 60

_KEY_LOCKS: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Lock] = (
    weakref.WeakKeyDictionary())


def object_path(container: str, obj: str | None = None) -> str:
    """The (quoted) path of a container, or of an object in it, under the account."""
    path = "/" + quote(container, safe="")
    return path if obj is None else f"{path}/{quote(obj, safe='')}"


class SwiftResource(OpenStackResource):
    """A plugin whose physical object lives in Swift."""

    client_name = "swift"
    service_type = "object-store"

    async def swift(self, method: str, path: str, headers: dict[str, str] | None = None,
                    *, data: bytes | None = None, decode: bool = True,
                    ok_missing: bool = False) -> tuple[dict[str, str], Any] | None:
        """One object-store call: (headers, body); None for a 404 when *ok_missing*.
        Other failures become ResourceFailure as :meth:`api`'s."""

        def call(conn: Any) -> tuple[dict[str, str], Any]:
            return rest.exchange(conn, self.service_type, method, path, headers=headers,
                                 data=data, decode=decode)

        try:
            return await self.clients.call(call, what=f"{method} object-store{path}")
        except Exception as exc:
            if ok_missing and errors.is_not_found(exc):
                return None
            raise self.failure(exc) from exc

    async def delete_container(self, container: str) -> bool:
        """DELETE a container; False when Swift refuses because objects are still in it
        (its 409, which is an answer here, not a conflict to retry); a container already
        gone counts as deleted."""
        from openstack import exceptions

        def call(conn: Any) -> bool:
            response = rest.proxy(conn, self.service_type).request(
                object_path(container), "DELETE", raise_exc=False)
            status = int(response.status_code)
            if status in (404, 409):
                return status == 404
            exceptions.raise_from_response(response)
            return True

        try:
            return await self.clients.call(call, what=f"DELETE container {container}")
        except Exception as exc:
            raise self.failure(exc) from exc

    async def account_url(self) -> str:
        """The account's URL from the catalog (``http://host:port/v1/AUTH_<project>``)."""
        url = await self.clients.call(lambda conn: rest.endpoint(conn, self.service_type))
        return url.rstrip("/")

    async def caller_names(self) -> tuple[str, str]:
        """(project name, user name) of the identity Kiln acts as, for Swift ACLs."""

        def names(conn: Any) -> tuple[str, str]:
            access = conn.session.auth.get_access(conn.session)
            return str(access.project_name), str(access.username)

        return await self.clients.call(names, what="identity of the caller")

    async def temp_url_key(self, container: str) -> str:
        """The container's temp URL key, made (random) if the container has none."""
        loop = asyncio.get_running_loop()
        lock = _KEY_LOCKS.setdefault(loop, asyncio.Lock())
        path = object_path(container)
        async with lock:
            found = await self.swift("HEAD", path)
            key = (found[0] if found else {}).get(TEMP_URL_KEY)
            if key:
                return key
            await self.swift("POST", path, {TEMP_URL_KEY: secrets.token_hex(16)})
            found = await self.swift("HEAD", path)
            return (found[0] if found else {})[TEMP_URL_KEY]

def signed_url(account_url: str, key: str, container: str, obj: str,
               method: str = "PUT") -> str:
    """A temp URL for *method* on the object: Swift signs the unquoted path."""
    account = urlparse(account_url)
    path = f"{account.path}/{container}/{obj}"
    sig = tempurl.signature(key, method, EXPIRES, path)
    return (f"{account.scheme}://{account.netloc}{account.path}{object_path(container, obj)}"
            f"?temp_url_sig={sig}&temp_url_expires={EXPIRES}")
