"""yaql evaluated in the server's own process, within bounds that no expression can pass.

yaql's own limits (``[yaql] limit_iterators`` and ``memory_quota``, which Heat sets the
same way) bound each collection an expression builds, not the time or the total memory
it takes. Evaluating in-process costs microseconds (a child process cost ~20 ms), so
the evaluation runs here under three kinds of bounds, and anything that would pass one
raises :class:`Unbounded`; the caller then evaluates the expression afresh in the
sandbox process (:mod:`kiln.template.yaql_sandbox`), with Heat's exact semantics, killed
at ``[yaql] timeout`` and with its memory capped. Expressions are pure, so evaluating
one again gives what the first attempt would have.

1. Every yaql call passes through :class:`_Context`: past ``IN_PROCESS_SECONDS`` of
   the thread's CPU time, or once the values the calls returned add up to ``IN_PROCESS_BYTES``,
   the evaluation stops. Between two calls only one standard-library function runs, so
   this bounds time and memory when each function is itself bounded:
2. Collections are bounded by ``limit_iterators`` (in-process only when it is between 1
   and ``MAX_ITERATORS``), and the functions whose cost does not follow from their
   inputs' sizes are checked before they run (``GUARDS``): multiplying, raising to a
   power and shifting big integers (results over ``MAX_INT_BITS``), rounding an integer
   to a far negative digit, repeating strings and lists, replacing in and splitting
   strings;
3. the regex functions run on RE2 (:mod:`kiln.template.yaql_regex`), which matches in
   linear time.
"""

from __future__ import annotations

import collections.abc  # noqa: F401  (yaql 3 uses collections.abc without importing it)
import sys
import threading
import time
from typing import Any

#: CPU seconds (of the evaluating thread: a loaded machine does not shorten them) an
#: evaluation may spend in-process before it is handed to the sandbox.
IN_PROCESS_SECONDS = 0.1
#: Bytes the values one evaluation's calls return may add up to in-process.
IN_PROCESS_BYTES = 32 * 1024 * 1024
#: Largest integer (in bits) multiplication, pow and shifts may build in-process.
MAX_INT_BITS = 8192
#: In-process only when ``limit_iterators`` is in 1..MAX_ITERATORS (collections bounded).
MAX_ITERATORS = 10_000

#: Calls whose results are not new values (data lookups, attribute access): not charged.
_FREE = frozenset({"#get_context_data", "#operator_."})


class Unbounded(BaseException):
    """The evaluation left the in-process bounds; evaluate it in the sandbox instead.

    A BaseException so that yaql's ``except Exception`` handlers let it through."""


class _Budget:
    __slots__ = ("deadline", "left")

    def __init__(self) -> None:
        self.deadline = time.thread_time() + IN_PROCESS_SECONDS
        self.left = IN_PROCESS_BYTES

    def charge(self, nbytes: int) -> None:
        self.left -= nbytes
        if self.left < 0:
            raise Unbounded("memory")


_local = threading.local()


def _budget() -> _Budget:
    budget: _Budget = _local.budget
    return budget


def charge(nbytes: int) -> None:
    """Count ``nbytes`` about to be built against this evaluation's budget."""
    _budget().charge(nbytes)


def _make_context_class() -> type:
    from yaql.language import contexts, utils

    class _Context(contexts.Context):  # type: ignore[misc]
        """Checks the clock before and charges the result after every yaql call."""

        def __call__(self, name: str, engine: Any, receiver: Any = utils.NO_VALUE,
                     data_context: Any = None, use_convention: bool = False,
                     function_filter: Any = None) -> Any:
            call = super().__call__(name, engine, receiver, data_context, use_convention,
                                    function_filter)
            free = name in _FREE

            def bounded(*args: Any, **kwargs: Any) -> Any:
                budget: _Budget = _local.budget
                if time.thread_time() > budget.deadline:
                    raise Unbounded("time")
                result = call(*args, **kwargs)
                if not free:
                    budget.charge(sys.getsizeof(result))
                return result
            return bounded

    return _Context


def _bits(value: Any) -> int:
    return value.bit_length() if isinstance(value, int) else 0


def _int_guards(std_math: Any) -> dict[Any, Any]:
    def multiplication(left: Any, right: Any) -> Any:
        if _bits(left) + _bits(right) > MAX_INT_BITS:
            raise Unbounded("integer")
        return std_math.multiplication(left, right)

    def pow_(a: Any, b: Any, c: Any = None) -> Any:
        if isinstance(a, int) and isinstance(b, int):
            if c is not None:
                if _bits(b) > 1024 or _bits(c) > 1024:
                    raise Unbounded("integer")
            elif b > 0 and abs(a) > 1 and _bits(a) * b > MAX_INT_BITS:
                raise Unbounded("integer")
        return std_math.pow_(a, b, c)

    def shift_bits_left(value: int, bits_number: int) -> int:
        if bits_number > 0 and _bits(value) + bits_number > MAX_INT_BITS:
            raise Unbounded("integer")
        return std_math.shift_bits_left(value, bits_number)  # type: ignore[no-any-return]

    def round_(number: Any, ndigits: int = 0) -> Any:
        # Python rounds an int to -n digits by building 10**n first
        if isinstance(number, int) and ndigits < -MAX_INT_BITS // 3:
            raise Unbounded("integer")
        return std_math.round_(number, ndigits)

    return {std_math.multiplication: multiplication, std_math.pow_: pow_,
            std_math.shift_bits_left: shift_bits_left, std_math.round_: round_}


def _sequence_guards(std_strings: Any, std_collections: Any) -> dict[Any, Any]:
    def repeated(original: Any, seq_at: int) -> Any:
        def guarded(left: Any, right: Any, engine: Any) -> Any:
            seq, times = (left, right) if seq_at == 0 else (right, left)
            if times > 0:
                charge(sys.getsizeof(seq) * times)
            return original(left, right, engine)
        return guarded

    def replace(string: str, old: str, new: str, count: int = -1) -> str:
        if len(new) > len(old):
            most = string.count(old) if old else len(string) + 1
            if count >= 0:
                most = min(most, count)
            charge(most * (len(new) - len(old)))
        return std_strings.replace(string, old, new, count)  # type: ignore[no-any-return]

    def replace_with_dict(string: str, str_func: Any, replacements: Any,
                          count: int = -1) -> str:
        for key, value in replacements.items():
            string = replace(string, str_func(key), str_func(value), count)
        return string

    def splitting(original: Any) -> Any:
        def guarded(string: str, separator: Any = None, max_splits: int = -1) -> Any:
            result = original(string, separator, max_splits)
            charge(sys.getsizeof(string) + 64 * len(result))  # the pieces are new strings
            return result
        return guarded

    def to_char_array(string: str) -> list[str]:
        charge(64 * len(string))
        return std_strings.to_char_array(string)  # type: ignore[no-any-return]

    return {std_strings.string_by_int: repeated(std_strings.string_by_int, 0),
            std_strings.int_by_string: repeated(std_strings.int_by_string, 1),
            std_collections.list_by_int: repeated(std_collections.list_by_int, 0),
            std_collections.int_by_list: repeated(std_collections.int_by_list, 1),
            std_strings.replace: replace, std_strings.replace_with_dict: replace_with_dict,
            std_strings.split: splitting(std_strings.split),
            std_strings.right_split: splitting(std_strings.right_split),
            std_strings.to_char_array: to_char_array}


def _guards() -> dict[Any, Any]:
    from yaql.standard_library import collections as std_collections
    from yaql.standard_library import math as std_math
    from yaql.standard_library import regex as std_regex
    from yaql.standard_library import strings as std_strings

    from kiln.template.yaql_regex import guards as regex_guards

    return {**_int_guards(std_math), **_sequence_guards(std_strings, std_collections),
            **regex_guards(std_regex)}


def _guard(context: Any, guards: dict[Any, Any]) -> set[Any]:
    """Replace, in ``context`` and its parents, each function definition whose payload
    has a guard by a copy calling the guard; the originals replaced."""
    replaced = set()
    layer = context
    while layer is not None:
        for definitions in layer._functions.values():
            for definition in list(definitions):
                guard = guards.get(definition.payload)
                if guard is not None:
                    copy = definition.clone()
                    copy.payload = guard
                    definitions.discard(definition)
                    definitions.add(copy)
                    replaced.add(definition.payload)
        layer = layer.parent
    return replaced


_lock = threading.Lock()
_root: Any = None


def root_context() -> Any:
    """The shared, guarded standard context (built once)."""
    global _root
    with _lock:
        if _root is None:
            import yaql
            from yaql.language import conventions

            root = yaql.create_context(context=_make_context_class()(
                convention=conventions.CamelCaseConvention()))
            guards = _guards()
            missing = set(guards) - _guard(root, guards)
            if missing:  # a yaql whose functions moved: nothing runs unguarded
                raise RuntimeError(f"yaql functions not found to guard: {missing}")
            _root = root
        return _root


def in_process(limits: tuple[int, int]) -> bool:
    """Whether expressions under these yaql limits may be evaluated in-process."""
    return 0 < limits[0] <= MAX_ITERATORS


def evaluate(statement: Any, data: Any) -> Any:
    """``statement`` (parsed under limits :func:`in_process` accepts) evaluated on
    ``data`` in-process; raises Unbounded when that is not safe."""
    context = root_context().create_child_context()
    _local.budget = _Budget()
    try:
        return statement.evaluate({"data": data}, context)
    except RecursionError:
        raise Unbounded("recursion") from None
    finally:
        _local.budget = None
