"""DNS rebinding: in ``noauth`` mode, requests must name this server in ``Host``.

Without authentication nothing but the browser's same-origin policy keeps a web page
from using the native API, and :mod:`kiln.api.cross_site` judges a request's origin by
the ``Host`` the browser addressed. A DNS rebinding attack defeats both: a page on
``attacker.example`` has its name re-resolved to Kiln's address, after which the
browser sends the page's requests to Kiln as same-origin ones, reads the answers and
changes stacks. What gives it away is ``Host: attacker.example``: a name Kiln was never
given. So in ``noauth`` mode the native listener answers only requests whose ``Host``
is one of its own names:

- an IP address literal (a page served from an IP is same-origin only with that IP and
  port: no name was rebound);
- ``localhost`` and ``*.localhost`` (RFC 6761: browsers resolve them to loopback
  themselves);
- the listeners' configured ``bind_host`` names, and this machine's host name when a
  listener is bound to a wildcard address (the name the URLs handed to servers use,
  kiln.endpoints);
- the hosts of the URLs handed to servers and clients (``heat_metadata_server_url``,
  ``heat_waitcondition_server_url``, ``heat_watch_server_url``, ``[clients_heat] url``);
- what the operator lists in ``[kiln_api] allowed_hosts`` (``*.example.com`` for a
  domain's names, ``*`` for any, which turns the check off).

Anything else is a 403 in Heat's fault body naming the option. Requests without
``Host`` (HTTP/1.0 programs) pass: browsers always send it. With authentication (any
other ``[paste_deploy] flavor``) the check is not made: a rebound page holds no token for
Kiln (tokens are not cookies), so it can reach nothing but what needs none.
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Iterable
from typing import Any
from urllib.parse import urlsplit

from starlette.datastructures import Headers
from starlette.types import ASGIApp, Receive, Scope, Send

from kiln.api.faults import HTTPError, fault_response

WILDCARDS = ("0.0.0.0", "::", "")
LISTENERS = ("heat_api", "heat_api_cfn", "heat_api_cloudwatch")
URL_OPTIONS = ("heat_metadata_server_url", "heat_waitcondition_server_url",
               "heat_watch_server_url")


def _name(host: str) -> str:
    return host.strip().rstrip(".").lower()


def _get(conf: Any, group: str | None, name: str) -> Any:
    try:
        return getattr(getattr(conf, group) if group else conf, name)
    except Exception:  # noqa: BLE001  (a conf without the option: nothing configured)
        return None


def configured_names(conf: Any) -> set[str]:
    """Every host name the configuration gives this server (module docstring)."""
    names: set[str] = set()
    for group in LISTENERS:
        host = _get(conf, group, "bind_host")
        if host is None:
            continue
        if str(host) in WILDCARDS:
            names.add(_name(socket.gethostname()))
            names.add(_name(socket.getfqdn()))
        else:
            names.add(_name(str(host)))
    urls = [_get(conf, None, name) for name in URL_OPTIONS]
    urls.append(_get(conf, "clients_heat", "url"))
    for url in urls:
        if url:
            try:
                host = urlsplit(str(url)).hostname
            except ValueError:
                host = None
            if host:
                names.add(_name(host))
    for entry in _get(conf, "kiln_api", "allowed_hosts") or ():
        if str(entry).strip():
            names.add(_name(str(entry)))
    return names


def _host_of(header: str) -> str | None:
    """The name in a ``Host`` header (no port, no brackets); None when unreadable."""
    try:
        host = urlsplit(f"http://{header}").hostname
    except ValueError:
        return None
    return _name(host) if host else None


def _is_ip(host: str) -> bool:
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True


class HostGuard:
    """The ASGI middleware of the module docstring (``noauth`` mode's native listener)."""

    def __init__(self, app: ASGIApp, names: Iterable[str] = ()) -> None:
        self.app = app
        listed = {_name(n) for n in names}
        self.any_host = "*" in listed
        self.domains = tuple(n[1:] for n in listed if n.startswith("*."))
        self.names = frozenset(n for n in listed if not n.startswith("*"))

    def allows(self, header: str) -> bool:
        host = _host_of(header)
        if host is None:
            return False
        return (self.any_host or _is_ip(host) or host == "localhost"
                or host.endswith(".localhost") or host in self.names
                or any(host.endswith(d) for d in self.domains))

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        header = Headers(scope=scope).get("host")
        if header is None or self.allows(header):
            await self.app(scope, receive, send)
            return
        shown = header if len(header) <= 200 else header[:200] + "..."
        error = HTTPError(403, f"Host '{shown}' is not a name of this server, which runs "
                          "without authentication: requests naming another host are "
                          "refused (DNS rebinding). If clients reach this server by that "
                          "name, add it to [kiln_api] allowed_hosts.",
                          error_type="HTTPForbidden", headers={"Connection": "close"})
        await fault_response(error)(scope, receive, send)
