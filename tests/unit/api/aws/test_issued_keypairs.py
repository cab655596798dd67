"""The no-auth credential lookup: answers from the keypair store, cached for a few
seconds (every signed request looks its key up), unknown keys included."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kiln.api.aws.keypairs import IssuedKeypairs


class Store:
    def __init__(self) -> None:
        self.rows: dict[str, dict[str, Any]] = {}
        self.asked: list[str] = []

    async def find(self, access_key: str) -> Mapping[str, Any] | None:
        self.asked.append(access_key)
        return self.rows.get(access_key)


async def test_lookup_maps_the_row_and_caches_until_ttl() -> None:
    store, now = Store(), [100.0]
    store.rows["AK"] = {"secret": "s", "project_id": "p", "user_id": "u",
                        "stack_id": "sid", "resource_name": "server"}
    lookup = IssuedKeypairs(store.find, ttl=5.0, clock=lambda: now[0])
    found = await lookup.lookup("AK")
    assert found is not None and found.secret == "s"
    assert (found.identity.project_id, found.identity.user_id, found.identity.stack_id,
            found.identity.resource_name) == ("p", "u", "sid", "server")
    del store.rows["AK"]
    assert await lookup.lookup("AK") == found          # cached
    now[0] += 6.0
    assert await lookup.lookup("AK") is None           # deleted keys stop working
    assert store.asked == ["AK", "AK"]


async def test_unknown_keys_are_cached_too_and_the_cache_is_bounded() -> None:
    store = Store()
    lookup = IssuedKeypairs(store.find, ttl=60.0, size=2)
    for key in ("A", "B", "A", "C", "A"):
        assert await lookup.lookup(key) is None
    # A, B asked; A cached; C evicts B (least recently used), A still cached
    assert store.asked == ["A", "B", "C"]


async def test_a_revocation_empties_the_cache_at_once() -> None:
    store, revoked = Store(), [0]
    store.rows["AK"] = {"secret": "s", "project_id": "p"}
    lookup = IssuedKeypairs(store.find, ttl=60.0, revocations=lambda: revoked[0])
    assert await lookup.lookup("AK") is not None
    assert await lookup.lookup("AK") is not None        # cached
    del store.rows["AK"]
    revoked[0] += 1                                     # this process deleted keypairs
    assert await lookup.lookup("AK") is None
    assert store.asked == ["AK", "AK"]


async def test_an_answer_read_across_a_revocation_is_not_kept() -> None:
    store, revoked = Store(), [0]
    store.rows["AK"] = {"secret": "s", "project_id": "p"}

    async def find_then_revoke(access_key: str) -> Mapping[str, Any] | None:
        found = await store.find(access_key)
        revoked[0] += 1        # a delete committed while the row was being read
        return found

    lookup = IssuedKeypairs(find_then_revoke, ttl=60.0, revocations=lambda: revoked[0])
    assert await lookup.lookup("AK") is not None
    await lookup.lookup("AK")
    assert store.asked == ["AK", "AK"]                  # asked again, not cached
