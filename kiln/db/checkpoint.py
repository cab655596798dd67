"""SQLite's WAL checkpoints, moved off the writer's commits.

By default SQLite checkpoints inside the commit that takes the WAL past 1,000 pages:
that commit copies ~4 MB into the database file and fsyncs it, 10-150 ms on this
project's machines, and every write queued behind the writer thread (a signal, a status
change) waits that long. Under a steady stream of signals that was the tail of their
latency (bench/cfn_bench.py: p50 7 ms, p99 104 ms on an idle machine).

A thread of its own checkpoints instead (PASSIVE: it never blocks the writer or a
reader), within a second of commits, so the WAL never reaches the size at which a commit
would do it itself; SQLite's own automatic checkpoint stays as the safety net.
"""

from __future__ import annotations

import contextlib
import logging
import sqlite3
import threading

LOG = logging.getLogger(__name__)

#: Seconds between checkpoints while commits keep coming: a few hundred pages each at
#: 500 signals/s, below the 1,000 at which a commit checkpoints itself (each checkpoint
#: has a fixed cost, two fsyncs: at 0.25 s they cost ~0.07 ms of CPU per signal).
INTERVAL = 1.0


class Checkpointer:
    """Checkpoints the SQLite file at ``path`` from its own thread after commits."""

    def __init__(self, path: str, *, busy_timeout_ms: int) -> None:
        self._path = path
        self._busy_timeout_ms = busy_timeout_ms
        self._committed = threading.Event()
        self._stopping = threading.Event()
        self.checkpoints = 0
        self._thread = threading.Thread(target=self._loop, name="kiln-db-checkpoint",
                                        daemon=True)
        self._thread.start()

    def committed(self) -> None:
        """A commit added pages to the WAL (called by the writer, cheap)."""
        self._committed.set()

    def stop(self) -> None:
        self._stopping.set()
        self._committed.set()
        self._thread.join()

    def _loop(self) -> None:
        conn: sqlite3.Connection | None = None
        try:
            while True:
                self._committed.wait()
                # pace: one checkpoint per interval however many commits came
                if self._stopping.wait(INTERVAL):
                    return
                self._committed.clear()
                if conn is None:
                    conn = sqlite3.connect(self._path, isolation_level=None,
                                           check_same_thread=False)
                    conn.execute(f"PRAGMA busy_timeout={self._busy_timeout_ms}")
                try:
                    conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchall()
                    self.checkpoints += 1
                except sqlite3.Error as exc:
                    # the commit's own automatic checkpoint still bounds the WAL
                    LOG.warning("WAL checkpoint failed: %s", exc)
        finally:
            if conn is not None:
                with contextlib.suppress(sqlite3.Error):
                    conn.close()
