"""The Alembic migrations and the models describe the same schema; startup is cheap."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import sqlalchemy as sa
from alembic.autogenerate import compare_metadata
from alembic.config import Config
from alembic.migration import MigrationContext
from alembic.script import ScriptDirectory

from kiln.db import migrate
from kiln.db.engine import make_engine
from kiln.db.models import Base


def test_head_constant_matches_the_migration_scripts() -> None:
    cfg = Config()
    cfg.set_main_option("script_location", migrate.MIGRATIONS_DIR)
    assert ScriptDirectory.from_config(cfg).get_heads() == [migrate.HEAD]


def test_alembic_upgrade_builds_exactly_the_models(url: str) -> None:
    migrate.upgrade(url)
    eng = make_engine(url)
    try:
        with eng.connect() as conn:
            diff = compare_metadata(MigrationContext.configure(conn), Base.metadata)
        assert diff == []
        assert migrate.current_revision(eng) == migrate.HEAD
        migrate.ensure_schema(eng)      # at head already: a no-op
        assert migrate.current_revision(eng) == migrate.HEAD
    finally:
        eng.dispose()


def test_ensure_schema_on_empty_database_stamps_head(engine: sa.Engine) -> None:
    # the ``engine`` fixture ran ensure_schema on a brand-new database
    assert migrate.current_revision(engine) == migrate.HEAD
    with engine.connect() as conn:
        diff = compare_metadata(MigrationContext.configure(conn), Base.metadata)
    assert diff == []


def test_processes_starting_together_on_a_new_database_both_succeed(url: str) -> None:
    engines = [make_engine(url) for _ in range(3)]
    barrier = threading.Barrier(len(engines))
    failures: list[BaseException] = []

    def start(eng: sa.Engine) -> None:
        try:
            barrier.wait(timeout=10)
            migrate.ensure_schema(eng)
        except BaseException as exc:  # reported below  # noqa: BLE001
            failures.append(exc)

    threads = [threading.Thread(target=start, args=(e,)) for e in engines]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    try:
        assert failures == []
        assert migrate.current_revision(engines[0]) == migrate.HEAD
        with engines[0].connect() as conn:
            assert compare_metadata(MigrationContext.configure(conn), Base.metadata) == []
            assert conn.execute(sa.text("SELECT COUNT(*) FROM alembic_version")).scalar() == 1
    finally:
        for e in engines:
            e.dispose()


def test_alembic_command_line_with_the_shipped_ini(url: str) -> None:
    from alembic.config import main as alembic_main

    ini = os.path.join(os.path.dirname(migrate.MIGRATIONS_DIR), "alembic.ini")
    alembic_main(argv=["-c", ini, "-x", f"url={url}", "upgrade", "head"])
    eng = make_engine(url)
    try:
        assert migrate.current_revision(eng) == migrate.HEAD
    finally:
        eng.dispose()


def test_sqlite_connections_opening_together_on_a_new_file_all_get_wal(tmp_path: Path) -> None:
    """Switching a new file to WAL needs it to itself, and SQLite refuses at once rather
    than waiting: without a retry about one start in ten failed with "database is
    locked". Forty new files, three connections racing on each."""
    failures: list[BaseException] = []
    for attempt in range(40):
        url = f"sqlite:///{tmp_path / f'race-{attempt}.sqlite'}"
        engines = [make_engine(url) for _ in range(3)]
        barrier = threading.Barrier(len(engines))

        def connect(eng: sa.Engine, barrier: threading.Barrier) -> None:
            try:
                barrier.wait(timeout=10)
                with eng.connect() as conn:
                    mode = conn.exec_driver_sql("PRAGMA journal_mode").scalar()
                    assert mode == "wal"
            except BaseException as exc:  # reported below  # noqa: BLE001
                failures.append(exc)

        threads = [threading.Thread(target=connect, args=(e, barrier)) for e in engines]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=60)
        for e in engines:
            e.dispose()
    assert failures == []
