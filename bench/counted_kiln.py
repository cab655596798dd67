"""The ordinary ``kiln`` command, counting what it sends to the broker and the database,
for bench/scaleout_bench.py.

    python bench/counted_kiln.py DIR engine --config-file kiln.conf

The machine's RabbitMQ has no management plugin and its PostgreSQL does not preload
pg_stat_statements (neither may be reconfigured: they are shared), so the counts are
taken where the messages and statements leave the process: every ``kombu`` publish
(oslo.messaging's rabbit driver sends through it: casts, calls, replies) and every
statement SQLAlchemy hands its DBAPI cursor. They are written to ``DIR/<pid>.json``
every half second (whole, or not there), so the bench reads them over a measured
interval without stopping the process. Nothing else changes.
"""

from __future__ import annotations

import collections
import json
import os
import sys
import threading
import time
from pathlib import Path
from typing import Any


def _method(body: Any) -> str | None:
    """The RPC method of an oslo.messaging request (``invoke.<EngineService method>``)."""
    try:
        envelope = body if isinstance(body, dict) else json.loads(body)
        message = envelope.get("oslo.message", envelope)
        message = message if isinstance(message, dict) else json.loads(message)
        method = str(message.get("method"))
        name = (message.get("args") or {}).get("name")
    except (ValueError, TypeError, KeyError, AttributeError):
        return None
    return f"{method}.{name}" if name else method


def _install(counts: collections.Counter[str], lock: threading.Lock) -> None:
    from kombu.messaging import Producer
    from sqlalchemy import event
    from sqlalchemy.engine import Engine

    publish = Producer.publish

    def counted_publish(self: Any, body: Any, routing_key: str | None = None,
                        *args: Any, **kwargs: Any) -> Any:
        exchange = kwargs.get("exchange") or getattr(self.exchange, "name", "") or ""
        kind = "reply" if str(routing_key or "").startswith("reply_") else "request"
        method = _method(body) if kind == "request" else None
        with lock:
            counts["publish"] += 1
            counts[f"publish.{kind}"] += 1
            counts["publish_bytes"] += len(body) if isinstance(body, (bytes, str)) else 0
            counts[f"publish.exchange.{'direct' if not exchange else 'named'}"] += 1
            if method:
                counts[f"publish.method.{method}"] += 1
        return publish(self, body, routing_key, *args, **kwargs)

    Producer.publish = counted_publish  # type: ignore[method-assign]

    def before(conn: Any, cursor: Any, statement: str, parameters: Any, context: Any,
               executemany: bool) -> None:
        verb = statement.lstrip().split(None, 1)[0].upper() if statement.strip() else "?"
        rows = len(parameters) if executemany and parameters is not None else 1
        with lock:
            counts["sql"] += 1
            counts[f"sql.{verb}"] += 1
            if verb in ("INSERT", "UPDATE", "DELETE"):
                counts["sql.write_rows_sent"] += rows
                words = statement.split()
                table = words[2] if verb in ("INSERT", "DELETE") and len(words) > 2 else (
                    words[1] if len(words) > 1 else "?")
                counts[f"sql.{verb}.{table.strip(chr(34))}"] += 1

    def commit(conn: Any) -> None:
        with lock:
            counts["sql.COMMIT"] += 1

    event.listen(Engine, "before_cursor_execute", before)
    event.listen(Engine, "commit", commit)


def main() -> None:
    directory = Path(sys.argv[1])
    directory.mkdir(parents=True, exist_ok=True)
    counts: collections.Counter[str] = collections.Counter()
    lock = threading.Lock()
    _install(counts, lock)
    out = directory / f"{os.getpid()}.json"

    def dump() -> None:
        while True:
            time.sleep(0.5)  # a periodic snapshot: the bench reads deltas between two
            with lock:
                data = dict(counts)
            partial = out.with_suffix(".partial")
            partial.write_text(json.dumps(data))
            os.replace(partial, out)

    threading.Thread(target=dump, name="bench-counts", daemon=True).start()
    sys.argv = ["kiln", *sys.argv[2:]]
    from kiln.cli import main as kiln_main

    kiln_main()


if __name__ == "__main__":
    main()
