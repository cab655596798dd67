"""Engine and URL setup for SQLite, PostgreSQL (psycopg 3) and MariaDB/MySQL (PyMySQL).

SQLite is configured for a single-process server with many concurrent readers: WAL (readers
never block the writer), foreign keys enforced, a busy timeout instead of instant "database
is locked", and ``synchronous=NORMAL`` (safe against process crashes under WAL; a power
loss can lose the last commits, not corrupt the file). Transactions opened with the
``kiln_begin="IMMEDIATE"`` execution option take the write lock up front, so a writer never
fails half-way through upgrading a read lock.
"""

from __future__ import annotations

import os
import sqlite3
import time
from typing import Any

import sqlalchemy as sa
from sqlalchemy import event

SQLITE_BUSY_TIMEOUT_MS = 30000


def default_url(state_path: str | None = None) -> str:
    """The URL used when ``[database] connection`` is unset: a file under state_path."""
    if state_path is None:
        from kiln.conf import CONF
        state_path = str(CONF.state_path)
    path = os.path.abspath(os.path.expanduser(state_path))
    os.makedirs(path, exist_ok=True)
    return "sqlite:///" + os.path.join(path, "kiln.sqlite")


def configured_url() -> str:
    from kiln.conf import CONF
    url = CONF.database.connection
    return str(url) if url else default_url()


def normalise_url(url: str) -> str:
    """Pick Kiln's drivers for bare dialect names (``postgresql://``, ``mysql://``)."""
    u = sa.make_url(url)
    if u.drivername in ("postgresql", "postgres"):
        u = u.set(drivername="postgresql+psycopg")
    elif u.drivername in ("mysql", "mariadb"):
        u = u.set(drivername=u.drivername + "+pymysql")
    if u.get_backend_name() in ("mysql", "mariadb") and "charset" not in u.query:
        u = u.update_query_dict({"charset": "utf8mb4"})
    return u.render_as_string(hide_password=False)


def make_engine(url: str, *, pool_size: int = 5, max_overflow: int = 50,
                pool_timeout: int = 30) -> sa.Engine:
    url = normalise_url(url)
    backend = sa.make_url(url).get_backend_name()
    kwargs: dict[str, Any] = {"future": True}
    if backend == "sqlite":
        kwargs["connect_args"] = {"check_same_thread": False,
                                  "timeout": SQLITE_BUSY_TIMEOUT_MS / 1000}
        engine = sa.create_engine(url, **kwargs)
        _configure_sqlite(engine)
        return engine
    kwargs.update(pool_size=pool_size, max_overflow=max_overflow, pool_timeout=pool_timeout,
                  pool_pre_ping=True, pool_recycle=3600)
    if backend in ("mysql", "mariadb"):
        # READ COMMITTED: a conditional UPDATE (stack lock) sees the latest committed row
        # and gap locks do not deadlock concurrent batches of inserts.
        kwargs["isolation_level"] = "READ COMMITTED"
    return sa.create_engine(url, **kwargs)


def _configure_sqlite(engine: sa.Engine) -> None:
    memory = engine.url.database in (None, "", ":memory:")

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_conn: Any, _record: Any) -> None:
        # Let SQLAlchemy's "begin" event below emit BEGIN itself (pysqlite's implicit
        # transactions cannot express IMMEDIATE).
        dbapi_conn.isolation_level = None
        cur = dbapi_conn.cursor()
        cur.execute(f"PRAGMA busy_timeout={SQLITE_BUSY_TIMEOUT_MS}")
        if not memory:
            _enter_wal(cur)
            cur.execute("PRAGMA synchronous=NORMAL")
        cur.execute("PRAGMA foreign_keys=ON")
        cur.close()

    @event.listens_for(engine, "begin")
    def _on_begin(conn: sa.Connection) -> None:
        mode = conn.get_execution_options().get("kiln_begin", "")
        conn.exec_driver_sql(f"BEGIN {mode}".strip())


def _enter_wal(cur: Any) -> None:
    """Switch the file to WAL. The switch needs the file to itself, and SQLite answers
    "database is locked" at once instead of waiting through the busy timeout, so
    processes starting together on a new database (``kiln api`` beside ``kiln engine``)
    retry it, backing off, for as long as the busy timeout would have waited."""
    deadline = time.monotonic() + SQLITE_BUSY_TIMEOUT_MS / 1000
    delay = 0.001
    while True:
        try:
            cur.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() + delay > deadline:
                raise
        time.sleep(delay)  # lock backoff: SQLite offers nothing to wait on
        delay = min(delay * 2, 0.05)


def is_sqlite(engine: sa.Engine) -> bool:
    return engine.dialect.name == "sqlite"
