"""Hostile request fields against a real `kiln serve`: each is a 400 naming the field,
never a 500 (values nested past what later walks can recurse through, integers past
what the database drivers store)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.support.clients import wait_for_stack_status
from tests.support.server import KilnProcess

HOT = {"heat_template_version": "2018-08-31"}


@pytest.fixture
def api(kiln_server: KilnProcess) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=kiln_server.endpoint("demo"), timeout=60) as client:
        yield client


def _nested(depth: int) -> Any:
    value: Any = "x"
    for _ in range(depth):
        value = [value]
    return value


def _error(resp: httpx.Response) -> str:
    assert resp.status_code == 400, resp.text
    message: str = resp.json()["error"]["message"]
    return message


@pytest.mark.parametrize("value", [json.dumps({"a": _nested(900)}), {"a": _nested(900)},
                                   "[" * 100_000],
                         ids=["text-900-deep", "object-900-deep", "100k-brackets"])
def test_a_json_parameter_nested_too_deeply_is_a_400_naming_it(api: httpx.Client,
                                                               value: Any) -> None:
    template = {**HOT, "parameters": {"deep": {"type": "json"}}}
    resp = api.post("/stacks", json={"stack_name": "deep", "template": template,
                                     "parameters": {"deep": value}})
    assert _error(resp) == ("Parameter 'deep' is invalid: Value must be valid JSON: nested "
                            "more than 128 levels of maps or lists")


def test_a_string_parameter_of_brackets_is_only_a_string(api: httpx.Client, heat: Any,
                                                          ) -> None:
    template = {**HOT, "parameters": {"s": {"type": "string"}},
                "outputs": {"o": {"value": {"get_param": "s"}}}}
    resp = api.post("/stacks", json={"stack_name": "brackets", "template": template,
                                     "parameters": {"s": "[" * 100_000}})
    assert resp.status_code == 201, resp.text
    assert wait_for_stack_status(heat, "brackets").stack_status == "CREATE_COMPLETE"
    assert heat.stacks.output_show("brackets", "o")["output"]["output_value"] == \
        "[" * 100_000


@pytest.mark.parametrize("value", [10**30, 2**63, "99999999999999999999999"])
def test_timeout_mins_beyond_a_database_integer_is_a_400(api: httpx.Client,
                                                         value: Any) -> None:
    resp = api.post("/stacks", json={"stack_name": "late", "template": HOT,
                                     "timeout_mins": value})
    assert "'timeout_mins'" in _error(resp)
    assert "integers up to 2147483647" in _error(resp)


@pytest.mark.parametrize("path", ["/stacks", "/software_configs"])
def test_limit_beyond_a_database_integer_is_a_400(api: httpx.Client, path: str) -> None:
    resp = api.get(path, params={"limit": "99999999999999999999999"})
    assert "'limit'" in _error(resp)
    assert api.get(path, params={"limit": str(2**31 - 1)}).status_code == 200
