"""Structured logging and the per-request id.

Operators grep and ship logs by field, so every record is one JSON object per line; the
request id Heat's clients receive in ``x-openstack-request-id`` is stamped on every record
logged while that request is being handled, which is what lets a user's complaint ("request
req-... failed") be traced to the server's log.

The id lives in a context variable so that code far from the HTTP layer (the engine, the
database facade) logs it without being handed it. The API layer reads it from
``request.state.request_id`` (set here on the ASGI scope) to fill ``RequestContext``.
"""

from __future__ import annotations

import contextvars
import datetime
import json
import logging
import os
import sys
import time
from collections.abc import Iterable, MutableMapping
from typing import Any

import orjson
from starlette.types import ASGIApp, Message, Receive, Scope, Send

REQUEST_ID_HEADER = "x-openstack-request-id"

_request_id: contextvars.ContextVar[str | None] = contextvars.ContextVar(
    "kiln_request_id", default=None)

#: Attributes every LogRecord has; anything else was passed with ``extra=`` and is logged.
_STANDARD_ATTRS = frozenset(vars(logging.LogRecord("", 0, "", 0, "", (), None))) | {
    "message", "asctime", "taskName", "color_message"}

access_log = logging.getLogger("kiln.access")


def new_request_id() -> str:
    """A fresh id in the form Heat (oslo.context) sends: ``req-`` followed by a UUID4.

    Made from 16 random bytes directly: ``str(uuid.uuid4())`` goes through the UUID
    class (a third of this id's cost on every request), for the same text."""
    raw = bytearray(os.urandom(16))
    raw[6] = raw[6] & 0x0F | 0x40     # version 4
    raw[8] = raw[8] & 0x3F | 0x80     # RFC 4122 variant
    h = raw.hex()
    return f"req-{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


def current_request_id() -> str | None:
    """The id of the request being handled by this task, if any."""
    return _request_id.get()


class JSONFormatter(logging.Formatter):
    """One JSON object per record, with the request id when one is active."""

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "time": datetime.datetime.fromtimestamp(record.created, datetime.UTC)
            .isoformat(timespec="milliseconds").replace("+00:00", "Z"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        request_id = getattr(record, "request_id", None) or _request_id.get()
        if request_id:
            entry["request_id"] = request_id
        for key, value in vars(record).items():
            if key not in _STANDARD_ATTRS and key not in entry:
                entry[key] = value
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
        try:  # orjson: one line per API request is written, so this is a hot path
            return orjson.dumps(entry, default=str).decode()
        except (TypeError, orjson.JSONEncodeError):  # e.g. non-string keys in an extra
            return json.dumps(entry, default=str, ensure_ascii=False)


class TextFormatter(logging.Formatter):
    """Human-readable lines for a terminal, still carrying the request id."""

    def __init__(self) -> None:
        super().__init__("%(asctime)s %(levelname)s %(name)s%(worker_tag)s [%(request_id)s] "
                         "%(message)s")

    def format(self, record: logging.LogRecord) -> str:
        record.request_id = getattr(record, "request_id", None) or _request_id.get() or "-"
        # one of several worker processes (kiln.workers) stamps its index and pid
        pid = getattr(record, "pid", None)
        record.worker_tag = f" (worker {getattr(record, 'worker', '?')} pid {pid})" if pid else ""
        return super().format(record)


def log_file_path(log_file: str | None, log_dir: str | None) -> str | None:
    """Where logs go, as oslo.log decides it: log_file, relative to log_dir if both are
    set; ``kiln.log`` in log_dir if only log_dir is; None (stderr) if neither is."""
    if log_dir:
        return os.path.join(os.path.expanduser(log_dir), log_file or "kiln.log")
    return os.path.expanduser(log_file) if log_file else None


def setup_logging(*, debug: bool = False, log_file: str | None = None,
                  json_lines: bool = True) -> None:
    """Route every logger (Kiln's, uvicorn's, SQLAlchemy's) through one handler."""
    handler: logging.Handler
    if log_file:
        handler = logging.FileHandler(log_file, encoding="utf-8")
    else:
        handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JSONFormatter() if json_lines else TextFormatter())
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
        old.close()
    root.addHandler(handler)
    root.setLevel(logging.DEBUG if debug else logging.INFO)
    # Python warnings would otherwise be plain text lines in the middle of the JSON ones.
    logging.captureWarnings(True)
    # uvicorn installs its own handlers unless told otherwise; make its records ours.
    for name in ("uvicorn", "uvicorn.error", "uvicorn.access"):
        lg = logging.getLogger(name)
        lg.handlers.clear()
        lg.propagate = True
    # uvicorn's start and stop chatter, once per listener, says less than Kiln's one
    # "Kiln is serving" line; its warnings and errors (a request it cannot parse, an
    # application error) still show
    logging.getLogger("uvicorn.error").setLevel(logging.INFO if debug else logging.WARNING)
    # Per-request lines come from RequestIdMiddleware; uvicorn's own would duplicate them.
    logging.getLogger("uvicorn.access").setLevel(logging.WARNING)
    # Per-statement SQL at DEBUG, and Alembic's plugin chatter, drown everything else.
    logging.getLogger("sqlalchemy.engine").setLevel(logging.WARNING)
    logging.getLogger("alembic.runtime.plugins").setLevel(logging.WARNING)
    # keystoneauth1 logs whole token bodies at DEBUG (a trust-scoped token's names its
    # trust, whose id is a secret: kiln.auth.trusts), urllib3 every URL (a trust's
    # DELETE names it)
    logging.getLogger("keystoneauth.identity").setLevel(logging.INFO)
    logging.getLogger("urllib3.connectionpool").setLevel(logging.INFO)


class RequestIdMiddleware:
    """Gives every HTTP request an id, returns it in ``x-openstack-request-id``, logs access.

    Like Heat (oslo.middleware's RequestId), a fresh id is generated for every request; an
    id sent by the client is not reused as the local one.
    """

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        request_id = new_request_id()
        state = scope.setdefault("state", {})
        if isinstance(state, MutableMapping):
            state["request_id"] = request_id
        token = _request_id.set(request_id)
        started = time.perf_counter()
        status = 500
        header = (REQUEST_ID_HEADER.encode("latin-1"), request_id.encode("latin-1"))

        async def send_with_id(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = int(message["status"])
                headers: Iterable[tuple[bytes, bytes]] = message.get("headers", [])
                message["headers"] = [
                    *(h for h in headers if h[0].lower() != header[0]), header]
            await send(message)

        try:
            await self.app(scope, receive, send_with_id)
        finally:
            if access_log.isEnabledFor(logging.INFO):
                method, path = scope.get("method", ""), scope.get("path", "")
                # makeRecord + handle, not .info(): .info() also walks the stack to find
                # the caller's file and line, which the JSON lines never show, and that
                # walk cost as much as the rest of the line
                access_log.handle(access_log.makeRecord(
                    access_log.name, logging.INFO, __file__, 0, "%s %s %d",
                    (method, path, status), None, func="access",
                    extra={"method": method, "path": path, "status": status,
                           "duration_ms": round((time.perf_counter() - started) * 1000,
                                                3)}))
            _request_id.reset(token)
