"""Long-lived sandbox processes for the evaluations the server cannot bound itself.

Most yaql expressions are evaluated in-process under bounds (:mod:`kiln.template.
yaql_bounded`). What falls outside them -- a regex RE2 cannot run (back-references,
look-arounds), a number too big to multiply cheaply, an evaluation past its in-process
time or memory budget, a backtracking ``allowed_pattern`` -- is sent to a worker process
(:mod:`kiln.template.yaql_worker`), which nothing in it can freeze or exhaust: a worker
still busy at the deadline is killed, and its address space is capped.

A worker is started on the first such request and then kept: each request costs a
pickled round trip of the expression and its data (tens of microseconds), not a fork of
the server (~20 ms, more as the server grows). Requests from several threads at once use
several workers; idle ones beyond ``IDLE_WORKERS`` are closed.
"""

from __future__ import annotations

import contextlib
import os
import pickle
import select
import struct
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

#: Idle workers kept for the next requests.
IDLE_WORKERS = 2

_SCRIPT = str(Path(__file__).with_name("yaql_worker.py"))
_READY = b"KILN-YAQL-READY\n"
#: Seconds a new worker may take to import yaql and say it is ready.
START_SECONDS = 60.0


class Timeout(Exception):
    """The evaluation did not finish before the deadline (the worker was killed)."""


class Failed(Exception):
    """The evaluation raised; ``kind`` is "yaql" (a yaql error), "python" or "memory"."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind


class _Worker:
    def __init__(self) -> None:
        # -I: the worker imports the standard library and yaql only, never the server's
        # working directory or environment's modules
        self.proc = subprocess.Popen(
            [sys.executable, "-I", _SCRIPT], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL, close_fds=True, start_new_session=True)
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.stdin = self.proc.stdin
        self.out = self.proc.stdout.fileno()
        self.buffer = b""
        line = self._read_until(lambda: _READY in self.buffer,
                                time.monotonic() + START_SECONDS)
        if not line:
            self.kill()
            raise Failed("python", "the yaql sandbox process did not start")
        self.buffer = self.buffer[self.buffer.index(_READY) + len(_READY):]

    def _read_until(self, done: Any, deadline: float) -> bool:
        while not done():
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            ready, _, _ = select.select([self.out], [], [], left)
            if not ready:
                return False
            chunk = os.read(self.out, 1 << 20)
            if not chunk:
                return False
            self.buffer += chunk
        return True

    def ask(self, request: tuple[Any, ...], timeout: float) -> tuple[str, Any]:
        """Send one request; its answer, or Timeout (the caller kills this worker)."""
        payload = pickle.dumps(request)
        try:
            self.stdin.write(struct.pack(">I", len(payload)) + payload)
            self.stdin.flush()
        except OSError:
            raise Failed("python", "the yaql sandbox process stopped") from None
        deadline = time.monotonic() + timeout

        def framed() -> bool:
            return len(self.buffer) >= 4 and \
                len(self.buffer) >= 4 + struct.unpack(">I", self.buffer[:4])[0]

        if not self._read_until(framed, deadline):
            if self.proc.poll() is not None:  # the worker died (killed for memory)
                raise Failed("memory", "the expression needs too much memory")
            raise Timeout()
        (size,) = struct.unpack(">I", self.buffer[:4])
        frame, self.buffer = self.buffer[4:4 + size], self.buffer[4 + size:]
        kind, value = pickle.loads(frame)
        return kind, value

    def kill(self) -> None:
        with contextlib.suppress(ProcessLookupError):
            self.proc.kill()
        self.proc.wait()
        for stream in (self.proc.stdin, self.proc.stdout):
            if stream is not None:
                with contextlib.suppress(OSError):
                    stream.close()


_lock = threading.Lock()
_idle: list[_Worker] = []


def _take() -> _Worker:
    with _lock:
        while _idle:
            worker = _idle.pop()
            if worker.proc.poll() is None:
                return worker
    return _Worker()


def _give_back(worker: _Worker) -> None:
    with _lock:
        if len(_idle) < IDLE_WORKERS:
            _idle.append(worker)
            return
    worker.kill()


def _run(request: tuple[Any, ...], timeout: float) -> Any:
    try:
        pickle.dumps(request)
    except Exception as exc:  # data a template cannot normally hold  # noqa: BLE001
        raise Failed("python", f"the data cannot be evaluated: {exc}") from None
    worker = _take()
    try:
        kind, value = worker.ask(request, timeout)
    except BaseException:
        worker.kill()
        raise
    _give_back(worker)
    if kind != "ok":
        raise Failed(kind, value)
    return value


def evaluate(expression: str, data: Any, limits: tuple[int, int], timeout: float) -> Any:
    """yaql's own evaluation of ``expression`` on ``data`` (as Heat does it), in a
    worker; its result, or Timeout / Failed."""
    return _run(("yaql", expression, data, limits), timeout)


def full_match(pattern: str, value: str, timeout: float) -> bool:
    """Whether ``pattern`` (Python's ``re``) matches all of ``value``, in a worker."""
    return bool(_run(("match", pattern, value), timeout))


def workers() -> list[int]:
    """Process ids of the idle workers (for tests and diagnostics)."""
    with _lock:
        return [w.proc.pid for w in _idle]


def close() -> None:
    """Stop every idle worker (the server's shutdown; tests)."""
    with _lock:
        idle = list(_idle)
        _idle.clear()
    for worker in idle:
        worker.kill()
