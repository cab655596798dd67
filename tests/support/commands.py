"""Running the `kiln` command itself (not a server) the way an operator would."""

from __future__ import annotations

import subprocess
from pathlib import Path

import sqlalchemy as sa

from tests.support.server import clean_env, kiln_command

#: Tables every Kiln database has (Heat's names for the same things).
CORE_TABLES = {"raw_template", "stack", "resource", "resource_data", "event", "snapshot",
               "software_config", "software_deployment", "service"}


def run_kiln(*args: str, cwd: Path, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*kiln_command(), *args], capture_output=True, text=True, timeout=timeout, cwd=cwd,
        env=clean_env(), check=False)


def db_upgrade(tmp_path: Path, url: str | None) -> subprocess.CompletedProcess[str]:
    """`kiln db upgrade` with a config naming ``url`` (or none: the embedded default)."""
    conf = tmp_path / "kiln.conf"
    body = f"[DEFAULT]\nstate_path = {tmp_path}/state\n"
    if url:
        body += f"[database]\nconnection = {url}\n"
    conf.write_text(body)
    return run_kiln("db", "upgrade", "--config-file", str(conf), cwd=tmp_path)


def schema_of(url: str) -> tuple[set[str], list[str]]:
    """(table names, alembic_version rows) of the database at ``url``."""
    engine = sa.create_engine(url)
    try:
        with engine.connect() as conn:
            tables = set(sa.inspect(conn).get_table_names())
            versions = [row[0] for row in conn.execute(
                sa.text("SELECT version_num FROM alembic_version"))]
    finally:
        engine.dispose()
    return tables, versions


def check_upgrade_twice(tmp_path: Path, url: str | None, expect_url: str) -> None:
    """The schema is created at the newest revision, and a second run changes nothing."""
    from kiln.db.migrate import HEAD

    first = db_upgrade(tmp_path, url)
    assert first.returncode == 0, first.stderr
    assert "upgraded to head" in first.stdout
    tables, versions = schema_of(expect_url)
    assert tables >= CORE_TABLES
    assert versions == [HEAD]
    second = db_upgrade(tmp_path, url)
    assert second.returncode == 0, second.stderr
    assert schema_of(expect_url) == (tables, versions)
