"""The writer's hottest statements sent straight to SQLite's driver.

Every signal, and every resource state change, is one event INSERT and one resource
UPDATE (a replacement's row is one INSERT, the row it replaced two DELETEs). Through a
Core ``Connection.execute`` each cost about 30 us of SQLAlchemy's per-statement
machinery (an execution context, parameter and result objects) around 4-14 us of SQLite
work, and on a server taking a signal every 2 ms that machinery runs with cold caches,
at two to three times that. Here such a statement is compiled once for the session's
dialect and run with ``executemany`` on the session's own driver connection, inside the
session's transaction: the same SQL with the same parameters, each value converted by
its column type's own bind processor, as SQLAlchemy would have sent it.

Only on SQLite, and only for statements whose every parameter the caller supplies (a
column default or ``onupdate`` SQLAlchemy would fill in is not filled in here, so such a
statement is left to SQLAlchemy); anywhere else :func:`execute` says so and the caller
runs the statement as before. A driver error is raised as SQLAlchemy's own exception for
it (``IntegrityError``, ``OperationalError``...), as ``Connection.execute`` raises it.
"""

from __future__ import annotations

import datetime as dt
import sqlite3
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NoReturn

import sqlalchemy as sa
from sqlalchemy.orm import Session


@dataclass(frozen=True, slots=True)
class _Compiled:
    sql: str
    #: per positional parameter: its name and bind processor
    binds: tuple[tuple[str, Callable[[Any], Any] | None], ...]


#: (statement, its parameter names, dialect name) -> compiled, or None: not for the driver
#: (a few shapes in practice; emptied past ``_MAX_COMPILED`` should statements churn)
_MAX_COMPILED = 512
_COMPILED: dict[tuple[int, tuple[str, ...], str], tuple[Any, _Compiled | None]] = {}


def _compile(stmt: sa.Insert | sa.Update | sa.Delete, keys: tuple[str, ...],
             dialect: sa.Dialect) -> _Compiled | None:
    compiled = stmt.compile(dialect=dialect, column_keys=list(keys))
    names = compiled.positiontup or []
    if compiled.insert_prefetch or compiled.update_prefetch or any(
            name not in keys for name in names):
        return None  # SQLAlchemy would fill in a default: leave the statement to it
    binds = tuple((name, compiled.binds[name].type.dialect_impl(dialect)
                   .bind_processor(dialect)) for name in names)
    return _Compiled(sql=str(compiled), binds=binds)


def _prepared(s: Session, stmt: sa.Insert | sa.Update | sa.Delete, keys: tuple[str, ...],
              ) -> tuple[Any, _Compiled] | None:
    """The session's SQLite driver connection and the statement compiled for ``keys``;
    None where the driver is not to be used."""
    conn = s.connection()
    dialect = conn.dialect
    if dialect.name != "sqlite":
        return None
    cache_key = (id(stmt), keys, dialect.name)
    known = _COMPILED.get(cache_key)
    if known is None or known[0] is not stmt:
        if len(_COMPILED) >= _MAX_COMPILED:
            _COMPILED.clear()
        known = _COMPILED[cache_key] = (stmt, _compile(stmt, keys, dialect))
    compiled = known[1]
    if compiled is None:
        return None
    return conn.connection.driver_connection, compiled


def _values(compiled: _Compiled, row: Mapping[str, Any]) -> list[Any]:
    return [row[name] if process is None else process(row[name])
            for name, process in compiled.binds]


#: values whose bind processing (JSON text, a datetime's text) is worth remembering by
#: identity within one executemany
_SHARED_TYPES = (dict, list, dt.datetime)


def _many_values(compiled: _Compiled, rows: Sequence[Mapping[str, Any]]) -> list[list[Any]]:
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
        for i, (name, process) in enumerate(compiled.binds):
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


_MISSING = object()


def _raise(compiled: _Compiled, values: Any, exc: sqlite3.Error, s: Session) -> NoReturn:
    raise sa.exc.DBAPIError.instance(compiled.sql, values, exc, sqlite3.Error,
                                     dialect=s.connection().dialect) from exc


def execute(s: Session, stmt: sa.Insert | sa.Update | sa.Delete,
            rows: Sequence[Mapping[str, Any]]) -> bool:
    """Run ``stmt`` once per row of ``rows`` (all with the same keys) in the session's
    transaction on its SQLite driver connection; False, having done nothing, where that
    does not apply (another database, a statement SQLAlchemy must complete)."""
    if not rows:
        return False
    prepared = _prepared(s, stmt, tuple(rows[0]))
    if prepared is None:
        return False
    driver, compiled = prepared
    values = _many_values(compiled, rows)
    try:
        driver.executemany(compiled.sql, values)
    except sqlite3.Error as exc:
        _raise(compiled, values, exc, s)
    return True


def insert_one(s: Session, stmt: sa.Insert, row: Mapping[str, Any]) -> int | None:
    """Insert one row as :func:`execute` does and return its id (SQLite's last row id of
    the cursor); None, having done nothing, where the driver is not to be used."""
    prepared = _prepared(s, stmt, tuple(row))
    if prepared is None:
        return None
    driver, compiled = prepared
    values = _values(compiled, row)
    try:
        rid = driver.execute(compiled.sql, values).lastrowid
    except sqlite3.Error as exc:
        _raise(compiled, values, exc, s)
    return int(rid)
