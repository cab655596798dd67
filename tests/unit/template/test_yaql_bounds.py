"""The in-process bounds on yaql (kiln.template.yaql_bounded, yaql_regex) and the sandbox
process that evaluates what passes them (kiln.template.yaql_sandbox).

Each bound has a case that stops the in-process evaluation for its own reason: without
the bound, the expression completes in-process (or raises a yaql error) and the case
fails. The ``yaql`` function then gives Heat's answer from the sandbox."""

from __future__ import annotations

import re
import time
from typing import Any

import pytest

from kiln.template import yaql_bounded, yaql_sandbox
from kiln.template.yaql_function import _parser
from tests.unit.template.tplhelpers import bind, hot

#: No memory quota, so yaql's own check cannot stand in for Kiln's.
UNLIMITED = (200, -1)


def evaluate(expression: str, data: Any = None, limits: tuple[int, int] = UNLIMITED) -> Any:
    return yaql_bounded.evaluate(_parser(*limits)(expression), data)


def output(expression: str, data: Any = None,
           limits: tuple[int, int] = (200, 10000)) -> Any:
    """The yaql function's result in a template (in-process, or from the sandbox)."""
    bound = bind(hot(outputs={"o": {"value": {"yaql": {"expression": expression,
                                                         "data": data}}}}),
                 yaql_limits=limits)
    out = bound.output("o")
    return out.error if out.error else out.value


@pytest.mark.parametrize(("expression", "data", "reason"), [
    # results of multiplication, pow, shifts over MAX_INT_BITS; round building 10**3000
    ("pow(2, 4000) * pow(2, 4000) * pow(2, 4000)", None, "integer"),
    ("pow(7, 5000)", None, "integer"),
    ("pow(3, pow(2, 2000), pow(2, 2000) + 1)", None, "integer"),
    ("shiftBitsLeft(1, 10000)", None, "integer"),
    ("round(5, -3000)", None, "integer"),
    # repetition and replacement measured before they are built: a terabyte would be a
    # MemoryError (or worse) without the check
    ("'ab' * 1000000000000", None, "memory"),
    ("1000000000000 * 'ab'", None, "memory"),
    ("([1, 2, 3] * 1000000000000).len()", None, "memory"),
    ("(1000000000000 * [1, 2, 3]).len()", None, "memory"),
    ("let(n => 'b' * 1000000) -> $.data.replace('a', $n).len()", "a" * 1_000_000, "memory"),
    ("let(n => 'b' * 1000000) -> $.data.replace({a => $n}).len()", "a" * 1_000_000,
     "memory"),
    # split pieces and characters are new strings
    ("let(d => $.data) -> range(150).select(len($d.split(','))).sum()",
     ",".join(["x"] * 50_000), "memory"),
    ("let(d => $.data) -> range(150).select(len($d.rightSplit(','))).sum()",
     ",".join(["x"] * 50_000), "memory"),
    ("$.data.toCharArray().len()", "x" * 1_000_000, "memory"),
    # many results, each small enough: the total is charged
    ("range(200).select('x' * 200000).toList().len()", None, "memory"),
    ("let(d => 'x' * 100000) -> range(200).select($d + $d).toList().len()", None, "memory"),
    # nesting within limit_iterators: 8 million calls stop at the clock
    ("range(200).select(range(200).select(range(200).sum()).sum()).sum()", None, "time"),
    # regex RE2 cannot run as Python does
    ("regex('(a+)+\\\\1$').matches($.data)", "a" * 40 + "b", "regex"),
    ("$.data =~ '(?=a)a'", "a", "regex"),
    ("regex('\\\\w+').matches($.data)", "é", "regex"),
    ("regex('a$').matches($.data)", "a\n", "regex"),
    ("regex('a\\\\sb').matches($.data)", "a\x0bb", "regex"),
    ("regex('a{,2}b').matches($.data)", "aab", "regex"),
    ("regex('a*').replace($.data, '-')", "bab", "regex"),
    ("regex('(a)').replace($.data, '\\\\1\\\\1')", "bab", "regex"),
])
def test_each_bound_hands_the_expression_to_the_sandbox(
        expression: str, data: Any, reason: str, monkeypatch: pytest.MonkeyPatch) -> None:
    if reason != "time":  # a slow machine's clock must not stand in for another bound
        monkeypatch.setattr(yaql_bounded, "IN_PROCESS_SECONDS", 60.0)
    with pytest.raises(yaql_bounded.Unbounded) as caught:
        evaluate(expression, data)
    assert str(caught.value) == reason


def test_deep_recursion_is_handed_to_the_sandbox() -> None:
    with pytest.raises(yaql_bounded.Unbounded) as caught:
        evaluate("def(f, f($)) -> f(1)")
    assert str(caught.value) == "recursion"


@pytest.mark.timeout(10)
def test_a_backtracking_pattern_is_answered_in_process_by_re2() -> None:
    # Python's re takes hours on this; RE2 answers at once, as Python would
    started = time.monotonic()
    assert evaluate("regex('(a+)+$').matches($.data)", "a" * 5000 + "b") is False
    assert evaluate("$.data =~ '(x+x+)+y'", "x" * 5000) is False
    assert time.monotonic() - started < 1


REGEX_CASES = [
    ("regex('(\\\\w+)-(\\\\d+)').search($.data, $2.value + $1.value)", "ab-12 cd-3"),
    ("regex('(\\\\w+)-(\\\\d+)').searchAll($.data, $1.value)", "ab-12 cd-3"),
    ("regex('\\\\d+').searchAll($.data)", "a1b22c333"),
    ("regex('[,;] *').split($.data)", "a, b;c ,d"),
    ("regex('([,;])').split($.data)", "a,b;c"),
    ("regex('[,;]').split($.data, 1)", "a,b;c"),
    ("'a,b;c'.split(regex('[,;]'))", None),
    ("regex('o+').replace($.data, '0')", "foo boo"),
    ("regex('o').replace($.data, '0', 1)", "foo boo"),
    ("'foo'.replace(regex('o'), 'a')", None),
    ("regex('(o+)').replaceBy($.data, str($2.value.len()))", "foo boooo"),
    ("'foo'.replaceBy(regex('o'), 'x')", None),
    ("regex('^B', ignoreCase => true, multiLine => true).searchAll($.data)", "a\nb\nB"),
    ("regex('a.b', dotAll => true).matches($.data)", "a\nb"),
    ("$.data =~ '^[a-z]+[0-9]*$'", "server12"),
    ("$.data !~ '^[a-z]+[0-9]*$'", "server-12"),
    ("$.data.matches('c.t')", "a cat"),
    ("regex('c.t').matches($.data)", "a cut"),
    ("regex('(?P<name>x)').search($.data)", "yxy"),
    ("regex('\\\\bone\\\\b').searchAll($.data)", "one, bone, one"),
]


@pytest.mark.parametrize(("expression", "data"), REGEX_CASES)
def test_re2_answers_as_pythons_re(expression: str, data: Any) -> None:
    # the sandbox evaluates with yaql's own functions on Python's re: Heat's answer
    expected = yaql_sandbox.evaluate(expression, data, UNLIMITED, timeout=30)
    assert evaluate(expression, data) == expected


@pytest.mark.parametrize(("expression", "data", "expected"), [
    ("pow(7, 5000) > 1", None, True),
    ("shiftBitsLeft(1, 10000) > 1", None, True),
    ("regex('(a)\\\\1').matches($.data)", "xaa", True),
    ("regex('(a)').replace($.data, '<\\\\1>')", "bab", "b<a>b"),
    ("regex('a*').replace($.data, '-')", "bab", re.sub("a*", "-", "bab")),
    ("regex('\\\\w+').search($.data)", "—éa—", "éa"),
    # past the in-process clock: the sandbox finishes it
    ("range(10).select(range(10).select(range(20).sum()).sum()).sum()", None,
     10 * 10 * 190),
])
def test_the_sandbox_gives_heats_answer_beyond_the_bounds(expression: str, data: Any,
                                                          expected: Any) -> None:
    assert output(expression, data) == expected


def test_yaqls_own_limits_still_apply_in_process() -> None:
    assert output("range(1000).toList()") == "Collection length exceeds 200 elements"
    assert output("'a' * 100000") == "Expression consumed too much memory"


def test_the_common_expression_stays_in_process(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("the sandbox was used")

    monkeypatch.setattr(yaql_sandbox, "evaluate", refuse)
    assert output("int($.data) + 1", "41") == 42
    assert output("$.data.where($.size > 1).select($.name)",
                  [{"name": "a", "size": 2}, {"name": "b", "size": 1}]) == ["a"]
    # $1 is the whole match, $2 the first group
    assert output("regex('^(\\\\w+)-\\\\d+$').search($.data, $2.value)", "web-01") == "web"


def test_unlimited_iterators_always_use_the_sandbox() -> None:
    assert yaql_bounded.in_process((200, 10000))
    assert not yaql_bounded.in_process((-1, 10000))
    assert not yaql_bounded.in_process((0, 10000))
    assert not yaql_bounded.in_process((yaql_bounded.MAX_ITERATORS + 1, 10000))


def test_the_sandbox_process_is_kept_and_replaced_after_a_timeout() -> None:
    yaql_sandbox.close()
    assert yaql_sandbox.evaluate("1 + 1", None, UNLIMITED, timeout=30) == 2
    [first] = yaql_sandbox.workers()
    assert yaql_sandbox.evaluate("2 + 2", None, UNLIMITED, timeout=30) == 4
    assert yaql_sandbox.workers() == [first]   # one process, many evaluations
    with pytest.raises(yaql_sandbox.Timeout):
        yaql_sandbox.evaluate("regex('(a+)+\\\\1$').matches($.data)", "a" * 40 + "b",
                              UNLIMITED, timeout=0.5)
    assert first not in yaql_sandbox.workers()  # killed at the deadline
    assert yaql_sandbox.evaluate("3 + 3", None, UNLIMITED, timeout=30) == 6


def test_the_sandbox_process_cannot_take_the_memory() -> None:
    with pytest.raises(yaql_sandbox.Failed) as caught:
        yaql_sandbox.evaluate("('a' * 2000000000).len()", None, UNLIMITED, timeout=30)
    assert caught.value.kind == "memory"
    assert yaql_sandbox.evaluate("1", None, UNLIMITED, timeout=30) == 1


def test_the_sandbox_process_dies_with_the_server(tmp_path: Any) -> None:
    # a "server" that starts a worker busy on a backtracking match, then is SIGKILLed
    # (no chance to clean up): the kernel kills the worker too
    import os
    import signal
    import subprocess
    import sys

    import psutil

    script = tmp_path / "server.py"
    script.write_text(
        "import sys, threading\n"
        "from kiln.template import yaql_sandbox\n"
        "threading.Thread(target=lambda: yaql_sandbox.evaluate(\n"
        "    \"regex('(a+)+\\\\\\\\1$').matches($.data)\", 'a' * 40 + 'b', (200, -1), 600),\n"
        "    daemon=True).start()\n"
        "print('started', flush=True)\n"
        "threading.Event().wait()\n")
    server = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE,
                              env={**os.environ, "PYTHONPATH": os.getcwd()})
    try:
        assert server.stdout is not None
        assert server.stdout.readline() == b"started\n"
        deadline = time.monotonic() + 60
        while not (workers := psutil.Process(server.pid).children()):
            assert time.monotonic() < deadline, "no worker was started"
            time.sleep(0.05)  # polling for the worker process to appear
        worker = workers[0]
        busy_until = time.monotonic() + 60
        while worker.cpu_times().user < 0.5:  # started on the match (past yaql's import)
            assert time.monotonic() < busy_until
            time.sleep(0.05)  # polling the worker's CPU time
    finally:
        server.send_signal(signal.SIGKILL)
        server.wait()
        if server.stdout is not None:
            server.stdout.close()
    gone, alive = psutil.wait_procs([worker], timeout=10)
    assert worker in gone and not alive
