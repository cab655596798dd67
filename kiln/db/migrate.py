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
HEAD = "0001_initial"
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
    """Make the database usable by this version of Kiln, as cheaply as possible."""
    with engine.connect() as conn:
        tables = set(sa.inspect(conn).get_table_names())
    if not tables:
        with engine.begin() as conn:
            models.Base.metadata.create_all(conn)
            version = sa.Table("alembic_version", sa.MetaData(),
                               sa.Column("version_num", sa.String(32), primary_key=True))
            version.create(conn)
            conn.execute(version.insert().values(version_num=HEAD))
        return
    if current_revision(engine) == HEAD:
        return
    from alembic import command

    with engine.begin() as conn:
        command.upgrade(_alembic_config(conn), "head")  # type: ignore[arg-type]
