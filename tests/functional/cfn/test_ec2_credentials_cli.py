"""``kiln ec2-credentials``: the operator issues and revokes keypairs on the database
the server uses (no identity service to ask)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import sqlalchemy as sa

from kiln.db import crypt
from kiln.db.engine import make_engine
from tests.support.server import clean_env, kiln_command, write_config


def kiln(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*kiln_command(), *args], capture_output=True, text=True,
                          env=clean_env(), cwd=cwd, timeout=60, check=False)


def test_create_then_delete(tmp_path: Path) -> None:
    conf = write_config(tmp_path / "kiln.conf", {"DEFAULT": {"state_path": tmp_path / "st"}})
    made = kiln("ec2-credentials", "create", "--config-file", str(conf), "--project", "demo",
                cwd=tmp_path)
    assert made.returncode == 0, made.stderr
    issued = json.loads(made.stdout)
    assert issued["project_id"] == "demo" and issued["user_id"] == "admin"
    assert len(issued["access"]) == 20 and len(issued["secret"]) == 40

    engine = make_engine(f"sqlite:///{tmp_path / 'st' / 'kiln.sqlite'}")
    with engine.connect() as conn:
        stored = conn.execute(sa.text("SELECT secret FROM ec2_keypair")).scalar_one()
    engine.dispose()
    assert issued["secret"] not in stored
    # encrypted with the key the command generated in state_path (none was configured)
    key = (tmp_path / "st" / "auth_encryption_key").read_text().strip()
    token = stored[len(crypt.PREFIX):].encode()
    assert crypt._fernet(key).decrypt(token).decode() == issued["secret"]

    other = kiln("ec2-credentials", "create", "--config-file", str(conf), "--project", "ops",
                 "--user", "u2", cwd=tmp_path)
    assert other.returncode == 0, other.stderr
    listed = kiln("ec2-credentials", "list", "--config-file", str(conf), cwd=tmp_path)
    assert listed.returncode == 0, listed.stderr
    rows = json.loads(listed.stdout)
    assert [(r["access"], r["project_id"]) for r in rows] == [
        (issued["access"], "demo"), (json.loads(other.stdout)["access"], "ops")]
    assert all(r["stack_id"] is None for r in rows)
    assert issued["secret"] not in listed.stdout and "secret" not in rows[0]
    only = kiln("ec2-credentials", "list", "--config-file", str(conf), "--project", "demo",
                cwd=tmp_path)
    assert [r["access"] for r in json.loads(only.stdout)] == [issued["access"]]

    gone = kiln("ec2-credentials", "delete", "--config-file", str(conf), issued["access"],
                cwd=tmp_path)
    assert gone.returncode == 0 and gone.stdout.strip() == f"deleted {issued['access']}"
    again = kiln("ec2-credentials", "delete", "--config-file", str(conf), issued["access"],
                 cwd=tmp_path)
    assert again.returncode == 1
    assert f"no EC2 keypair {issued['access']}" in again.stderr
