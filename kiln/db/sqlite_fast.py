"""The one SQLite-only fast path left beside SQLAlchemy, and why it earns its keep.

Two kinds of statement skip SQLAlchemy's per-statement machinery on a SQLite file:

- **The writer's hottest statements** (:func:`execute`, :func:`insert_one`). Every
  resource state change is one resource UPDATE and one event INSERT (a signal adds its
  signal rows; a replacement is one INSERT, the row it replaced two DELETEs). Through
  ``Connection.execute`` each ``executemany`` also pays for a cache key generated from
  the statement, an execution context, parameter and result objects, around a few
  microseconds of SQLite work. Here it runs on the *same* driver connection the Session
  uses, inside its transaction: the same SQL and parameters, each value converted by its
  column type's own bind processor, exactly as SQLAlchemy would have sent it.
- **Agents' metadata polls** (:class:`InlineReader`, through ``Database.read_now``):
  two to four indexed single-row SELECTs, read on the event loop's own thread instead
  of the reader pool.

Measured (bench/README.md, "The SQLite fast path"; ``bench/results/fastpath23.json``),
server CPU with and without each piece, alternated in one session. The rule: a piece
stays only if removing it costs more than 5% of the server's CPU on some case.

- writes, ``bench/scenarios_bench.py`` at 1,000 resources, median of 6 runs each:
  without them a chain create cost 22% more, a chain update 17%, a flat update 16%, a
  flat delete 19% (all nine cases together 6.7%);
- inline reads, ``bench/cfn_bench.py``, median of 3: without them a metadata poll cost
  0.85 ms of server CPU instead of 0.39-0.41 ms (cfn and native), +107-117%.

A third piece, a thread checkpointing the WAL off the writer's commits, did not pass
(no CPU gain, no p99 gain above this machine's noise) and was removed: SQLite's own
automatic checkpoint does that work again.

**One statement cache.** A statement is compiled through SQLAlchemy's own cache, the
engine's ``compiled_cache``, under the key ``Connection.execute`` uses for it (the
statement's cache key, the sorted parameter names, ``for_executemany``): the
``Compiled`` object sent here is the very one the ORM path sends, compiled once whichever
path meets the statement first. What this module keeps is only a lookup from a
statement object to that ``Compiled`` (computing a statement's cache key costs more than
the SQLite work, so it is done once per statement object, as the statements are built
once at import), and the bind processors taken from it. This reaches two private names
of SQLAlchemy 2 (``ClauseElement._compile_w_cache`` and ``Engine._compiled_cache``);
``tests/unit/db/test_sqlite_fast.py`` checks that the cache really is shared, so a
SQLAlchemy upgrade that changes them fails there; in production this module then steps
aside (one warning) and SQLAlchemy runs every statement, as on the other databases.

Only on SQLite, and only for statements whose every parameter the caller supplies (a
column default or ``onupdate`` SQLAlchemy would fill in is not filled in here); anywhere
else :func:`execute` says so and the caller runs the statement through SQLAlchemy. A
driver error is raised as SQLAlchemy's own exception for it (``IntegrityError``...), as
``Connection.execute`` raises it. Only this module sends statements through ``sqlite3``
(an import-linter contract; ``kiln.db.engine`` and ``kiln.db.facade`` import it only to
configure connections and to recognise its lock errors).
"""

from __future__ import annotations

import datetime as dt
import logging
import sqlite3
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NoReturn, Protocol, TypeVar

import sqlalchemy as sa
from sqlalchemy.orm import Session
from sqlalchemy.sql import compiler

T = TypeVar("T")

_LOG = logging.getLogger(__name__)
#: set once SQLAlchemy's private compile route failed: everything goes through SQLAlchemy
_PRIVATE_ROUTE_BROKEN = False


@dataclass(frozen=True, slots=True)
class _Prepared:
    sql: str
    #: per positional parameter: its name and bind processor
    binds: tuple[tuple[str, Callable[[Any], Any] | None], ...]


#: (statement id, its parameter names, for_executemany) -> (the statement, kept so its id
#: is not reused; what to send, or None: leave it to SQLAlchemy). A few shapes in
#: practice; emptied past ``_MAX_KNOWN`` should statements churn.
_MAX_KNOWN = 512
_KNOWN: dict[tuple[int, tuple[str, ...], bool], tuple[Any, _Prepared | None]] = {}


def _compile_cached(dialect: sa.Dialect, stmt: Any, cache: Any, keys: list[str],
                    many: bool) -> tuple[compiler.SQLCompiler, Any] | None:
    """The statement compiled through SQLAlchemy's own cache (``Connection.execute``'s
    private route to it), and its extracted parameters; None, after one warning, should
    a SQLAlchemy release have changed that route: the caller then leaves the statement to
    SQLAlchemy, slower but right."""
    global _PRIVATE_ROUTE_BROKEN
    if _PRIVATE_ROUTE_BROKEN:
        return None
    try:
        compiled, extracted, _params, _hit = stmt._compile_w_cache(
            dialect, compiled_cache=cache, column_keys=keys, for_executemany=many,
            schema_translate_map=None,
            linting=dialect.compiler_linting | compiler.WARN_LINTING)
    except (AttributeError, TypeError, ValueError) as exc:
        _PRIVATE_ROUTE_BROKEN = True
        _LOG.warning("SQLite fast path off: this SQLAlchemy (%s) compiles statements "
                     "differently (%s); every statement goes through SQLAlchemy",
                     sa.__version__, exc)
        return None
    assert isinstance(compiled, compiler.SQLCompiler)
    return compiled, extracted


def _engine_cache(engine: sa.Engine) -> Any:
    return getattr(engine, "_compiled_cache", None)


def _prepare(conn: sa.Connection, stmt: sa.Insert | sa.Update | sa.Delete,
             keys: tuple[str, ...], many: bool) -> _Prepared | None:
    cache = conn.get_execution_options().get("compiled_cache", _engine_cache(conn.engine))
    found = _compile_cached(conn.dialect, stmt, cache, sorted(keys), many)
    if found is None:
        return None
    compiled = found[0]
    names = compiled.positiontup or []
    if (compiled.insert_prefetch or compiled.update_prefetch
            or compiled.literal_execute_params or compiled.post_compile_params
            or any(name not in keys for name in names)):
        return None  # SQLAlchemy would fill in or render a value: leave it to SQLAlchemy
    dialect = conn.dialect
    binds = tuple((name, compiled.binds[name].type.dialect_impl(dialect)
                   .bind_processor(dialect)) for name in names)
    return _Prepared(sql=compiled.string, binds=binds)


def _prepared(s: Session, stmt: sa.Insert | sa.Update | sa.Delete, keys: tuple[str, ...],
              many: bool) -> tuple[Any, _Prepared] | None:
    """The session's SQLite driver connection and what to send for ``keys``; None where
    the driver is not to be used."""
    conn = s.connection()
    if conn.dialect.name != "sqlite":
        return None
    cache_key = (id(stmt), keys, many)
    known = _KNOWN.get(cache_key)
    if known is None or known[0] is not stmt:
        if len(_KNOWN) >= _MAX_KNOWN:
            _KNOWN.clear()
        known = _KNOWN[cache_key] = (stmt, _prepare(conn, stmt, keys, many))
    prepared = known[1]
    if prepared is None:
        return None
    return conn.connection.driver_connection, prepared


def _values(prepared: _Prepared, row: Mapping[str, Any]) -> list[Any]:
    return [row[name] if process is None else process(row[name])
            for name, process in prepared.binds]


#: values whose bind processing (JSON text, a datetime's text) is worth remembering by
#: identity within one executemany
_SHARED_TYPES = (dict, list, dt.datetime)
_MISSING = object()


def _many_values(prepared: _Prepared, rows: Sequence[Mapping[str, Any]]) -> list[list[Any]]:
    """:func:`_values` of every row, each processed value converted once per call: the
    rows of a batch mostly hold the very same objects (one sealed properties document
    for a resource's transitions or for resources declared alike, one timestamp for a
    batch's events), and JSON-encoding each copy again was the writer's largest cost in
    a replace-all update. Keyed by identity: ``rows`` keeps every object alive (no id
    is reused during the call) and no caller changes them meanwhile."""
    memo: dict[tuple[int, int], Any] = {}
    out = []
    for row in rows:
        values = []
        for i, (name, process) in enumerate(prepared.binds):
            value = row[name]
            if process is not None:
                if isinstance(value, _SHARED_TYPES):
                    key = (i, id(value))
                    done = memo.get(key, _MISSING)
                    if done is _MISSING:
                        done = memo[key] = process(value)
                    value = done
                else:
                    value = process(value)
            values.append(value)
        out.append(values)
    return out


def _raise(prepared: _Prepared, values: Any, exc: sqlite3.Error, s: Session) -> NoReturn:
    raise sa.exc.DBAPIError.instance(prepared.sql, values, exc, sqlite3.Error,
                                     dialect=s.connection().dialect) from exc


def execute(s: Session, stmt: sa.Insert | sa.Update | sa.Delete,
            rows: Sequence[Mapping[str, Any]]) -> bool:
    """Run ``stmt`` once per row of ``rows`` (all with the same keys) in the session's
    transaction on its SQLite driver connection; False, having done nothing, where that
    does not apply (another database, a statement SQLAlchemy must complete)."""
    if not rows:
        return False
    found = _prepared(s, stmt, tuple(rows[0]), len(rows) > 1)
    if found is None:
        return False
    driver, prepared = found
    values = _many_values(prepared, rows)
    try:
        driver.executemany(prepared.sql, values)
    except sqlite3.Error as exc:
        _raise(prepared, values, exc, s)
    return True


def insert_one(s: Session, stmt: sa.Insert, row: Mapping[str, Any]) -> int | None:
    """Insert one row as :func:`execute` does and return its id (SQLite's last row id of
    the cursor); None, having done nothing, where the driver is not to be used."""
    found = _prepared(s, stmt, tuple(row), False)
    if found is None:
        return None
    driver, prepared = found
    values = _values(prepared, row)
    try:
        rid = driver.execute(prepared.sql, values).lastrowid
    except sqlite3.Error as exc:
        _raise(prepared, values, exc, s)
    return int(rid)


# -- short reads on the event loop's thread (agents' metadata polls) ------------------


class Missed(Exception):
    """The inline read could not run here; run it on the reader pool instead."""


class Rows(Protocol):
    """What a short read needs: the first row of a SELECT, or all of them, as mappings
    by column key. Functions read through it so the same function serves the inline
    path and a Session on any database (:class:`SessionRows`)."""

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
class _Select:
    sql: str
    #: per positional parameter: its name, its value when the caller gives none (a
    #: literal of the statement, e.g. its LIMIT) and its bind processor
    binds: tuple[tuple[str, Any, Callable[[Any], Any] | None], ...]
    keys: tuple[str, ...]
    processors: tuple[Callable[[Any], Any] | None, ...]


def _prepare_select(engine: sa.Engine, stmt: sa.Select[Any],
                    names: tuple[str, ...]) -> _Select | None:
    """The SELECT as SQLAlchemy's cache compiled it for a call with parameters ``names``
    (the ``Compiled`` a Session would send for it), with this statement's own literal
    values; None for a statement that needs rendering per call (expanding IN)."""
    dialect = engine.dialect
    found = _compile_cached(dialect, stmt, _engine_cache(engine), sorted(names), False)
    if found is None:
        return None
    compiled, extracted = found
    if compiled.literal_execute_params or compiled.post_compile_params:
        return None
    values = compiled.construct_params(params=dict.fromkeys(names),
                                       extracted_parameters=extracted, escape_names=False)
    binds = tuple((name, values.get(name), compiled.binds[name].type.dialect_impl(dialect)
                   .bind_processor(dialect)) for name in compiled.positiontup or ())
    columns: Sequence[Any] = list(stmt.selected_columns)
    return _Select(
        sql=compiled.string, binds=binds, keys=tuple(c.key for c in columns),
        processors=tuple(c.type.dialect_impl(dialect).result_processor(dialect, None)
                         for c in columns))


class _DriverRows:
    """:class:`Rows` on the inline reader's driver connection."""

    def __init__(self, engine: sa.Engine, conn: sqlite3.Connection) -> None:
        self._engine = engine
        self.conn = conn
        #: (statement id, parameter names) -> (the statement, what to send)
        self._known: dict[tuple[int, tuple[str, ...]], tuple[Any, _Select | None]] = {}

    def _run(self, stmt: sa.Select[Any],
             params: Mapping[str, Any]) -> tuple[_Select, sqlite3.Cursor]:
        names = tuple(params)
        known = self._known.get((id(stmt), names))
        if known is None or known[0] is not stmt:
            if len(self._known) >= _MAX_KNOWN:
                self._known.clear()
            known = self._known[(id(stmt), names)] = (
                stmt, _prepare_select(self._engine, stmt, names))
        c = known[1]
        if c is None:
            raise Missed
        values = []
        for name, default, process in c.binds:
            value = params.get(name, default)
            values.append(value if process is None else process(value))
        return c, self.conn.execute(c.sql, values)

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
    """Short reads of a few indexed rows, run here and now on the calling (event loop)
    thread, on one read-only driver connection to the same SQLite file.

    An agent's metadata poll is two to four indexed single-row SELECTs, 50-100 us of
    SQLite work; handing each to the reader pool cost more than the read (a queue, a
    thread woken on another CPU, the GIL passed back, a future chained to the loop) and
    a Session around a Core statement ten times the SQLite work again. Measured: without
    this reader, a poll cost the server twice the CPU (bench/README.md).

    Why a connection of its own, not the pool's: a read on the event loop must never
    wait, so this one is ``query_only`` with a busy timeout of 0, where the pool's wait
    up to 30 s; the rare read that would wait for a lock (WAL readers normally never do)
    raises :class:`Missed` at once and the caller uses the reader pool, which waits as
    every read does. The connection belongs to the first thread that reads through it;
    any other thread is turned away the same way. Its statements are compiled through
    SQLAlchemy's cache all the same (:func:`_prepare_select`)."""

    def __init__(self, engine: sa.Engine) -> None:
        self._engine = engine
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
            self._rows = _DriverRows(self._engine, _connect(str(self._engine.url.database)))
        rows = self._rows
        conn = rows.conn
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
            self._rows.conn.close()
            self._rows = None


def _connect(path: str) -> sqlite3.Connection:
    conn = sqlite3.connect(path, timeout=0, check_same_thread=False, isolation_level=None)
    conn.execute("PRAGMA busy_timeout=0")
    conn.execute("PRAGMA query_only=ON")
    return conn
