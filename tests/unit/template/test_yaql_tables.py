"""yaql's parser is built from shipped LALR tables (issue 26: computing them was most of a
server's first yaql use), which must be the installed yaql's own; and a server's first
stack request makes yaql ready on a thread of its own, once."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from kiln.template import yaql_function, yaql_tables

EXPRESSIONS = [
    "int($.data) + 1", "$.a.where($ > 1).select($ * 2)", "let(x => 1) -> $x + 2",
    "[1, 2, {a => 3}]", "$.x[0].y or not $.z and 2 * 3 + 4 = 10", "-$.a mod 3 >= 1",
    "$.s.replace('a', 'b').toUpper()", "$.d.items().orderBy($[0]).take(2)", "#$a != null",
    "$.a in [1, 2]", "regex('a+').matches($)", "a := 1", "1 +", "[1, 2", "'unclosed",
]


def _parsed(engine: Any, expression: str) -> str:
    try:
        return str(engine(expression))
    except Exception as exc:  # noqa: BLE001  (the same refusal is expected from both)
        return f"{type(exc).__name__}: {exc}"


def test_the_shipped_tables_are_the_installed_yaqls() -> None:
    # after a yaql upgrade: python -m kiln.template.yaql_tables --write
    assert yaql_tables.main([]) == 0


def test_a_parser_from_the_shipped_tables_parses_as_yaqls_own() -> None:
    import yaql

    options = {"yaql.limitIterators": 200, "yaql.memoryQuota": 10000}
    shipped, own = yaql_tables.create(options), yaql.YaqlFactory().create(options)
    assert [_parsed(shipped, e) for e in EXPRESSIONS] == [_parsed(own, e) for e in EXPRESSIONS]


def test_the_shipped_tables_spare_the_lalr_computation(monkeypatch: pytest.MonkeyPatch) -> None:
    from yaql._ply import yacc

    def computed(*_: Any) -> None:
        raise AssertionError("LALR tables computed")

    monkeypatch.setattr(yacc.LRTable, "lr_parse_table", computed)
    assert _parsed(yaql_tables.create({}), "int($.data) + 1").startswith("#operator_+")


def test_another_grammar_gets_tables_computed(monkeypatch: pytest.MonkeyPatch) -> None:
    stale = {**(yaql_tables.shipped() or {}), "fingerprint": "another yaql"}
    monkeypatch.setattr(yaql_tables, "shipped", lambda: stale)
    engine = yaql_tables.create({})
    assert _parsed(engine, "$.a.where($ > 1)").startswith("#operator_.")


def test_the_first_stack_request_warms_yaql_once_on_a_thread(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(yaql_function, "_warm_started", False)
    limits = (211, 10007)  # a parser no other test builds
    before = yaql_function._parser.cache_info().misses
    started = threading.Event()
    real = yaql_function._warm_quietly

    def noted(limits: tuple[int, int]) -> None:
        started.set()
        real(limits)

    monkeypatch.setattr(yaql_function, "_warm_quietly", noted)
    yaql_function.warm_in_background(limits)
    yaql_function.warm_in_background(limits)
    assert started.wait(30)
    warming = [t for t in threading.enumerate() if t.name == "kiln-yaql-warm"]
    assert len(warming) <= 1
    for thread in warming:
        thread.join(30)
    assert yaql_function._parser.cache_info().misses - before == 1
    yaql_function._parser(*limits)  # built by the warming thread: a hit
    assert yaql_function._parser.cache_info().misses - before == 1
