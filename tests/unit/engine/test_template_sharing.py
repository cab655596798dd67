"""Stored templates with the same body share one parse (issue 26): the children of
ResourceGroups with the same member definition are the same template again and again,
and parsing each one again (on create, and on delete once the cache had evicted them)
was what made deleting 100 groups of 1,000 cost more than 10x deleting 10."""

from __future__ import annotations

import datetime
from typing import Any

import pytest

import kiln.template.template as template_module
from kiln.engine.service import EngineService, RequestContext
from kiln.engine.store.template_cache import TemplateCache, content_key
from kiln.errors import KilnError
from kiln.template import load_template

from .support import create, hot


def _body(n: int, salt: str = "a") -> dict[str, Any]:
    return hot(
        {
            f"r{i}": {"type": "OS::Heat::RandomString", "properties": {"salt": salt}}
            for i in range(n)
        }
    )


def test_equal_bodies_share_one_template_counted_once() -> None:
    cache = TemplateCache(size=10, max_resources=5)
    first, second = load_template(_body(4)), load_template(_body(4))
    cache.put(1, first)
    cache.put(2, second)  # the same body: the first parse stands for both
    assert cache.cached(1) is first and cache.cached(2) is first
    cache.put(3, load_template(_body(1, "other")))  # 4 + 1 resources: nothing evicted
    assert 1 in cache and 2 in cache and 3 in cache
    cache.discard(1)
    assert cache.cached(2) is first  # still named by 2
    cache.discard(2)
    cache.put(4, load_template(_body(4, "new")))  # 4 + 1 again: 3 stays
    assert 3 in cache and 4 in cache
    cache.put(5, load_template(_body(4)))  # a parse something still holds is reused
    assert cache.cached(5) is first and 3 not in cache  # 4 + 4: the oldest went


def test_bodies_that_differ_are_never_shared() -> None:
    """Order, an integer key against its string and a date against its text give
    different templates; none of them may stand for another."""
    a = hot({"x": {"type": "OS::Heat::None"}, "y": {"type": "OS::Heat::None"}})
    b = hot({"y": {"type": "OS::Heat::None"}, "x": {"type": "OS::Heat::None"}})
    assert content_key(a, {}) != content_key(b, {})
    assert content_key(a, {}) != content_key(a, {"f.yaml": "x"})
    assert content_key(a, {"f.yaml": "x"}) != content_key(a, {"f.yaml": "y"})
    date = {"heat_template_version": datetime.date(2018, 8, 31)}
    text = {"heat_template_version": "datetime.date(2018, 8, 31)"}
    cache = TemplateCache()
    cache.put(1, load_template(a))
    cache.put(2, load_template(b))
    assert cache.cached(1) is not cache.cached(2)
    assert cache._same(content_key(date, {}), text, {}) is None
    numbered = {"heat_template_version": "2018-08-31", "parameters": {1: {"type": "string"}}}
    stringed = {"heat_template_version": "2018-08-31", "parameters": {"1": {"type": "string"}}}
    cache.put(3, load_template(stringed))
    assert content_key(numbered, {}) == content_key(stringed, {})  # the digest alone ...
    assert cache._same(content_key(numbered, {}), numbered, {}) is None  # ... is not enough


def test_a_shared_parse_still_checks_the_size() -> None:
    cache = TemplateCache()
    body = _body(50)
    cache.put(1, load_template(body))
    assert cache.load(body, {}, max_size=1 << 20) is cache.cached(1)
    with pytest.raises(KilnError, match="exceeds maximum allowed size"):
        cache.load(body, {}, max_size=100)


async def test_groups_of_the_same_members_parse_the_child_template_once(
    service: EngineService, ctx: RequestContext, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Three groups of three: one parse of the member template on create; none on the
    delete, with a cache bound (6 resources) below the sum of all templates (12)."""
    service.engine.template_cache.max_resources = 6
    member = {"type": "OS::Heat::RandomString", "properties": {"salt": "s"}}
    template = hot(
        {
            f"g{i}": {
                "type": "OS::Heat::ResourceGroup",
                "properties": {"count": 3, "resource_def": member},
            }
            for i in range(3)
        }
    )
    parsed: list[list[str]] = []
    real = template_module.build_template

    def counted(data: dict[str, Any], **kwargs: Any) -> Any:
        parsed.append(sorted(data.get("resources") or {}))
        return real(data, **kwargs)

    monkeypatch.setattr(template_module, "build_template", counted)
    stack = await create(service, ctx, "groups", template)
    assert stack["stack_status"] == "CREATE_COMPLETE", stack["stack_status_reason"]
    children = [p for p in parsed if p == ["0", "1", "2"]]
    assert len(children) == 1, parsed
    parsed.clear()
    await service.delete_stack(ctx, stack["stack_identity"])
    await service.wait_for_stack(stack["id"])
    shown = await service.show_stack(ctx, stack["stack_identity"])
    assert shown["stack_status"] == "DELETE_COMPLETE", shown["stack_status_reason"]
    assert [p for p in parsed if p == ["0", "1", "2"]] == []
