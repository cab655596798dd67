"""Fetching a URL a user names (``template_url``, a nested stack's ``TemplateURL``, an
alarm action's URL) without letting the user reach what only the server can reach.

A URL in a request is fetched by the server, from inside its network: without a check a
user could read the cloud metadata service (169.254.169.254), services bound to
loopback (Kiln's own API, which would answer with another project's data) or hosts on
private networks. So every hop, the first URL and each redirect, is checked *before* a
connection is made, on the addresses its host name resolves to (not only the name), and
the connection then goes to the address that was checked, so a name cannot resolve to
an allowed address for the check and a forbidden one for the connection:

* link-local addresses (169.254.0.0/16, fe80::/10: metadata services) are never fetched;
* loopback, private, shared, reserved, multicast and unspecified addresses are fetched
  only if ``allowed_hosts`` (``template_url_allowed_hosts``) names the host or a network
  holding the address;
* anything else (the public internet) is fetched.

Errors are :class:`FetchError` with a message that says why, for the caller to word as
its API does (``Could not retrieve template: ...``).
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING
from urllib.parse import urljoin, urlsplit

if TYPE_CHECKING:
    import httpx

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
Resolver = Callable[[str, int], Awaitable[list[str]]]

#: Redirects followed before giving up (httpx's default is 20; a template needs few).
MAX_REDIRECTS = 5

_SHARED = ipaddress.ip_network("100.64.0.0/10")  # carrier-grade NAT, not "private" in 3.11


class FetchError(Exception):
    """The URL could not be fetched; ``str()`` says why."""


class Refused(FetchError):
    """The URL was refused before any connection (scheme, address, size); the message
    is for the user."""


class TooLarge(Refused):
    """The body is larger than the caller's limit."""

    def __init__(self, limit: int) -> None:
        super().__init__(f"Template exceeds maximum allowed size ({limit} bytes)")


async def system_resolve(host: str, port: int) -> list[str]:
    """The addresses the system resolver gives for ``host`` (every family)."""
    infos = await asyncio.get_running_loop().getaddrinfo(host, port,
                                                         type=socket.SOCK_STREAM)
    return list(dict.fromkeys(str(info[4][0]) for info in infos))


def _forbidden_kind(address: IPAddress) -> str | None:
    """Why ``address`` needs the operator's allowance, or None for a public address."""
    if address.is_loopback:
        return "a loopback"
    if address.is_multicast or address.is_reserved or address.is_unspecified:
        return "a reserved"
    if address.is_private or address in _SHARED:
        return "a private"
    return None


class URLGuard:
    """The check of one hop; ``allowed_hosts`` holds names and networks (CIDR or single
    addresses) that may be reached although they are loopback or private."""

    def __init__(self, allowed_hosts: Sequence[str], *,
                 resolve: Resolver = system_resolve) -> None:
        self.names = {h.strip().lower() for h in allowed_hosts
                      if h.strip() and not _is_network(h.strip())}
        self.networks = [ipaddress.ip_network(h.strip(), strict=False)
                         for h in allowed_hosts if h.strip() and _is_network(h.strip())]
        self.resolve = resolve

    def _allowed(self, host: str, address: IPAddress) -> bool:
        return host.lower() in self.names or any(address in n for n in self.networks)

    async def address_for(self, url: str) -> str:
        """The address to connect to for ``url``, or FetchError if it may not be reached."""
        parts = urlsplit(url)
        host = parts.hostname
        if not host:
            raise Refused(f"{url} names no host")
        try:
            port = parts.port or (443 if parts.scheme == "https" else 80)
        except ValueError:
            raise Refused(f"{url} has an invalid port") from None
        try:
            addresses = [ipaddress.ip_address(host)]
        except ValueError:
            try:
                found = await self.resolve(host, port)
            except OSError as exc:
                raise FetchError(f"cannot resolve {host}: {exc}") from None
            addresses = [ipaddress.ip_address(a.split("%")[0]) for a in found]
        if not addresses:
            raise FetchError(f"cannot resolve {host}")
        for address in addresses:
            if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped:
                address = address.ipv4_mapped  # ::ffff:127.0.0.1 is 127.0.0.1
            if address.is_link_local:
                raise Refused(f"{url} resolves to a link-local address ({address}), "
                                 "which is never fetched")
            kind = _forbidden_kind(address)
            if kind and not self._allowed(host, address):
                raise Refused(f"{url} resolves to {kind} address ({address}), which "
                                 "template_url_allowed_hosts does not allow")
        return str(addresses[0])


def _is_network(entry: str) -> bool:
    try:
        ipaddress.ip_network(entry, strict=False)
    except ValueError:
        return False
    return True


def _pinned(url: str, address: str) -> tuple[str, str, str]:
    """``url`` with its host replaced by ``address``; also the Host header and the
    TLS server name, which stay the original host's."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    netloc_host = f"[{address}]" if ":" in address else address
    port = f":{parts.port}" if parts.port else ""
    header = parts.netloc.rpartition("@")[2]
    return parts._replace(netloc=netloc_host + port).geturl(), header, host


async def fetch(url: str, *, allowed_schemes: Sequence[str], allowed_hosts: Sequence[str],
                timeout: float, limit: int,  # httpx's per-request timeout  # noqa: ASYNC109
                transport: httpx.AsyncBaseTransport | None = None,
                resolve: Resolver = system_resolve) -> bytes:
    """The body at ``url`` (at most ``limit`` bytes), each hop checked by :class:`URLGuard`.

    Raises FetchError: refused URL, HTTP error status, too large, too many redirects,
    network failure or timeout. ``transport`` and ``resolve`` are seams for tests."""
    import httpx  # only fetching needs it; importing it at start-up costs ~5 MB and 0.1 s

    guard = URLGuard(allowed_hosts, resolve=resolve)
    try:
        async with httpx.AsyncClient(timeout=timeout, follow_redirects=False,
                                     transport=transport) as client:
            for _hop in range(MAX_REDIRECTS + 1):
                scheme = urlsplit(url).scheme
                if scheme not in allowed_schemes:
                    raise Refused(f"Invalid URL scheme {scheme}")
                address = await guard.address_for(url)
                target, host_header, server_name = _pinned(url, address)
                request = client.build_request(
                    "GET", target, headers={"Host": host_header},
                    extensions={"sni_hostname": server_name} if scheme == "https" else {})
                response = await client.send(request, stream=True)
                try:
                    if response.is_redirect and "location" in response.headers:
                        url = urljoin(url, response.headers["location"])
                        continue
                    if response.status_code >= 400:
                        raise FetchError(f"{url} answered {response.status_code}")
                    data = bytearray()
                    async for chunk in response.aiter_bytes():
                        data += chunk
                        if len(data) > limit:
                            raise TooLarge(limit)
                    return bytes(data)
                finally:
                    await response.aclose()
    except (httpx.HTTPError, OSError, ValueError) as exc:
        raise FetchError(f"{url}: {exc}") from None
    raise FetchError(f"more than {MAX_REDIRECTS} redirects")


async def post_json(url: str, payload: object, *, allowed_hosts: Sequence[str],
                    timeout: float,  # httpx's per-request timeout  # noqa: ASYNC109
                    transport: httpx.AsyncBaseTransport | None = None,
                    resolve: Resolver = system_resolve) -> int:
    """POST ``payload`` as JSON to ``url`` (an alarm action), checked by :class:`URLGuard`
    as a fetch is, and answer the status code. Redirects are not followed: the answer
    to a notification is only its status.

    Raises FetchError: refused URL, network failure or timeout."""
    import httpx  # rarely needed: not at start-up

    if urlsplit(url).scheme not in ("http", "https"):
        raise Refused(f"unsupported action {url}")
    address = await URLGuard(allowed_hosts, resolve=resolve).address_for(url)
    target, host_header, server_name = _pinned(url, address)
    https = urlsplit(url).scheme == "https"
    try:
        async with httpx.AsyncClient(timeout=timeout, follow_redirects=False,
                                     transport=transport) as client:
            request = client.build_request(
                "POST", target, json=payload, headers={"Host": host_header},
                extensions={"sni_hostname": server_name} if https else {})
            response = await client.send(request)
            return response.status_code
    except (httpx.HTTPError, OSError, ValueError) as exc:  # unreachable, slow, malformed
        raise FetchError(f"POST {url}: {exc or type(exc).__name__}") from None
