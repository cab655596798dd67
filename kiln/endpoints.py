"""The absolute URLs servers are given to reach Kiln: metadata, signals, wait conditions.

A URL handed to a server must work from inside that server, so it is never relative.
Each comes, in order, from:

1. the operator's option, as in Heat: ``heat_waitcondition_server_url`` (the CFN
   wait-condition URL, e.g. ``http://kiln.example.com:8000/v1/waitcondition``; the signal
   URL is the same with ``/signal``) and ``heat_metadata_server_url`` (the CFN API
   root, ``/v1/`` added when missing);
2. else the address the API was reached on: the scheme and host of the latest request
   this process served (``remember``), with the port of the API the URL points at
   (``[heat_api]`` or ``[heat_api_cfn] bind_port``);
3. else the API's bind address (a wildcard one read as this host's name).

Imports nothing from Kiln; the APIs call ``remember``, the engine the ``*_url`` helpers.
"""

from __future__ import annotations

import socket
from typing import Any

_reached: dict[str, str] = {}


def remember(scheme: str, host_header: str) -> None:
    """Record the scheme and host a client used (the Host header, port dropped)."""
    host = host_header.strip()
    if not host:
        return
    if host.startswith("["):
        host = host[:host.index("]") + 1] if "]" in host else host
    elif host.count(":") == 1:
        host = host.split(":", 1)[0]
    if _reached.get("host") != host or _reached.get("scheme") != scheme:
        _reached.update(host=host, scheme=scheme)


def remember_scope(scope: Any) -> None:
    """:func:`remember` the scheme and Host header of an ASGI HTTP scope."""
    for name, value in scope.get("headers") or ():
        if name == b"host":
            remember(str(scope.get("scheme") or "http"), value.decode("latin-1"))
            return


def forget() -> None:
    """Clear what was remembered (tests)."""
    _reached.clear()


def _bind_host(conf: Any, group: str) -> str:
    host = str(getattr(getattr(conf, group, None), "bind_host", "") or "127.0.0.1")
    if host in ("0.0.0.0", "::", ""):
        return socket.gethostname()
    return f"[{host}]" if ":" in host else host


def api_root(conf: Any, group: str) -> str:
    """``scheme://host:port`` of the API of ``group`` (``heat_api`` or ``heat_api_cfn``)."""
    port = getattr(getattr(conf, group, None), "bind_port", 8004 if group == "heat_api"
                   else 8000)
    if _reached:
        return f"{_reached['scheme']}://{_reached['host']}:{port}"
    return f"http://{_bind_host(conf, group)}:{port}"


def metadata_url(conf: Any) -> str:
    """The CFN API root servers read metadata from, ending in ``/v1/`` (Heat's
    ``get_cfn_metadata_server_url``)."""
    url = getattr(conf, "heat_metadata_server_url", None) or api_root(conf, "heat_api_cfn")
    if "/v1" not in url:
        url = url.rstrip("/") + "/v1"
    return url if url.endswith("/") else url + "/"


def cfn_signal_root(conf: Any, kind: str) -> str:
    """``.../v1/waitcondition`` or ``.../v1/signal`` (Heat replaces ``/waitcondition``
    in the configured URL by the signal kind)."""
    path = "/waitcondition" if kind == "cfn_waitcondition" else "/signal"
    configured = getattr(conf, "heat_waitcondition_server_url", None)
    if configured:
        return str(configured).rstrip("/").replace("/waitcondition", path)
    return metadata_url(conf).rstrip("/") + path


def heat_api_root(conf: Any) -> str:
    """The native API's ``/v1`` root (``http://host:8004/v1``)."""
    return api_root(conf, "heat_api") + "/v1"
