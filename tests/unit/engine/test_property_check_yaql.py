"""A create's property check of a ``yaql`` value that waits for a resource (issue 26).

The check before the stack is stored resolves such a value only to find the failures
that cannot depend on resources (a parameter not declared, a reference to nothing); it
resolves the yaql's arguments and no longer evaluates the expression on data that is
not there yet, which cost a second evaluation per link of a chain.
"""

from __future__ import annotations

from typing import Any

import pytest

from kiln.engine.service import EngineService, RequestContext
from kiln.errors import KilnError
from kiln.template import yaql_bounded
from tests.unit.engine.support import create, hot


def _chain(data: Any) -> dict[str, Any]:
    return hot({"a": {"type": "OS::Heat::Value", "properties": {"value": "41"}},
                "b": {"type": "OS::Heat::Value", "properties": {"value": {"yaql": {
                    "expression": "int($.data.x) + 1", "data": data}}}}},
               outputs={"b": {"value": {"get_attr": ["b", "value"]}}})


@pytest.fixture
def evaluations(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """The data of every in-process yaql evaluation, in order."""
    seen: list[Any] = []
    real = yaql_bounded.evaluate

    def counted(statement: Any, data: Any) -> Any:
        seen.append(data)
        return real(statement, data)

    monkeypatch.setattr(yaql_bounded, "evaluate", counted)
    return seen


async def test_a_waiting_yaql_is_evaluated_once_at_its_create(
        service: EngineService, ctx: RequestContext, evaluations: list[Any]) -> None:
    shown = await create(service, ctx, "yaqlwait",
                         _chain({"x": {"get_attr": ["a", "value"]}}))
    assert shown["stack_status"] == "CREATE_COMPLETE", shown["stack_status_reason"]
    assert [o["output_value"] for o in shown["outputs"]] == [42]
    assert evaluations == [{"x": "41"}]  # not also on {"x": None} before the store


async def test_a_missing_parameter_beside_the_wait_is_still_rejected(
        service: EngineService, ctx: RequestContext, evaluations: list[Any]) -> None:
    template = _chain({"x": {"get_attr": ["a", "value"]}, "y": {"get_param": "ghost"}})
    with pytest.raises(KilnError) as info:
        await service.create_stack(ctx, "yaqlghost", template, {}, {}, {})
    assert info.value.http_status == 400
    assert info.value.message == ("Property error: resources.b.properties.value: "
                                  "The Parameter (ghost) was not provided.")
    assert await service.list_stacks(ctx) == []
    assert evaluations == []


async def test_a_yaql_not_waiting_is_checked_by_evaluating_it(
        service: EngineService, ctx: RequestContext, evaluations: list[Any]) -> None:
    template = hot({"b": {"type": "OS::Heat::Value", "properties": {"value": {"yaql": {
        "expression": "int($.data.x) + 1", "data": {"x": "nope"}}}}}})
    with pytest.raises(KilnError) as info:
        await service.create_stack(ctx, "yaqlbad", template, {}, {}, {})
    assert info.value.http_status == 400
    assert evaluations == [{"x": "nope"}]
