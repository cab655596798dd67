"""What crosses the broker: a RequestContext, and a kiln.errors error raised by the
engine, re-raised in the caller as the same class so the API renders Heat's fault body
exactly as for an error of its own process."""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from typing import Any

from kiln import errors
from kiln.engine.model.context import RequestContext

#: the context fields sent as they are (strings, booleans, None)
_PLAIN = ("project_id", "user_id", "username", "is_admin", "lists_all_projects",
          "request_id", "auth_token", "auth_user", "auth_key", "no_credentials")


def context_to_dict(ctx: RequestContext) -> dict[str, Any]:
    """The context as JSON (the caller's token goes along, as Heat's RPC context does:
    the engine acts for the caller)."""
    out: dict[str, Any] = {name: getattr(ctx, name) for name in _PLAIN}
    out["roles"] = list(ctx.roles)
    out["client_auth"] = (None if ctx.client_auth is None
                          else [ctx.client_auth[0], dict(ctx.client_auth[1])])
    out["service_types"] = (None if ctx.service_types is None
                            else sorted(ctx.service_types))
    return out


def context_from_dict(data: Mapping[str, Any]) -> RequestContext:
    auth = data.get("client_auth")
    types = data.get("service_types")
    return RequestContext(
        **{name: data[name] for name in _PLAIN if name in data},
        roles=tuple(data.get("roles") or ()),
        client_auth=None if auth is None else (str(auth[0]), dict(auth[1])),
        service_types=None if types is None else frozenset(types))


def _jsonable(value: object) -> bool:
    return value is None or isinstance(value, str | int | float | bool)


def error_to_dict(exc: errors.KilnError) -> dict[str, Any]:
    """Class (module and name), message, and the attributes the API's fault rendering
    reads (``path``, ``hint``, ``retry_after``, ...): every plain attribute."""
    attrs = {k: v for k, v in vars(exc).items() if _jsonable(v) and k != "message"}
    return {"module": type(exc).__module__, "class": type(exc).__qualname__,
            "message": exc.message, "path": list(exc.path), "attrs": attrs}


def error_from_dict(data: Mapping[str, Any]) -> errors.KilnError:
    """The error as the engine raised it; a class this process cannot find (another
    version) becomes a KilnError with the same status and Heat type."""
    cls: Any = None
    module = str(data.get("module", ""))
    if module == "kiln" or module.startswith("kiln."):
        try:
            cls = importlib.import_module(module)
            for part in str(data.get("class", "")).split("."):
                cls = getattr(cls, part)
        except (ImportError, AttributeError):
            cls = None
    if not (isinstance(cls, type) and issubclass(cls, errors.KilnError)):
        cls = errors.KilnError
    exc: errors.KilnError = cls.__new__(cls)
    message = str(data.get("message", ""))
    Exception.__init__(exc, message)
    exc.message = message
    exc.path = tuple(data.get("path") or ())
    for key, value in dict(data.get("attrs") or {}).items():
        setattr(exc, key, value)
    return exc
