"""Stack list and show responses are reused while no stack changed, and never after.

"Changed" includes changes made by another process sharing the database (``kiln api``
next to ``kiln engine``, or two ``kiln serve``): those are made here by a second
EngineService on the same SQLite file, which this app's process learns of only
through the database.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from kiln.api.app import create_app
from kiln.api.response_cache import ResponseCache, cached_json
from kiln.conf import CONF
from kiln.engine.service import EngineService, RequestContext

TEMPLATE = {"heat_template_version": "2018-08-31",
            "resources": {"x": {"type": "OS::Heat::None"}},
            "outputs": {"ref": {"value": {"get_resource": "x"}}}}
CTX = RequestContext(project_id="demo", is_admin=False, roles=("member",),
                     username="demo", user_id="demo-user")


@pytest.fixture
async def services(sqlite_url: str) -> AsyncIterator[tuple[EngineService, EngineService]]:
    served, other = EngineService(db_url=sqlite_url), EngineService(db_url=sqlite_url)
    await served.start()
    await other.start()
    yield served, other
    await other.stop()
    await served.stop()


@pytest.fixture
async def client(services: tuple[EngineService, EngineService]
                 ) -> AsyncIterator[httpx.AsyncClient]:
    # the names these tests address the app by ("kiln", "other"): noauth mode's Host
    # check (kiln.api.host_guard) answers only names it was given
    CONF.set_override("allowed_hosts", ["kiln", "other"], "kiln_api")
    try:
        transport = httpx.ASGITransport(app=create_app(services[0], CONF))
        async with httpx.AsyncClient(transport=transport, base_url="http://kiln") as c:
            yield c
    finally:
        CONF.clear_override("allowed_hosts", "kiln_api")


async def _statuses(client: httpx.AsyncClient) -> dict[str, str]:
    resp = await client.get("/v1/demo/stacks")
    assert resp.status_code == 200
    return {s["stack_name"]: s["stack_status"] for s in resp.json()["stacks"]}


async def test_list_and_show_see_another_process_create_update_and_delete(
        services: tuple[EngineService, EngineService], client: httpx.AsyncClient) -> None:
    _, other = services
    assert await _statuses(client) == {}
    assert await _statuses(client) == {}           # now answered from the cache

    ident = await other.create_stack(CTX, "elsewhere", TEMPLATE, {}, {}, {"tags": "a"})
    await other.wait_for_stack(ident["stack_id"])
    assert await _statuses(client) == {"elsewhere": "CREATE_COMPLETE"}
    url = f"/v1/demo/stacks/elsewhere/{ident['stack_id']}"
    shown = (await client.get(url)).json()["stack"]
    assert shown["tags"] == ["a"]
    assert (await client.get(url)).json()["stack"] == shown   # cached, identical

    await other.update_stack(CTX, ident, TEMPLATE, {}, {}, {"tags": "b"})
    await other.wait_for_stack(ident["stack_id"])
    after = (await client.get(url)).json()["stack"]
    assert (after["stack_status"], after["tags"]) == ("UPDATE_COMPLETE", ["b"])
    assert await _statuses(client) == {"elsewhere": "UPDATE_COMPLETE"}

    await other.delete_stack(CTX, ident)
    await other.wait_for_stack(ident["stack_id"])
    assert await _statuses(client) == {}
    gone = (await client.get(url)).json()["stack"]
    assert gone["stack_status"] == "DELETE_COMPLETE"


async def test_a_cached_response_is_not_served_for_other_queries_or_hosts(
        services: tuple[EngineService, EngineService], client: httpx.AsyncClient) -> None:
    served, _ = services
    for name in ("one", "two"):
        ident = await served.create_stack(CTX, name, TEMPLATE, {}, {}, {})
        await served.wait_for_stack(ident["stack_id"])
    everything = (await client.get("/v1/demo/stacks")).json()["stacks"]
    limited = (await client.get("/v1/demo/stacks?limit=1")).json()["stacks"]
    assert len(everything) == 2 and len(limited) == 1
    other_host = (await client.get("http://other:9000/v1/demo/stacks")).json()["stacks"]
    assert other_host[0]["links"][0]["href"].startswith("http://other:9000/v1/")
    assert (await client.get("/v1/elsewhere/stacks")).json()["stacks"] == []


async def test_a_missing_stack_is_not_remembered_as_missing(
        services: tuple[EngineService, EngineService], client: httpx.AsyncClient) -> None:
    _, other = services
    resp = await client.get("/v1/demo/stacks/later")
    assert resp.status_code == 404
    await other.create_stack(CTX, "later", TEMPLATE, {}, {}, {})
    assert (await client.get("/v1/demo/stacks/later")).status_code == 302


def test_a_newer_change_number_empties_the_cache_and_older_bodies_are_refused() -> None:
    cache = ResponseCache()
    cache.put(5, "list", b"v5")
    assert cache.get(5, "list") == b"v5"
    assert cache.get(6, "list") is None        # a newer number never gets an older body
    cache.put(6, "show", b"s6")
    assert cache.get(6, "list") is None and len(cache) == 1   # the v5 body is gone
    cache.put(5, "list", b"late")              # built under 5, finished after 6 was seen
    assert cache.get(6, "list") is None and cache.get(5, "list") is None
    cache.put(None, "x", b"unknown")           # no number: nothing may be kept
    assert cache.get(None, "x") is None


def test_the_cache_keeps_to_its_byte_budget_dropping_the_least_recently_used() -> None:
    cache = ResponseCache(max_bytes=10)
    cache.put(1, "a", b"aaaa")
    cache.put(1, "b", b"bbbb")
    assert cache.get(1, "a") == b"aaaa"        # "a" is now the most recently used
    cache.put(1, "c", b"cccc")
    assert cache.get(1, "b") is None
    assert (cache.get(1, "a"), cache.get(1, "c")) == (b"aaaa", b"cccc")


async def test_concurrent_misses_share_one_build() -> None:
    cache = ResponseCache()
    builds = 0
    release = asyncio.Event()

    async def build() -> Any:
        nonlocal builds
        builds += 1
        await release.wait()
        return {"n": builds}

    def dumps(value: Any) -> bytes:
        return str(value).encode()

    waiting = [asyncio.create_task(cached_json(cache, 3, "k", build, dumps))
               for _ in range(5)]
    await asyncio.sleep(0)  # let every request reach the cache
    release.set()
    bodies = {(await t).body for t in waiting}
    assert builds == 1 and bodies == {b"{'n': 1}"}
    # a request that saw a newer number does not take the older build's result
    release.clear()
    newer = asyncio.create_task(cached_json(cache, 4, "k", build, dumps))
    await asyncio.sleep(0)
    release.set()
    assert (await newer).body == b"{'n': 2}"
