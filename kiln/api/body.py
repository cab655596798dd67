"""Reading request bodies: JSON only, and never more than the bound.

A body is read only when its media type is JSON (``application/json`` or an
``application/*+json`` type, parameters such as ``charset`` allowed) or absent, as
Heat reads an untyped body as JSON and clients that send raw bytes rely on it. Any
other type, ``text/plain`` and the form types in particular, is a 415: those are the
types a web page on another site can send without the browser asking first, so a JSON
route that took them would let any page a user visits create or act on stacks (the
no-authentication API has nothing else in the way). An empty body is "no body", as in
Heat, whatever its type.

The size bound comes before any reading: a declared ``Content-Length`` over it is
refused at once, and a chunked body is read only up to it. Either way the answer says
``Connection: close``, so the rest of what the client sends is never taken in.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from starlette.requests import Request

from kiln.api.faults import HTTPError, bad_request

JSON_TYPE = "application/json"
#: the answer to a refused body closes the connection: its unread rest is dropped
CLOSE = {"Connection": "close"}

TooLarge = Callable[[int], HTTPError]


def media_type(request: Request) -> str:
    """The Content-Type without its parameters, lowercased ('' when absent)."""
    return request.headers.get("content-type", "").split(";", 1)[0].strip().lower()


def is_json_type(ctype: str) -> bool:
    return ctype == JSON_TYPE or (ctype.startswith("application/") and ctype.endswith("+json"))


def has_body(request: Request) -> bool:
    """Whether anything follows the headers (a positive length, or chunked)."""
    declared = request.headers.get("content-length")
    if declared is None:
        return "chunked" in request.headers.get("transfer-encoding", "").lower()
    return declared.strip() not in ("", "0")


def require_json_type(request: Request) -> None:
    """415 unless the body is JSON or untyped; see the module docstring for why."""
    ctype = media_type(request)
    if ctype and not is_json_type(ctype) and has_body(request):
        shown = ctype if len(ctype) <= 100 else ctype[:100] + "..."
        raise HTTPError(415, f"Unsupported Content-Type '{shown}': this request's body "
                        f"must be JSON, sent as Content-Type: {JSON_TYPE}.",
                        error_type="HTTPUnsupportedMediaType", headers=CLOSE)


def json_body_too_large(size: int, limit: int) -> HTTPError:
    """Heat's answer to a JSON body over ``max_json_body_size`` (a 400 of this type)."""
    return HTTPError(400, f"Request limit exceeded: JSON body size ({size} bytes) exceeds "
                     f"maximum allowed size ({limit} bytes).",
                     error_type="RequestLimitExceeded", headers=CLOSE)


async def read_bounded(request: Request, limit: int, too_large: TooLarge) -> bytes:
    """The whole body, refused (``too_large(size)``) before reading when its declared
    length is over ``limit``, and as soon as a chunked body passes it."""
    declared = request.headers.get("content-length")
    if declared is not None:
        try:
            declared_len = int(declared)
        except ValueError:
            raise bad_request("Invalid Content-Length header") from None
        if declared_len > limit:
            raise too_large(declared_len)
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise too_large(size)
        chunks.append(chunk)
    return b"".join(chunks)


async def read_json(request: Request, limit: int) -> dict[str, Any] | None:
    """The JSON object sent, or None when Heat would see no body."""
    require_json_type(request)
    if not has_body(request):
        return None
    raw = await read_bounded(request, limit, lambda size: json_body_too_large(size, limit))
    if not raw.lstrip().startswith(b"{"):
        return None
    try:
        data = json.loads(raw)
    except (ValueError, RecursionError) as exc:
        raise bad_request(str(exc) if isinstance(exc, ValueError)
                          else "JSON nesting too deep") from None
    if not isinstance(data, dict):
        return None
    return data


async def require_json(request: Request, limit: int) -> dict[str, Any]:
    data = await read_json(request, limit)
    if data is None:
        raise bad_request()
    return data
