"""The sandbox process: evaluates what cannot be bounded in the server's own process.

Run as a script (``python -I yaql_worker.py``) by :mod:`kiln.template.yaql_sandbox`, so it
imports only the standard library and yaql, never Kiln. It reads requests from stdin and
answers on stdout, one pickled frame each (a 4-byte big-endian length, then the bytes), for
as long as the server keeps it: one process serves many evaluations, so none pays for a
fork or a start-up. The server kills it at a request's deadline and starts another.

Its address space is capped a fixed amount above its size once started, so an expression
cannot take the machine's memory; a MemoryError is reported and the process goes on.
"""

from __future__ import annotations

import collections.abc  # noqa: F401  (yaql 3 uses collections.abc without importing it)
import os
import pickle
import re
import struct
import sys
from typing import Any

#: How much the worker's address space may grow beyond its size after start-up.
MEMORY_HEADROOM = 512 * 1024 * 1024


def _cap_memory() -> None:
    try:
        import resource

        with open("/proc/self/statm") as f:
            size = int(f.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
        resource.setrlimit(resource.RLIMIT_AS, (size + MEMORY_HEADROOM, size + MEMORY_HEADROOM))
    except (OSError, ValueError, ImportError):
        pass  # not Linux: the deadline still bounds the worker


class _Yaql:
    """Heat's evaluation: yaql's standard context and a parser per limit pair."""

    def __init__(self) -> None:
        import yaql
        from yaql.language import exceptions

        self.yaql = yaql
        self.error = exceptions.YaqlException
        self.root = yaql.create_context()
        self.parsers: dict[tuple[int, int], Any] = {}

    def evaluate(self, expression: str, data: Any, limits: tuple[int, int]) -> Any:
        parser = self.parsers.get(limits)
        if parser is None:
            parser = self.parsers[limits] = self.yaql.YaqlFactory().create(
                {"yaql.limitIterators": limits[0], "yaql.memoryQuota": limits[1]})
        return parser(expression).evaluate({"data": data}, self.root.create_child_context())


def _answer(request: tuple[Any, ...], yaql: _Yaql) -> tuple[str, Any]:
    kind = request[0]
    try:
        if kind == "yaql":
            _, expression, data, limits = request
            try:
                return "ok", yaql.evaluate(expression, data, limits)
            except yaql.error as exc:
                return "yaql", str(exc)
        if kind == "match":
            _, pattern, value = request
            match = re.match(pattern, value)
            return "ok", match is not None and match.end() == len(value)
        return "python", f"unknown request {kind!r}"
    except MemoryError:
        return "memory", "the expression needs too much memory"
    except RecursionError:
        return "python", "maximum recursion depth exceeded"
    except Exception as exc:  # reported by the server at the function  # noqa: BLE001
        return "python", str(exc)


def _die_with_the_server() -> None:
    """Linux: the kernel kills this worker when the server goes, even mid-evaluation."""
    try:
        import ctypes
        import signal

        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass  # elsewhere the worker leaves when the server closes its pipe


def _read(stream: Any, size: int) -> bytes:
    data = stream.read(size)
    if len(data) < size:
        raise EOFError
    return data  # type: ignore[no-any-return]


def main() -> None:
    parent = os.getppid()
    _die_with_the_server()
    if os.getppid() != parent:
        return  # the server went before the request to outlive it was made
    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    yaql = _Yaql()
    _cap_memory()
    stdout.write(b"KILN-YAQL-READY\n")
    stdout.flush()
    while True:
        try:
            (size,) = struct.unpack(">I", _read(stdin, 4))
            request = pickle.loads(_read(stdin, size))
        except EOFError:
            return  # the server closed the pipe: it no longer needs this worker
        outcome = _answer(request, yaql)
        try:
            payload = pickle.dumps(outcome)
        except MemoryError:
            payload = pickle.dumps(("memory", "the expression needs too much memory"))
        except Exception as exc:  # any unpicklable result is reported  # noqa: BLE001
            payload = pickle.dumps(("python", f"result cannot be returned: {exc}"))
        del outcome
        stdout.write(struct.pack(">I", len(payload)) + payload)
        stdout.flush()


if __name__ == "__main__":
    main()
