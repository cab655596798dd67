"""A short yaql expression is parsed once and its statement shared (issue 26: a chain of
1,000 links repeats one expression, parsed at validation, at the property check and at
each evaluation); a long one, or one that does not parse, is not kept."""

from __future__ import annotations

import pytest

from kiln.template import load_template, yaql_function
from kiln.template.yaql_function import DEFAULT_LIMITS, Yaql
from tests.unit.template.tplhelpers import IDENTITY, FakeResolver


def _resolve_output(expression: str, data: object) -> object:
    tpl = load_template({"heat_template_version": "2018-08-31", "outputs": {"o": {
        "value": {"yaql": {"expression": expression, "data": data}}}}})
    bound = tpl.bind(user_params={}, identity=IDENTITY, resolver=FakeResolver())
    return bound.resolve(bound.template.outputs["o"].value)


def test_a_repeated_expression_is_parsed_once_and_evaluates_each_time() -> None:
    expression = "int($.data) + 1 + 0 * 7919"  # unlike any other test's
    before = yaql_function._parsed.cache_info()
    assert [_resolve_output(expression, str(n)) for n in range(5)] == [1, 2, 3, 4, 5]
    after = yaql_function._parsed.cache_info()
    assert after.misses - before.misses == 1  # parsed once (load validates it too)
    assert after.hits - before.hits >= 4


def test_a_bad_expression_fails_every_time_and_is_not_kept() -> None:
    function = object.__new__(Yaql)
    size = yaql_function._parsed.cache_info().currsize
    for _ in range(2):
        with pytest.raises(ValueError, match="Bad expression"):
            function._parse("$.data +* 1", DEFAULT_LIMITS, ValueError)
    assert yaql_function._parsed.cache_info().currsize == size


def test_a_long_expression_is_parsed_without_being_kept() -> None:
    expression = "$.data + 1" + " " * yaql_function._CACHED_CHARS
    size = yaql_function._parsed.cache_info().currsize
    assert _resolve_output(expression, 41) == 42
    assert yaql_function._parsed.cache_info().currsize == size


def test_limits_are_part_of_the_key() -> None:
    expression = "$.data + 2 + 0 * 104729"
    first = yaql_function._parsed(expression, *DEFAULT_LIMITS)
    other = yaql_function._parsed(expression, DEFAULT_LIMITS[0] + 1, DEFAULT_LIMITS[1])
    assert first is yaql_function._parsed(expression, *DEFAULT_LIMITS)
    assert other is not first
