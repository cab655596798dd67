"""Reading request bodies the way Heat does.

Heat treats a body as JSON only when the content type is JSON (or absent, or
text/plain) and the body starts with ``{``; anything else counts as "no body", and a
route that needs one answers with the generic 400. Bodies above ``max_json_body_size``
are refused with ``RequestLimitExceeded`` (400) before they are parsed.
"""

from __future__ import annotations

import json
from typing import Any

from starlette.requests import Request

from kiln import errors
from kiln.api.faults import bad_request


def _json_content_type(request: Request) -> bool:
    ctype = request.headers.get("content-type", "").split(";", 1)[0].strip().lower()
    return ctype in ("", "text/plain", "application/json", "json")


def _too_large(length: int, limit: int) -> errors.RequestLimitExceeded:
    return errors.RequestLimitExceeded(
        f"Request limit exceeded: JSON body size ({length} bytes) exceeds maximum allowed "
        f"size ({limit} bytes).")


async def read_json(request: Request, limit: int) -> dict[str, Any] | None:
    """The JSON object sent, or None when Heat would see no body."""
    if not _json_content_type(request):
        return None
    declared = request.headers.get("content-length")
    if declared is not None:
        try:
            declared_len = int(declared)
        except ValueError:
            raise bad_request("Invalid Content-Length header") from None
        if declared_len <= 0:
            return None
        if declared_len > limit:
            raise _too_large(declared_len, limit)
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise _too_large(size, limit)
        chunks.append(chunk)
    raw = b"".join(chunks)
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
