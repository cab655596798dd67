"""Alembic environment: runs on the connection handed over by ``kiln.db.migrate``, or on
``sqlalchemy.url`` when Alembic's own command line is used."""

from __future__ import annotations

from alembic import context

from kiln.db import models
from kiln.db.engine import make_engine

config = context.config
target_metadata = models.Base.metadata


def run() -> None:
    connection = config.attributes.get("connection")
    if connection is not None:
        context.configure(
            connection=connection, target_metadata=target_metadata, render_as_batch=True
        )
        with context.begin_transaction():
            context.run_migrations()
        return
    url = context.get_x_argument(as_dictionary=True).get("url") or config.get_main_option(
        "sqlalchemy.url")
    if not url:
        raise RuntimeError("no database: set sqlalchemy.url or use kiln db upgrade")
    engine = make_engine(url)
    with engine.begin() as conn:
        context.configure(connection=conn, target_metadata=target_metadata, render_as_batch=True)
        with context.begin_transaction():
            context.run_migrations()
    engine.dispose()


run()
