"""`kiln db upgrade` against real PostgreSQL and MariaDB servers (fresh database each)."""

from __future__ import annotations

import re
import subprocess
import uuid
from pathlib import Path

import pytest
import sqlalchemy as sa
from sqlalchemy.engine import make_url

from tests.support import docs
from tests.support.commands import check_upgrade_twice
from tests.support.server import clean_env


@pytest.mark.postgresql
def test_postgresql(tmp_path: Path, postgresql_url: str) -> None:
    check_upgrade_twice(tmp_path, postgresql_url, postgresql_url)


@pytest.mark.postgresql
def test_postgresql_bare_dialect_name_uses_psycopg(tmp_path: Path, postgresql_url: str) -> None:
    bare = postgresql_url.replace("postgresql+psycopg://", "postgresql://")
    check_upgrade_twice(tmp_path, bare, postgresql_url)


@pytest.mark.mysql
def test_mariadb(tmp_path: Path, mysql_url: str) -> None:
    check_upgrade_twice(tmp_path, mysql_url, mysql_url)


# -- the database setup of docs/running.md ("Databases"), run as written ------------------
# (the names `kiln` made unique, the server's address from the test's URL; the users and
# databases are dropped afterwards)

def _documented(kind: str) -> tuple[str, list[str]]:
    """The page's shell command for ``kind`` (psql or mysql) and the URLs it shows."""
    section = docs.section(docs.page("running.md"), "Databases")
    [command] = [line for line in re.findall(r"```sh\n(.*?)```", section, re.S)
                 if line.startswith(kind + " ")]
    urls = re.findall(r"^connection = (\S+)$", docs.page("running.md"), re.M)
    return command.strip(), urls


def _own_names(text: str, name: str) -> str:
    return re.sub(r"\bkiln\b", name, text)


def _server(url: str, name: str, doc_url: str) -> str:
    """The page's URL pointed at the test's server, with this test's names."""
    server = make_url(url)
    return _own_names(doc_url, name).replace(
        "@db.example.com/", f"@{server.host}:{server.port}/")


@pytest.mark.postgresql
def test_the_documented_postgresql_setup(tmp_path: Path, postgresql_url: str) -> None:
    command, urls = _documented("psql")
    name = f"kiln_docs_{uuid.uuid4().hex[:8]}"
    server = make_url(postgresql_url)
    env = {**clean_env(), "PGHOST": str(server.host), "PGPORT": str(server.port)}
    admin = sa.create_engine(server.set(database="postgres"), isolation_level="AUTOCOMMIT")
    try:
        done = subprocess.run(["bash", "-c", _own_names(command, name)], env=env,
                              capture_output=True, text=True, timeout=60, check=False)
        assert done.returncode == 0, done.stderr
        [bare] = [u for u in urls if u.startswith("postgresql://")]
        url = _server(postgresql_url, name, bare)
        check_upgrade_twice(tmp_path, url, url.replace("postgresql://",
                                                       "postgresql+psycopg://"))
    finally:
        with admin.connect() as conn:
            conn.execute(sa.text(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)"))
            conn.execute(sa.text(f"DROP USER IF EXISTS {name}"))
        admin.dispose()


@pytest.mark.mysql
def test_the_documented_mariadb_setup(tmp_path: Path, mysql_url: str) -> None:
    command, urls = _documented("mysql")
    name = f"kiln_docs_{uuid.uuid4().hex[:8]}"
    server = make_url(mysql_url)
    env = {**clean_env(), "MYSQL_HOST": str(server.host), "MYSQL_TCP_PORT": str(server.port)}
    admin = sa.create_engine(server.set(database=None))
    forms = [u for u in urls if u.startswith("mysql")]
    assert {u.split("://")[0] for u in forms} == {"mysql", "mysql+pymysql"}
    try:
        done = subprocess.run(["bash", "-c", _own_names(command, name)], env=env,
                              capture_output=True, text=True, timeout=60, check=False)
        assert done.returncode == 0, done.stderr
        for form in forms:   # both URL forms reach the same database the same way
            url = _server(mysql_url, name, form)
            expect = "mysql+pymysql://" + url.split("://", 1)[1]
            check_upgrade_twice(tmp_path, url, expect)
            with sa.create_engine(expect).begin() as conn:
                assert conn.execute(sa.text("SELECT @@character_set_database")).scalar() == \
                    "utf8mb4"
                conn.execute(sa.text("SET FOREIGN_KEY_CHECKS = 0"))
                for table in sa.inspect(conn).get_table_names():
                    conn.execute(sa.text(f"DROP TABLE `{table}`"))
    finally:
        with admin.begin() as conn:
            conn.execute(sa.text(f"DROP DATABASE IF EXISTS {name}"))
            conn.execute(sa.text(f"DROP USER IF EXISTS '{name}'@'%'"))
        admin.dispose()
