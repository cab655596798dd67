"""The async face of the database: reads on a thread pool, writes batched on one thread.

Why a writer thread rather than an async driver: the engine's hot path is a stream of tiny
writes (a resource's status plus its event, per transition). Committing each costs an
fsync on SQLite and a round trip plus WAL flush on the servers; one thread that drains
everything queued while the previous commit was running and commits it together turns N
commits into ~1 under load while adding no latency when idle (bench/db_bench.py measures
it). A single writer also means SQLite never sees two writers fighting for its lock.

On a SQLite file the writer keeps its one connection from batch to batch: checking a
connection out of the pool and back in (and SQLAlchemy's wrapper round it) cost a fifth
of a one-signal batch's CPU (236 us of the writer thread's, now 187). A file connection
does not go stale as a server's does, and an idle one holds no lock; after a failed
batch it is replaced all the same.

Each write function runs in the shared transaction; if any raises, the batch is rolled back
and every function of it is re-run in a transaction of its own, so one bad write fails
alone. Write functions must therefore have no effect outside their session.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import queue
import sqlite3
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Concatenate, ParamSpec, TypeVar

import sqlalchemy as sa
from sqlalchemy.orm import Session

from kiln.db import engine as db_engine
from kiln.db import migrate, sqlite_fast

P = ParamSpec("P")
T = TypeVar("T")
LOG = logging.getLogger(__name__)

#: Upper bound on functions committed together (keeps one transaction's lock time short).
MAX_BATCH = 500
#: Attempts of a transaction that lost a deadlock / serialization conflict.
RETRIES = 3
#: What a call raises when the database cannot serve it: a driver or SQL error, or the
#: facade (or its reader pool) already closed. Callers that can leave the work to a lease
#: expiring or to the next sweep (releasing a lock, unregistering) catch these only.
DATABASE_ERRORS: tuple[type[Exception], ...] = (sa.exc.SQLAlchemyError, RuntimeError)


@dataclass(slots=True)
class _Job:
    fn: Callable[..., Any]
    args: tuple[Any, ...]
    kwargs: dict[str, Any]
    future: asyncio.Future[Any]
    loop: asyncio.AbstractEventLoop


class Database:
    """Owns an engine, a reader pool and the writer thread."""

    def __init__(self, engine: sa.Engine, *, readers: int = 8,
                 max_batch: int = MAX_BATCH) -> None:
        self.engine = engine
        self._max_batch = max_batch
        self._readers = ThreadPoolExecutor(max_workers=readers, thread_name_prefix="kiln-db-r")
        self._queue: queue.SimpleQueue[_Job | None] = queue.SimpleQueue()
        self._inline = (sqlite_fast.InlineReader(engine) if sqlite_fast.usable(engine)
                        else None)
        self._closed = False
        self._write_options: dict[str, Any] = (
            {"kiln_begin": "IMMEDIATE"} if db_engine.is_sqlite(engine) else {})
        #: the writer's own connection, kept between batches (SQLite files only)
        self._keep_connection = sqlite_fast.usable(engine)
        self._connection: sa.Connection | None = None
        #: put into every write batch's ``Session.info`` (what repositories need to know
        #: about this writer across batches, e.g. :class:`kiln.db.events.EventCap`)
        self.write_session_info: dict[str, Any] = {}
        #: Commits and functions written, for benchmarks and diagnostics.
        self.commits = 0
        self.writes = 0
        self._writer = threading.Thread(target=self._writer_loop, name="kiln-db-w", daemon=True)
        self._writer.start()

    # -- public -------------------------------------------------------------------------

    async def run(self, fn: Callable[Concatenate[Session, P], T],
                  *args: P.args, **kwargs: P.kwargs) -> T:
        """Run ``fn(session, ...)`` in its own transaction on a reader thread."""
        if self._closed:
            raise RuntimeError("database is closed")
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._readers, self._run_sync, fn, args, kwargs)

    async def read_now(self, fn: Callable[Concatenate[sqlite_fast.Rows, P], T],
                       *args: P.args, **kwargs: P.kwargs) -> T:
        """``fn(rows, ...)``, a short read of a few indexed rows through
        :class:`kiln.db.sqlite_fast.Rows`, in its own transaction: on this thread when
        the database allows it without waiting (SQLite: kiln.db.sqlite_fast), else on a
        reader thread as :meth:`run`."""
        if self._closed:
            raise RuntimeError("database is closed")
        if self._inline is not None:
            try:
                return self._inline.run(fn, args, kwargs)
            except sqlite_fast.Missed:
                pass
        return await self.run(_through_session, fn, args, kwargs)

    def write(self, fn: Callable[Concatenate[Session, P], T],
              *args: P.args, **kwargs: P.kwargs) -> asyncio.Future[T]:
        """Queue ``fn(session, ...)`` for the writer; the future resolves after commit."""
        if self._closed:
            raise RuntimeError("database is closed")
        loop = asyncio.get_running_loop()
        fut: asyncio.Future[T] = loop.create_future()
        self._queue.put(_Job(fn, args, dict(kwargs), fut, loop))
        return fut

    @contextlib.contextmanager
    def session(self) -> Iterator[Session]:
        """A synchronous session in one write transaction (CLI, tests, startup)."""
        with self.engine.connect().execution_options(**self._write_options) as conn, \
                Session(bind=conn, expire_on_commit=False) as s, s.begin():
            yield s

    async def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        self._queue.put(None)
        await asyncio.get_running_loop().run_in_executor(None, self._writer.join)
        self._readers.shutdown(wait=True)
        if self._inline is not None:
            self._inline.close()
        self.engine.dispose()

    # -- internals ----------------------------------------------------------------------

    def _run_sync(self, fn: Callable[..., T], args: tuple[Any, ...],
                  kwargs: dict[str, Any]) -> T:
        # A function that reads and then writes (e.g. register_engine) can meet SQLite's
        # SQLITE_BUSY without the busy timeout helping (its read snapshot went stale while
        # the writer committed); like a deadlock victim, it is simply run again.
        for attempt in range(RETRIES):
            try:
                with Session(self.engine, expire_on_commit=False) as s, s.begin():
                    return fn(s, *args, **kwargs)
            except sa.exc.DBAPIError as exc:
                if attempt == RETRIES - 1 or not is_retryable(exc):
                    raise
        raise AssertionError("unreachable")

    def _writer_loop(self) -> None:
        try:
            self._write_batches()
        finally:
            self._drop_connection()

    def _write_batches(self) -> None:
        stop = False
        while not stop:
            first = self._queue.get()
            if first is None:
                return
            batch = [first]
            while len(batch) < self._max_batch:
                try:
                    nxt = self._queue.get_nowait()
                except queue.Empty:
                    break
                if nxt is None:
                    stop = True
                    break
                batch.append(nxt)
            live = [j for j in batch if not j.future.cancelled()]
            if not live:
                continue
            try:
                self._commit_batch(live)
            except BaseException as exc:  # never leave an awaiting caller hanging
                LOG.exception("database writer failed")
                self._resolve([(job, False, exc) for job in live])

    def _commit_batch(self, batch: list[_Job]) -> None:
        outcomes: list[tuple[_Job, bool, Any]] = []
        try:
            results = self._transaction(batch)
        except Exception as exc:  # each job's own error reaches its future  # noqa: BLE001
            if len(batch) == 1:
                outcomes.append((batch[0], False, exc))
            else:
                LOG.debug("write batch of %d failed; retrying one by one", len(batch))
                for job in batch:
                    try:
                        (result,) = self._transaction([job])
                    except Exception as one_exc:  # delivered to the job's future  # noqa: BLE001
                        outcomes.append((job, False, one_exc))
                    else:
                        outcomes.append((job, True, result))
        else:
            outcomes = [(job, True, r) for job, r in zip(batch, results, strict=True)]
        self._resolve(outcomes)

    def _transaction(self, jobs: list[_Job]) -> list[Any]:
        """Run ``jobs`` in one transaction, again (up to RETRIES times) if the server
        chose it as a deadlock or serialization victim: such a failure says nothing about
        the writes themselves."""
        for attempt in range(RETRIES):
            try:
                return self._transaction_once(jobs)
            except sa.exc.DBAPIError as exc:
                if attempt == RETRIES - 1 or not is_retryable(exc):
                    raise
                LOG.info("retrying a write batch after a transient database error: %s",
                         exc.orig)
        raise AssertionError("unreachable")

    def _transaction_once(self, jobs: list[_Job]) -> list[Any]:
        if not self._keep_connection:
            with self.engine.connect().execution_options(**self._write_options) as conn:
                return self._commit_on(conn, jobs)
        if self._connection is None:
            self._connection = self.engine.connect().execution_options(
                **self._write_options)
        try:
            return self._commit_on(self._connection, jobs)
        except BaseException:
            self._drop_connection()  # whatever failed, the next batch starts afresh
            raise

    def _commit_on(self, conn: sa.Connection, jobs: list[_Job]) -> list[Any]:
        with Session(bind=conn, expire_on_commit=False) as s:
            if self.write_session_info:
                s.info.update(self.write_session_info)
            with s.begin():
                results = [job.fn(s, *job.args, **job.kwargs) for job in jobs]
            self.commits += 1
            self.writes += len(jobs)
            return results

    def _drop_connection(self) -> None:
        conn, self._connection = self._connection, None
        if conn is not None:
            with contextlib.suppress(Exception):  # closing a broken connection
                conn.close()

    @staticmethod
    def _resolve(outcomes: list[tuple[_Job, bool, Any]]) -> None:
        """One wake-up per event loop per batch, not one per write."""
        by_loop: dict[asyncio.AbstractEventLoop, list[tuple[_Job, bool, Any]]] = {}
        for outcome in outcomes:
            by_loop.setdefault(outcome[0].loop, []).append(outcome)
        for loop, items in by_loop.items():
            _call_soon(loop, functools.partial(_settle, items))


def _through_session(s: Session, fn: Callable[..., T], args: tuple[Any, ...],
                     kwargs: dict[str, Any]) -> T:
    return fn(sqlite_fast.SessionRows(s), *args, **kwargs)


def is_retryable(exc: sa.exc.DBAPIError) -> bool:
    """Deadlock / serialization failure (PostgreSQL 40P01/40001, MySQL 1213/1205, SQLite
    busy/locked)."""
    orig = exc.orig
    if isinstance(orig, sqlite3.OperationalError) and (
            "locked" in str(orig) or "busy" in str(orig)):
        return True
    if getattr(orig, "sqlstate", None) in ("40001", "40P01"):
        return True
    args: tuple[Any, ...] = tuple(getattr(orig, "args", ()))
    return len(args) > 0 and args[0] in (1205, 1213)


def _settle(items: list[tuple[_Job, bool, Any]]) -> None:
    for job, ok, value in items:
        if job.future.done():
            continue
        if ok:
            job.future.set_result(value)
        else:
            job.future.set_exception(value)


def _call_soon(loop: asyncio.AbstractEventLoop, cb: Callable[[], None]) -> None:
    with contextlib.suppress(RuntimeError):  # loop already closed: nobody is waiting
        loop.call_soon_threadsafe(cb)


async def open_database(url: str | None = None, *, create: bool = True,
                        readers: int = 8) -> Database:
    """Engine for ``url`` (default: ``[database] connection`` or the SQLite file); on
    ``create``, a brand-new database gets the current schema before anything else runs."""
    from kiln.conf import CONF
    if url is None:
        url = db_engine.configured_url()
    engine = db_engine.make_engine(url, pool_size=CONF.database.max_pool_size,
                                   max_overflow=CONF.database.max_overflow,
                                   pool_timeout=CONF.database.pool_timeout)
    if create:
        await asyncio.get_running_loop().run_in_executor(None, migrate.ensure_schema, engine)
    return Database(engine, readers=readers)
