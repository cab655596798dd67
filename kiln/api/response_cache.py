"""Reuse of serialized stack list and show responses while no stack has changed.

A list of 500 stacks costs milliseconds of CPU to read, format and serialize, and clients
poll it (``openstack stack list``, dashboards, ``stack show`` in ``--wait`` loops). The
engine exposes a change number that grows with every change to any stack row or tag, in
whatever process makes it (it lives in the database). A body built after reading number N
is reused only while the number is still N; the first request that sees a newer number
empties the cache. Reading the number before building the body is what makes this safe:
the body then reflects at least every change up to N, and a body built from even newer
rows is only ever served to requests that also saw N, never after the number moved on.
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Hashable
from typing import Any

from starlette.responses import Response

#: Bodies kept at most (bytes); the oldest used go first.
MAX_BYTES = 16 * 2**20


class ResponseCache:
    """Bodies by request key, all built under one change number."""

    def __init__(self, max_bytes: int = MAX_BYTES) -> None:
        self.max_bytes = max_bytes
        self.generation: int | None = None
        self._bodies: OrderedDict[Hashable, bytes] = OrderedDict()
        self._size = 0
        #: Bodies being built: key -> (change number they are built under, result).
        self.building: dict[Hashable, tuple[int, asyncio.Future[bytes | Response]]] = {}

    def get(self, generation: int | None, key: Hashable) -> bytes | None:
        if generation is None or generation != self.generation:
            return None
        body = self._bodies.get(key)
        if body is not None:
            self._bodies.move_to_end(key)
        return body

    def put(self, generation: int | None, key: Hashable, body: bytes) -> None:
        if generation is None or len(body) > self.max_bytes:
            return
        if self.generation is None or generation > self.generation:
            self._bodies.clear()
            self._size = 0
            self.generation = generation
        elif generation < self.generation:
            return  # built before a change this cache has already seen
        old = self._bodies.pop(key, None)
        if old is not None:
            self._size -= len(old)
        self._bodies[key] = body
        self._size += len(body)
        while self._size > self.max_bytes:
            _, dropped = self._bodies.popitem(last=False)
            self._size -= len(dropped)

    def __len__(self) -> int:
        return len(self._bodies)


async def cached_json(cache: ResponseCache, generation: int | None, key: Hashable,
                      build: Callable[[], Awaitable[Any]],
                      dumps: Callable[[Any], bytes]) -> Response:
    """The 200 JSON response for ``key``: reused if built under ``generation``, else
    built (``build`` returns the JSON-able body, or a Response that is passed through
    uncached) and kept. Concurrent misses for one key share one build when it runs
    under the same or a newer change number (after a change, twenty polling clients
    would otherwise all build the same list)."""
    body = cache.get(generation, key)
    if body is not None:
        return Response(body, media_type="application/json")
    if generation is None:
        return _response(await _build(build, dumps))
    running = cache.building.get(key)
    if running is not None and running[0] >= generation:
        return _response(await asyncio.shield(running[1]))
    fut: asyncio.Future[bytes | Response] = asyncio.get_running_loop().create_future()
    cache.building[key] = (generation, fut)
    try:
        result = await _build(build, dumps)
    except BaseException as exc:
        fut.set_exception(exc)
        fut.exception()  # retrieved: joiners re-raise it, nobody else must see it
        raise
    else:
        fut.set_result(result)
        if isinstance(result, bytes):
            cache.put(generation, key, result)
    finally:
        if cache.building.get(key, (0, None))[1] is fut:
            del cache.building[key]
    return _response(result)


async def _build(build: Callable[[], Awaitable[Any]],
                 dumps: Callable[[Any], bytes]) -> bytes | Response:
    result = await build()
    return result if isinstance(result, Response) else dumps(result)


def _response(result: bytes | Response) -> Response:
    # a passed-through Response is a one-off (not cached), so a joiner gets a copy
    if isinstance(result, Response):
        return Response(result.body, status_code=result.status_code,
                        headers={k: v for k, v in result.headers.items()
                                 if k.lower() != "content-length"},
                        media_type=result.media_type)
    return Response(result, media_type="application/json")
