"""The absolute URLs servers are given to reach Kiln: metadata, signals, wait conditions.

A URL handed to a server must work from inside that server, so it is never relative,
and it comes from configuration only, never from a request: a server sends its
credentials (pre-signed URLs, signatures) to it, so whoever chose it would receive them.
(Issue 22: the Host header of the latest request once chose it.) Each comes, in order,
from:

1. the operator's option, as in Heat: ``heat_metadata_server_url`` (the CFN API root,
   ``/v1/`` added when missing) and ``heat_waitcondition_server_url`` (the CFN
   wait-condition URL, e.g. ``http://kiln.example.com:8000/v1/waitcondition``, the
   signal URL being the same with ``/signal``; unset, the metadata URL plus
   ``waitcondition``, as Heat falls back to its CFN endpoint);
2. else the configured address of the listener the URL points at: ``[heat_api_cfn]``
   (metadata, signals, wait conditions) or ``[heat_api]`` (the native API's signal URLs,
   temp URLs), ``bind_host:bind_port`` over plain HTTP. A listener bound to a wildcard
   address (``0.0.0.0``, ``::``) is named by this machine's host name, and a warning
   says so once: set the options above to choose the address servers use.

Imports nothing from Kiln; the engine and the plugins call the ``*_url`` helpers.
"""

from __future__ import annotations

import logging
import socket
from typing import Any

LOG = logging.getLogger("kiln.endpoints")

WILDCARDS = ("0.0.0.0", "::", "")
_warned: set[str] = set()


def _listener_host(conf: Any, group: str) -> str:
    host = str(getattr(getattr(conf, group, None), "bind_host", None) or "127.0.0.1")
    if host in WILDCARDS:
        named = socket.gethostname()
        if group not in _warned:
            _warned.add(group)
            LOG.warning("[%s] bind_host %s is a wildcard address: servers are handed URLs "
                        "naming this machine's host name, %s (set heat_metadata_server_url "
                        "and heat_waitcondition_server_url to choose)", group,
                        host or "(empty)", named)
        return named
    return f"[{host}]" if ":" in host else host


def api_root(conf: Any, group: str) -> str:
    """``http://host:port`` of the listener of ``group`` (``heat_api`` or
    ``heat_api_cfn``), from its configured bind address."""
    port = getattr(getattr(conf, group, None), "bind_port", None) or (
        8004 if group == "heat_api" else 8000)
    return f"http://{_listener_host(conf, group)}:{port}"


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
    """The native API's ``/v1`` root (``http://host:port/v1``)."""
    return api_root(conf, "heat_api") + "/v1"


def heat_project_root(conf: Any, project: str) -> str:
    """The native API's root of a project (``.../v1/<project>``, ``project`` quoted):
    Heat's ``[clients_heat] url`` with its ``%(tenant_id)s`` filled in when set (an
    engine on its own controller, a load balancer in front of the API processes), else
    the ``[heat_api]`` listener's."""
    configured = getattr(getattr(conf, "clients_heat", None), "url", None)
    if configured:
        url = str(configured).rstrip("/")
        for key in ("%(tenant_id)s", "%(project_id)s"):
            url = url.replace(key, project)
        return url
    return f"{heat_api_root(conf)}/{project}"
