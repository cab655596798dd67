"""Fresh, uniquely named databases on SQLite, PostgreSQL and MariaDB for one test each.

The server URLs come from ``KILN_TEST_PG_URL`` / ``KILN_TEST_MYSQL_URL`` (docs/contracts.md
§0); the database name in them is replaced by a new ``kiln_test_<random>`` database that is
dropped afterwards, so tests running in parallel never see each other's rows.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from sqlalchemy.engine import URL, make_url

from tests.support.services import unavailable

PG_DEFAULT = "postgresql+psycopg://postgres@127.0.0.1:5432/test"
MYSQL_DEFAULT = "mysql+pymysql://root@127.0.0.1:3306/test"


def pg_server_url() -> URL:
    return make_url(os.environ.get("KILN_TEST_PG_URL", PG_DEFAULT))


def mysql_server_url() -> URL:
    return make_url(os.environ.get("KILN_TEST_MYSQL_URL", MYSQL_DEFAULT))


def _unique_name() -> str:
    return f"kiln_test_{uuid.uuid4().hex[:12]}"


def sqlite_database(directory: Path) -> str:
    return f"sqlite:///{directory / 'kiln.sqlite'}"


@contextmanager
def postgresql_database() -> Iterator[str]:
    """A new empty PostgreSQL database; skip/fail (see services) if the server is down."""
    import psycopg

    server = pg_server_url()
    admin = dict(host=server.host or "127.0.0.1", port=server.port or 5432,
                 user=server.username or "postgres", password=server.password or None,
                 dbname="postgres", autocommit=True, connect_timeout=5)
    name = _unique_name()
    try:
        with psycopg.connect(**admin) as conn:  # type: ignore[arg-type]
            conn.execute(f'CREATE DATABASE "{name}"')
    except psycopg.OperationalError as exc:
        unavailable(f"PostgreSQL at {server.host}:{server.port} is not available: {exc}")
    try:
        yield server.set(database=name).render_as_string(hide_password=False)
    finally:
        with psycopg.connect(**admin) as conn:  # type: ignore[arg-type]
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@contextmanager
def mysql_database() -> Iterator[str]:
    """A new empty MariaDB/MySQL database; skip/fail (see services) if the server is down."""
    import pymysql

    server = mysql_server_url()
    params = dict(host=server.host or "127.0.0.1", port=server.port or 3306,
                  user=server.username or "root", password=server.password or "",
                  connect_timeout=5)
    name = _unique_name()
    try:
        conn = pymysql.connect(**params)  # type: ignore[arg-type]
    except pymysql.err.OperationalError as exc:
        unavailable(f"MariaDB/MySQL at {server.host}:{server.port} is not available: {exc}")
    try:
        with conn.cursor() as cur:
            cur.execute(f"CREATE DATABASE `{name}` CHARACTER SET utf8mb4")
    finally:
        conn.close()
    try:
        yield server.set(database=name).render_as_string(hide_password=False)
    finally:
        conn = pymysql.connect(**params)  # type: ignore[arg-type]
        try:
            with conn.cursor() as cur:
                cur.execute(f"DROP DATABASE IF EXISTS `{name}`")
        finally:
            conn.close()
