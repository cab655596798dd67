"""The validated-token cache: bounded, never past a token's expiry, one fetch per burst."""

from __future__ import annotations

import asyncio
import datetime

from kiln.auth.cache import TokenCache, token_key


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def soon(seconds: float) -> datetime.datetime:
    return datetime.datetime.now(datetime.UTC) + datetime.timedelta(seconds=seconds)


def test_an_entry_lives_for_the_cache_time_at_most() -> None:
    clock = Clock()
    cache: TokenCache[str] = TokenCache(ttl=300, size=10, clock=clock)
    cache.put("k", "v", soon(3600))
    clock.now += 299
    assert cache.get("k") == "v"
    clock.now += 2
    assert cache.get("k") is None


def test_an_entry_never_outlives_its_token() -> None:
    clock = Clock()
    cache: TokenCache[str] = TokenCache(ttl=300, size=10, clock=clock)
    cache.put("k", "v", soon(60))
    clock.now += 61
    assert cache.get("k") is None
    cache.put("gone", "v", soon(-1))
    assert cache.get("gone") is None


def test_the_least_recently_used_leave_first() -> None:
    cache: TokenCache[int] = TokenCache(ttl=300, size=2)
    cache.put("a", 1, None)
    cache.put("b", 2, None)
    assert cache.get("a") == 1
    cache.put("c", 3, None)
    assert (cache.get("a"), cache.get("b"), cache.get("c")) == (1, None, 3)
    assert len(cache) == 2


def test_a_disabled_cache_keeps_nothing() -> None:
    cache: TokenCache[int] = TokenCache(ttl=-1, size=2)
    cache.put("a", 1, None)
    assert cache.get("a") is None


async def test_a_burst_shares_one_fetch() -> None:
    cache: TokenCache[str] = TokenCache(ttl=300, size=10)
    calls = 0
    release = asyncio.Event()

    async def fetch() -> str:
        nonlocal calls
        calls += 1
        await release.wait()
        return "caller"

    waiters = [asyncio.create_task(cache.single("k", fetch)) for _ in range(20)]
    await asyncio.sleep(0)
    release.set()
    assert await asyncio.gather(*waiters) == ["caller"] * 20
    assert calls == 1


def test_keys_are_digests_not_tokens() -> None:
    assert "secret-token" not in token_key("secret-token")
    assert token_key("a") != token_key("b")
