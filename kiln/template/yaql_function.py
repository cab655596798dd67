"""The ``yaql`` function, evaluated under Heat's iteration and memory limits.

yaql itself is imported on first use: few templates call it, and loading it costs every
process several megabytes of memory and tens of milliseconds of start-up.

The limits are per stack context (``ctx.yaql_limits``: ``[yaql] limit_iterators`` and
``memory_quota`` from the caller's configuration), so a template can never make the
engine build unbounded collections. Parsers are cached per limit pair because building
one is much slower than evaluating a small expression.
"""

from __future__ import annotations

import collections.abc  # noqa: F401  (yaql 3 uses collections.abc without importing it)
import logging
import threading
from functools import lru_cache
from typing import Any

from kiln.template import yaql_bounded, yaql_sandbox, yaql_tables
from kiln.template.function import Function, ResolveContext, ValidateContext

_log = logging.getLogger(__name__)


def _yaql_error() -> type[Exception]:
    from yaql.language import exceptions as yaql_exc

    return yaql_exc.YaqlException  # type: ignore[no-any-return]


@lru_cache(maxsize=8)
def _parser(limit_iterators: int, memory_quota: int) -> Any:
    # with the shipped LALR tables: computing them was most of a server's first yaql use
    return yaql_tables.create({"yaql.limitIterators": limit_iterators,
                               "yaql.memoryQuota": memory_quota})


DEFAULT_LIMITS = (200, 10000)

#: yaql's parser keeps its lexer's state on the parser object (ply), so two threads
#: parsing at once (a create validating on a worker thread while the loop resolves
#: another stack's outputs) corrupt each other's token stream ("unexpected end of
#: statement"): one parse at a time. A parse takes microseconds.
_parse_lock = threading.Lock()

#: Expressions up to this length keep their parsed statement (:func:`_parsed`).
_CACHED_CHARS = 1024


def _parse_now(expression: str, limit_iterators: int, memory_quota: int) -> Any:
    parser = _parser(limit_iterators, memory_quota)
    with _parse_lock:
        return parser(expression)


@lru_cache(maxsize=64)
def _parsed(expression: str, limit_iterators: int, memory_quota: int) -> Any:
    """The parsed statement of a short expression, shared. A template repeats the same
    expression in many resources (a chain of 1,000 links has one), and each is parsed
    at validation, at the create's property check and at its evaluation: parsing costs
    several times what evaluating a small expression does. A statement is an immutable
    tree that evaluates against a fresh context each time, so sharing it is safe; a
    failed parse raises and is not kept. Longer expressions are parsed every time, so
    that the cache stays small whatever a template sends: a parsed 1 KiB expression
    takes ~110 KB, so 64 of them at most ~7 MB."""
    return _parse_now(expression, limit_iterators, memory_quota)


_warm_lock = threading.Lock()
_warm_started = False


def warm(limits: tuple[int, int]) -> None:
    """Do now what a process's first yaql expression under ``limits`` would: import yaql,
    build the parser and the guarded context."""
    _parsed("int($.data) + 1", *limits)
    if yaql_bounded.in_process(limits):
        yaql_bounded.root_context()


def warm_in_background(limits: tuple[int, int]) -> None:
    """:func:`warm` on a thread of its own, once per process.

    The server calls this on its first stack request, not at start-up: a server that
    never sees yaql still starts in its CPU budget and pays nothing, and a stack that
    does use yaql soon after the first request does not pay for yaql's first use on its
    critical path (tens of milliseconds of CPU, several times that on a loaded machine).
    Every step takes the same locks as a request's first use, so a request arriving
    meanwhile waits for the step in progress instead of repeating it."""
    global _warm_started
    with _warm_lock:
        if _warm_started:
            return
        _warm_started = True
    threading.Thread(target=_warm_quietly, args=(limits,), name="kiln-yaql-warm",
                     daemon=True).start()


def _warm_quietly(limits: tuple[int, int]) -> None:
    try:
        warm(limits)
    except Exception:  # noqa: BLE001  (a request using yaql meets and reports the same)
        _log.debug("warming yaql failed", exc_info=True)


#: Seconds one evaluation may run (``[yaql] timeout``'s default).
DEFAULT_TIMEOUT = 5.0


def _plain(value: Any) -> Any:
    """yaql can return sets (``$.data.keys()``); Heat's API shows them as lists (its JSON
    encoder converts them), so resolve them to lists here, sorted when comparable so
    the result does not depend on hash order."""
    if isinstance(value, set | frozenset):
        items = [_plain(v) for v in value]
        try:
            return sorted(items)
        except TypeError:
            return items
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return value


class Yaql(Function):
    """``yaql: {expression: <str>, data: <any>}`` (2016-10-14)."""

    __slots__ = ()
    api_description = "A function for executing a yaql expression."

    def validate(self, ctx: ValidateContext) -> None:
        if not isinstance(self.args, dict):
            raise self.arg_error(f'Arguments to "{self.fn_name}" must be a map.')
        if "expression" not in self.args or set(self.args) - {"expression", "data"}:
            example = (f"{self.fn_name}:\n              expression: $.data.var1.sum()\n"
                       "              data:\n                var1: [3, 2, 1]")
            raise self.arg_error(repr(f'"{self.fn_name}" syntax should be {example}'))

    def validate_existing(self, ctx: ValidateContext) -> None:
        expression = self.args["expression"]
        if not isinstance(expression, Function):
            self._parse(expression, DEFAULT_LIMITS, self.arg_error)

    def _parse(self, expression: Any, limits: tuple[int, int], err: Any) -> Any:
        if not isinstance(expression, str):
            raise err(f'The "expression" argument to {self.fn_name} must contain a string.')
        try:
            if len(expression) <= _CACHED_CHARS:
                return _parsed(expression, *limits)
            return _parse_now(expression, *limits)
        except _yaql_error() as exc:
            raise err(f"Bad expression {exc}.") from None

    def resolve_arguments(self, ctx: ResolveContext) -> None:
        """Resolve the arguments as :meth:`result` does, in its order, without
        evaluating: a create's property check of a value that waits for resources
        (kiln.engine.actions.property_check) looks only for the failures resolving the
        arguments can raise; evaluating on data not there yet (a ``get_attr`` of a
        resource not created is None) can only fail otherwise, and costs as much as
        the real evaluation at the resource's create."""
        ctx.resolve(self.args["expression"])
        ctx.resolve(self.args.get("data", {}))

    def result(self, ctx: ResolveContext) -> Any:
        expression = ctx.resolve(self.args["expression"])
        limits = ctx.yaql_limits
        statement = self._parse(expression, limits, self.error)
        data = ctx.resolve(self.args.get("data", {}))
        if yaql_bounded.in_process(limits):
            try:
                return _plain(yaql_bounded.evaluate(statement, data))
            except yaql_bounded.Unbounded:
                pass  # beyond what the server's process may do: the sandbox evaluates it
            except _yaql_error() as exc:
                raise self.error(str(exc)) from None
            except MemoryError:
                raise self.error(f"Error evaluating {self.fn_name} expression: the "
                                 "expression needs too much memory") from None
            except Exception as exc:  # reported at the function, as Heat does  # noqa: BLE001
                raise self.error(f"Error evaluating {self.fn_name} expression: {exc}") \
                    from None
        timeout = ctx.yaql_timeout
        try:
            return _plain(yaql_sandbox.evaluate(expression, data, limits, timeout))
        except yaql_sandbox.Timeout:
            raise self.error(f"The {self.fn_name} expression did not finish within "
                             f"{timeout:g} seconds (yaql_timeout)") from None
        except yaql_sandbox.Failed as exc:
            if exc.kind == "yaql":
                raise self.error(str(exc)) from None
            raise self.error(f"Error evaluating {self.fn_name} expression: {exc}") from None
