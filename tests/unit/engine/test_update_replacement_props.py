"""A replacement's create uses the properties the update's plan resolved (issue 26):
resolving and validating the new definition a second time was a third of the plan's
cost in a replace-all update, which is meant to cost about what a create does."""

from __future__ import annotations

from typing import Any

import pytest

from kiln.engine.service import EngineService, RequestContext
from kiln.resources.heat.random_string import RandomString

from .support import create, hot, resources


def _salted(n: int, salt: str) -> dict[str, Any]:
    return hot(
        {
            f"r{i}": {"type": "OS::Heat::RandomString", "properties": {"salt": salt, "length": 8}}
            for i in range(n)
        }
    )


async def test_a_replacement_resolves_its_new_properties_once(
    service: EngineService, ctx: RequestContext, monkeypatch: pytest.MonkeyPatch
) -> None:
    stack = await create(service, ctx, "replaced", _salted(5, "a"))
    made: list[Any] = []
    real = RandomString.make_properties.__func__  # type: ignore[attr-defined]

    def counted(cls: type[RandomString], name: str, resolved: Any) -> Any:
        made.append((name, dict(resolved or {})))
        return real(cls, name, resolved)

    monkeypatch.setattr(RandomString, "make_properties", classmethod(counted))
    ident = stack["stack_identity"]
    await service.update_stack(ctx, ident, _salted(5, "b"), {}, {}, {})
    await service.wait_for_stack(stack["id"])
    shown = await service.show_stack(ctx, ident)
    assert shown["stack_status"] == "UPDATE_COMPLETE", shown["stack_status_reason"]
    new = [name for name, props in made if props.get("salt") == "b"]
    # once when the request is checked, once by the plan, never again by the create
    assert sorted(new) == sorted([f"r{i}" for i in range(5)] * 2), made
    assert await resources(service, ctx, ident) == {f"r{i}": "CREATE_COMPLETE" for i in range(5)}


async def test_an_update_compares_stored_properties_without_validating_them(
    service: EngineService, ctx: RequestContext, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The plan compares each old resource's stored values in their stored form: a
    replace-all update validated every old resource's values only to find them changed."""
    stack = await create(service, ctx, "compared", _salted(5, "a"))
    made: list[Any] = []
    real = RandomString.make_properties.__func__  # type: ignore[attr-defined]

    def counted(cls: type[RandomString], name: str, resolved: Any) -> Any:
        made.append((name, dict(resolved or {})))
        return real(cls, name, resolved)

    ident = stack["stack_identity"]
    monkeypatch.setattr(RandomString, "make_properties", classmethod(counted))
    await service.update_stack(ctx, ident, _salted(5, "b"), {}, {}, {})
    await service.wait_for_stack(stack["id"])
    shown = await service.show_stack(ctx, ident)
    assert shown["stack_status"] == "UPDATE_COMPLETE", shown["stack_status_reason"]
    assert [name for name, props in made if props.get("salt") == "a"] == [], made
    # and an unchanged template still changes nothing
    await service.update_stack(ctx, ident, _salted(5, "b"), {}, {}, {})
    await service.wait_for_stack(stack["id"])
    assert await resources(service, ctx, ident) == {f"r{i}": "CREATE_COMPLETE" for i in range(5)}
