"""Schema creation and upgrades.

``upgrade(url)`` is what ``kiln db upgrade`` runs: plain Alembic over
``kiln/db/migrations``. Startup uses ``ensure_schema``: a brand-new database gets
``create_all`` plus a hand-written ``alembic_version`` row (no Alembic import, which keeps
``kiln serve`` startup fast); a database at HEAD is left alone; anything older is upgraded
with Alembic. A test checks that the migrations and the models describe the same schema,
so the two paths cannot drift apart.
"""

from __future__ import annotations

import os

import sqlalchemy as sa

from kiln.db import models

#: The newest migration's revision id; a test checks it equals Alembic's head.
HEAD = "0011_stack_converge"
MIGRATIONS_DIR = os.path.join(os.path.dirname(__file__), "migrations")


def _alembic_config(connection: sa.Connection) -> object:
    from alembic.config import Config

    cfg = Config()
    cfg.set_main_option("script_location", MIGRATIONS_DIR)
    cfg.attributes["connection"] = connection
    return cfg


def upgrade(url: str, revision: str = "head") -> None:
    """Bring the database at ``url`` to ``revision`` (default: the newest)."""
    from alembic import command

    from kiln.db.engine import make_engine

    engine = make_engine(url)
    try:
        with engine.begin() as conn:
            command.upgrade(_alembic_config(conn), revision)  # type: ignore[arg-type]
    finally:
        engine.dispose()


def current_revision(engine: sa.Engine) -> str | None:
    with engine.connect() as conn:
        if not sa.inspect(conn).has_table("alembic_version"):
            return None
        return conn.execute(sa.text("SELECT version_num FROM alembic_version")).scalar()


def ensure_schema(engine: sa.Engine) -> None:
    """Make the database usable by this version of Kiln, as cheaply as possible.

    Several processes (``kiln api`` and ``kiln engine``) may start at once on the same new
    database, so the check-and-create runs under a lock every backend offers: SQLite's
    write lock, a PostgreSQL advisory lock, a MariaDB named lock."""
    if _create_if_empty(engine):
        return
    if current_revision(engine) == HEAD:
        return
    from alembic import command

    with engine.begin() as conn:
        command.upgrade(_alembic_config(conn), "head")  # type: ignore[arg-type]


_LOCK_NAME = "kiln_schema"
_PG_LOCK_KEY = 0x6B696C6E  # "kiln"


def _create_if_empty(engine: sa.Engine) -> bool:
    """create_all + stamp on a database without tables; False if it has some."""
    dialect = engine.dialect.name
    options = {"kiln_begin": "IMMEDIATE"} if dialect == "sqlite" else {}
    with engine.connect().execution_options(**options) as conn:
        if dialect in ("mysql", "mariadb"):
            conn.execute(sa.text("SELECT GET_LOCK(:n, 60)"), {"n": _LOCK_NAME})
            conn.commit()   # the named lock belongs to the session, not the transaction
        try:
            with conn.begin():
                if dialect == "postgresql":
                    conn.execute(sa.text("SELECT pg_advisory_xact_lock(:k)"),
                                 {"k": _PG_LOCK_KEY})
                if sa.inspect(conn).get_table_names():
                    return False
                models.Base.metadata.create_all(conn)
                conn.execute(sa.insert(models.ChangeCounter),
                             [{"name": n, "value": 0} for n in models.CHANGE_COUNTERS])
                version = sa.Table("alembic_version", sa.MetaData(),
                                   sa.Column("version_num", sa.String(32), primary_key=True))
                version.create(conn)
                conn.execute(version.insert().values(version_num=HEAD))
            return True
        finally:
            if dialect in ("mysql", "mariadb"):
                conn.execute(sa.text("SELECT RELEASE_LOCK(:n)"), {"n": _LOCK_NAME})
                conn.commit()
