"""Short reads run on the event loop's own thread, on SQLite, without SQLAlchemy's
per-statement machinery.

What servers' agents poll (a resource's metadata, hundreds of times a second) is one or
two indexed single-row SELECTs: 50-100 us of SQLite work. Handing each to the reader
pool cost more than the read (a queue, a thread woken on another CPU, the GIL passed
back and forth, a future chained back to the loop), and executing a Core statement
through a Session cost ten times the SQLite work again (a session, its transaction
events, parameter and result processing objects). Here a statement is compiled once
for SQLite and run on the driver's own connection; its results are converted by the
columns' own SQLAlchemy result processors, so a row reads exactly as it would through
SQLAlchemy.

Only on SQLite, where a read is a local function call, and only while it cannot wait:
the connection is read-only (``query_only``) with a busy timeout of 0, so the rare read
that would wait for a lock (WAL readers normally never do) raises :class:`Missed` at
once, leaving the caller to use the reader pool, which waits as every other read does.
The connection belongs to the first thread that reads through it (the event loop's);
any other thread is turned away the same way.

Functions read through :class:`Rows`, so the same function serves the inline path and
a Session on any database (:class:`SessionRows`).
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

import sqlalchemy as sa
from sqlalchemy.dialects import sqlite as sqlite_dialect
from sqlalchemy.orm import Session

T = TypeVar("T")


class Missed(Exception):
    """The inline read could not run here; run it on the reader pool instead."""


class Rows(Protocol):
    """What a short read needs: the first row of a SELECT, as a mapping by column key."""

    def first(self, stmt: sa.Select[Any],
              params: Mapping[str, Any]) -> Mapping[str, Any] | None: ...

    def all(self, stmt: sa.Select[Any],
            params: Mapping[str, Any]) -> list[Mapping[str, Any]]: ...


class SessionRows:
    """:class:`Rows` over a Session (any database, the reader pool)."""

    def __init__(self, s: Session) -> None:
        self._conn = s.connection()

    def first(self, stmt: sa.Select[Any],
              params: Mapping[str, Any]) -> Mapping[str, Any] | None:
        found = self._conn.execute(stmt, dict(params)).mappings().first()
        return None if found is None else dict(found)

    def all(self, stmt: sa.Select[Any],
            params: Mapping[str, Any]) -> list[Mapping[str, Any]]:
        return [dict(r) for r in self._conn.execute(stmt, dict(params)).mappings()]


def usable(engine: sa.Engine) -> bool:
    """SQLite on a plain file path (an in-memory database is private to its own
    connection; URI options are left to SQLAlchemy)."""
    url = engine.url
    if url.get_backend_name() != "sqlite" or url.query:
        return False
    database = url.database or ""
    return database not in ("", ":memory:") and not database.startswith("file:")


@dataclass(frozen=True, slots=True)
class _Compiled:
    sql: str
    #: per positional parameter: its name, default value and bind processor
    binds: tuple[tuple[str, Any, Callable[[Any], Any] | None], ...]
    keys: tuple[str, ...]
    processors: tuple[Callable[[Any], Any] | None, ...]


_DIALECT = sqlite_dialect.dialect()


def _compile(stmt: sa.Select[Any]) -> _Compiled:
    compiled = stmt.compile(dialect=_DIALECT, compile_kwargs={"render_postcompile": True})
    binds = []
    for name in compiled.positiontup or ():
        bind = compiled.binds[name]
        binds.append((name, bind.effective_value,
                      bind.type.dialect_impl(_DIALECT).bind_processor(_DIALECT)))
    columns: Sequence[Any] = list(stmt.selected_columns)
    return _Compiled(
        sql=str(compiled), binds=tuple(binds), keys=tuple(c.key for c in columns),
        processors=tuple(c.type.dialect_impl(_DIALECT).result_processor(_DIALECT, None)
                         for c in columns))


class _DriverRows:
    """:class:`Rows` on the driver's connection, statements compiled once each."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self._conn = conn
        self._compiled: dict[int, tuple[sa.Select[Any], _Compiled]] = {}

    def _run(self, stmt: sa.Select[Any],
             params: Mapping[str, Any]) -> tuple[_Compiled, sqlite3.Cursor]:
        known = self._compiled.get(id(stmt))
        if known is None or known[0] is not stmt:
            known = self._compiled[id(stmt)] = (stmt, _compile(stmt))
        c = known[1]
        values = []
        for name, default, process in c.binds:
            value = params.get(name, default)
            values.append(value if process is None else process(value))
        return c, self._conn.execute(c.sql, values)

    def first(self, stmt: sa.Select[Any],
              params: Mapping[str, Any]) -> Mapping[str, Any] | None:
        c, cursor = self._run(stmt, params)
        row = cursor.fetchone()
        if row is None:
            return None
        return {key: value if process is None else process(value)
                for key, value, process in zip(c.keys, row, c.processors, strict=True)}

    def all(self, stmt: sa.Select[Any],
            params: Mapping[str, Any]) -> list[Mapping[str, Any]]:
        c, cursor = self._run(stmt, params)
        return [{key: value if process is None else process(value)
                 for key, value, process in zip(c.keys, row, c.processors, strict=True)}
                for row in cursor.fetchall()]


class InlineReader:
    """One read-only driver connection to the same SQLite file, used by one thread."""

    def __init__(self, engine: sa.Engine) -> None:
        self._path = str(engine.url.database)
        self._rows: _DriverRows | None = None
        self._owner: int | None = None

    def run(self, fn: Callable[..., T], args: tuple[Any, ...],
            kwargs: dict[str, Any]) -> T:
        """``fn(rows, ...)`` in a read transaction of its own, here and now; raises
        :class:`Missed` when the read must go to the reader pool instead."""
        me = threading.get_ident()
        if self._owner is None:
            self._owner = me
        elif self._owner != me:
            raise Missed
        if self._rows is None:
            self._rows = _DriverRows(_connect(self._path))
        rows = self._rows
        conn = rows._conn
        try:
            conn.execute("BEGIN")
            try:
                return fn(rows, *args, **kwargs)
            finally:
                conn.execute("COMMIT")
        except sqlite3.OperationalError as exc:
            text = str(exc)
            if "locked" in text or "busy" in text:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise Missed from exc
            raise

    def close(self) -> None:
        if self._rows is not None:
            self._rows._conn.close()
            self._rows = None


def _connect(path: str) -> sqlite3.Connection:
    conn = sqlite3.connect(path, timeout=0, check_same_thread=False, isolation_level=None)
    conn.execute("PRAGMA busy_timeout=0")
    conn.execute("PRAGMA query_only=ON")
    return conn
