"""Running one yaql evaluation in a child process that is killed at a deadline.

yaql's own limits (``limit_iterators``, ``memory_quota``) bound the collections an
expression builds, not the time it takes: ``regex('(a+)+$').matches(...)`` backtracks
for hours inside one C call that holds the interpreter lock, and big-number arithmetic
or string repetition do the same. Nothing can interrupt such a call in-process, so the
evaluation runs in a forked child (the parsed expression and the data are inherited,
nothing is serialised on the way in), the result comes back pickled through a pipe, and
a child still running at the deadline is killed. The child's address space is also
capped, so an expression cannot take the machine's memory either.

Forking a process with threads is safe here because the child only evaluates the
expression (pure Python, modules already imported, the yaql context made before the
fork) and leaves with ``os._exit``.
"""

from __future__ import annotations

import contextlib
import os
import pickle
import select
import signal
import time
from typing import Any

#: How much the child's address space may grow beyond the parent's at the fork.
MEMORY_HEADROOM = 512 * 1024 * 1024


class Timeout(Exception):
    """The evaluation did not finish before the deadline (the child was killed)."""


class Failed(Exception):
    """The evaluation raised; ``kind`` is "yaql" (a yaql error), "python" or "memory"."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind


def _cap_memory() -> None:
    try:
        import resource

        with open("/proc/self/statm") as f:
            size = int(f.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
        resource.setrlimit(resource.RLIMIT_AS, (size + MEMORY_HEADROOM, size + MEMORY_HEADROOM))
    except (OSError, ValueError, ImportError):
        pass  # not Linux: the deadline still bounds the child


def _child(write_fd: int, evaluate: Any, yaql_error: type[Exception]) -> None:
    try:
        _cap_memory()
        try:
            outcome: tuple[str, Any] = ("ok", evaluate())
        except yaql_error as exc:
            outcome = ("yaql", str(exc))
        except MemoryError:
            outcome = ("memory", "the expression needs too much memory")
        except Exception as exc:  # reported by the parent at the function  # noqa: BLE001
            outcome = ("python", str(exc))
        try:
            payload = pickle.dumps(outcome)
        except Exception as exc:  # any unpicklable result is reported  # noqa: BLE001
            payload = pickle.dumps(("python", f"result cannot be returned: {exc}"))
        view = memoryview(payload)
        while view:
            view = view[os.write(write_fd, view):]
    finally:
        os._exit(0)


def run(evaluate: Any, *, yaql_error: type[Exception], timeout: float) -> Any:
    """``evaluate()`` in a child; its result, or Timeout / Failed."""
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover (the child leaves through os._exit)
        os.close(read_fd)
        _child(write_fd, evaluate, yaql_error)
    os.close(write_fd)
    chunks: list[bytes] = []
    deadline = time.monotonic() + timeout
    try:
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise Timeout()
            ready, _, _ = select.select([read_fd], [], [], left)
            if not ready:
                raise Timeout()
            chunk = os.read(read_fd, 1 << 20)
            if not chunk:
                break
            chunks.append(chunk)
    finally:
        os.close(read_fd)
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
    try:
        kind, value = pickle.loads(b"".join(chunks))
    except Exception:  # a child killed mid-write leaves any garbage  # noqa: BLE001
        raise Failed("memory", "the expression needs too much memory") from None
    if kind != "ok":
        raise Failed(kind, value)
    return value
