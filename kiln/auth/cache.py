"""A bounded, expiry-respecting cache of validated tokens.

A token is reused for at most ``ttl`` seconds after Keystone validated it, and never past
its own expiry; at most ``size`` entries are kept (the least recently used leave first).
Keys are SHA-256 digests, so the cache holds no usable token. Validations of the same
token that arrive together share one call to Keystone (``single``), so a burst of
requests with a new token costs Keystone one validation.
"""

from __future__ import annotations

import asyncio
import contextvars
import datetime
import hashlib
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from typing import Generic, TypeVar

T = TypeVar("T")

#: True while only what is already in memory may decide a credential (module docstring)
MEMORY_ONLY: contextvars.ContextVar[bool] = contextvars.ContextVar("kiln_auth_memory_only",
                                                                  default=False)


class NotInMemory(Exception):
    """Deciding this credential needs a remote call, and ``MEMORY_ONLY`` forbids one."""


def need_remote() -> None:
    """Called before any remote check of a credential: refuses it under ``MEMORY_ONLY``."""
    if MEMORY_ONLY.get():
        raise NotInMemory()


def token_key(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8", "surrogateescape")).hexdigest()


class TokenCache(Generic[T]):
    def __init__(self, ttl: float, size: int,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.ttl = ttl
        self.size = size
        self._clock = clock
        self._entries: OrderedDict[str, tuple[float, T]] = OrderedDict()
        self._pending: dict[str, asyncio.Future[T]] = {}

    def get(self, key: str) -> T | None:
        entry = self._entries.get(key)
        if entry is None:
            return None
        if entry[0] <= self._clock():
            del self._entries[key]
            return None
        self._entries.move_to_end(key)
        return entry[1]

    def put(self, key: str, value: T, expires_at: datetime.datetime | None) -> None:
        if self.ttl <= 0:
            return
        until = self._clock() + self.ttl
        if expires_at is not None:
            left = (expires_at - datetime.datetime.now(datetime.UTC)).total_seconds()
            until = min(until, self._clock() + left)
        if until <= self._clock():
            return
        self._entries[key] = (until, value)
        self._entries.move_to_end(key)
        while len(self._entries) > self.size:
            self._entries.popitem(last=False)

    async def single(self, key: str, fetch: Callable[[], Awaitable[T]]) -> T:
        """``fetch()`` once for all callers waiting on ``key`` at the same time (never
        under ``MEMORY_ONLY``: :class:`NotInMemory`)."""
        need_remote()
        pending = self._pending.get(key)
        if pending is not None:
            return await asyncio.shield(pending)
        future: asyncio.Future[T] = asyncio.get_running_loop().create_future()
        self._pending[key] = future
        try:
            value = await fetch()
        except BaseException as exc:
            future.set_exception(exc)
            future.exception()  # retrieved: a burst with no other waiter is not an error
            raise
        else:
            future.set_result(value)
            return value
        finally:
            del self._pending[key]

    def __len__(self) -> int:
        return len(self._entries)
