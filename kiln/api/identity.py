"""Stack identities, their canonical URLs and ARNs, and the ``links`` built from them.

A stack identity is Heat's ``{"tenant", "stack_name", "stack_id", "path"}``; resources
and events extend ``path`` with ``/resources/<name>`` and ``/events/<id>``. Links are
absolute URLs under the API root of the request (``http://host:port/v1/``).
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache
from typing import Any
from urllib.parse import quote, unquote

from kiln.api.faults import bad_request

Identity = dict[str, str]


#: Sized for a list of 1,000 stacks (a name and an id each): every stack ever shown adds
#: its id, so a bigger cache only fills with dead stacks' ids (16,384 of them grew a
#: soak's server by megabytes over half an hour).
@lru_cache(maxsize=2048)
def _segment(text: str) -> str:
    """One URL path segment, quoted (``/`` too); cached: lists repeat the same names."""
    return quote(text, "")


segment = _segment


@lru_cache(maxsize=256)  # resource paths repeat; an event's path never does
def _subpath(text: str) -> str:
    return quote(text)


def make_identity(tenant: str, stack_name: str, stack_id: str, path: str = "") -> Identity:
    if path and not path.startswith("/"):
        path = "/" + path
    return {"tenant": tenant, "stack_name": stack_name, "stack_id": str(stack_id),
            "path": path}


def from_arn(arn: str) -> Identity | None:
    """Parse ``arn:openstack:heat::<tenant>:stacks/<name>/<id>[<path>]``; None if not one."""
    fields = arn.split(":")
    if len(fields) < 6 or fields[0].lower() != "arn":
        return None
    if fields[1] != "openstack" or fields[2] != "heat":
        return None
    fragment = ":".join(fields[5:])
    if not fragment.startswith("stacks/"):
        return None
    parts = fragment[len("stacks/"):].split("/", 2)
    if len(parts) < 2 or not parts[0] or not parts[1]:
        return None
    rest = "/" + parts[2] if len(parts) == 3 else ""
    return make_identity(unquote(fields[4]), unquote(parts[0]), unquote(parts[1]),
                         unquote(rest))


def to_arn(identity: Mapping[str, str]) -> str:
    return "arn:openstack:heat::{}:stacks/{}/{}{}".format(
        quote(identity["tenant"], ""), quote(identity["stack_name"], ""),
        quote(identity["stack_id"], ""), quote(identity.get("path") or ""))


def url_path(identity: Mapping[str, str]) -> str:
    """``<tenant>/stacks/<name>/<id><path>``, each segment quoted as Heat does."""
    path = identity.get("path") or ""
    return "{}/stacks/{}/{}{}".format(
        _segment(identity["tenant"]), _segment(identity["stack_name"]),
        _segment(identity["stack_id"]), _subpath(path) if path else "")


def make_url(api_root: str, identity: Mapping[str, str]) -> str:
    if "/" in identity.get("stack_name", ""):
        raise bad_request('Stack name may not contain "/"')
    return api_root + url_path(identity)


def link(api_root: str, identity: Mapping[str, str], rel: str = "self") -> dict[str, str]:
    return {"href": make_url(api_root, identity), "rel": rel}


def strip_path(identity: Mapping[str, str], components: int) -> Identity:
    """The identity ``components`` path segments up (resource -> stack, event -> resource)."""
    parts = (identity.get("path") or "").lstrip("/").split("/")
    kept = "/".join(parts[:-components]) if components < len(parts) else ""
    return make_identity(identity["tenant"], identity["stack_name"], identity["stack_id"],
                         kept)


def coerce(value: Any, tenant: str, stack_name: str | None = None) -> Identity | None:
    """Accept an identity dict, or a bare stack id (with name), from the engine."""
    if isinstance(value, Mapping) and "stack_id" in value:
        return make_identity(str(value.get("tenant") or tenant),
                             str(value.get("stack_name") or stack_name or ""),
                             str(value["stack_id"]), str(value.get("path") or ""))
    if isinstance(value, str) and stack_name:
        return make_identity(tenant, stack_name, value)
    return None
