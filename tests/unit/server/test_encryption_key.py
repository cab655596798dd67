"""Which key encrypts secrets at rest (kiln.encryption_key): the operator's always, else
one generated once under state_path; Heat's sample key refused where tenants are."""

from __future__ import annotations

import logging
import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from kiln import encryption_key
from kiln.conf import CONF
from kiln.conf_loader import ConfigError, load_config
from kiln.db.crypt import LEGACY_DEFAULT_KEY


@pytest.fixture(autouse=True)
def _restore_conf() -> Iterator[None]:
    encryption_key._warned.clear()
    encryption_key._notes.clear()
    yield
    CONF.clear_override("auth_encryption_key")
    CONF.clear()
    encryption_key._warned.clear()


def conf_with(tmp_path: Path, text: str = "") -> object:
    path = tmp_path / "kiln.conf"
    path.write_text(f"[DEFAULT]\nstate_path = {tmp_path / 'state'}\n{text}")
    return load_config([str(path)])


def test_a_key_is_generated_once_private_and_reused(tmp_path: Path) -> None:
    conf_with(tmp_path)
    key = encryption_key.resolve(CONF)
    path = tmp_path / "state" / "auth_encryption_key"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert CONF.auth_encryption_key == key and len(key) == 64
    CONF.clear_override("auth_encryption_key")
    assert encryption_key.resolve(CONF) == key          # read back, not made again


def test_the_operators_key_always_wins(tmp_path: Path) -> None:
    (tmp_path / "state").mkdir()
    (tmp_path / "state" / "auth_encryption_key").write_text("generated-before\n")
    conf_with(tmp_path, "auth_encryption_key = the-operators-own-key\n")
    assert encryption_key.resolve(CONF) == "the-operators-own-key"
    assert CONF.auth_encryption_key == "the-operators-own-key"


def test_heats_sample_key_is_refused_in_keystone_mode(tmp_path: Path) -> None:
    conf_with(tmp_path, f"auth_encryption_key = {LEGACY_DEFAULT_KEY}\n"
                        "[paste_deploy]\nflavor = keystone\n")
    with pytest.raises(ConfigError, match=r"public sample value: set \[DEFAULT\] "
                                          "auth_encryption_key"):
        encryption_key.resolve(CONF)


def test_heats_sample_key_is_warned_about_once_in_noauth_mode(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    conf_with(tmp_path, f"auth_encryption_key = {LEGACY_DEFAULT_KEY}\n")
    with caplog.at_level(logging.WARNING, logger="kiln.encryption_key"):
        encryption_key.resolve(CONF)
        encryption_key.resolve(CONF)
        encryption_key.log_notes()
    assert [r.message for r in caplog.records if "sample" in r.message] == [
        "auth_encryption_key is Heat's public sample value: secrets at rest are as good "
        "as plain text; set it to a random secret or remove it to use a generated key"]


def test_a_generated_key_on_a_server_database_is_warned_about(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    conf_with(tmp_path, "[database]\nconnection = postgresql://kiln@db/kiln\n")
    with caplog.at_level(logging.WARNING, logger="kiln.encryption_key"):
        encryption_key.resolve(CONF)
        encryption_key.log_notes()
    assert any("every kiln process sharing this database must use the same key"
               in r.message for r in caplog.records)


def test_an_empty_or_unreadable_key_file_is_a_clear_error(tmp_path: Path) -> None:
    (tmp_path / "state").mkdir()
    path = tmp_path / "state" / "auth_encryption_key"
    path.write_text("")
    conf_with(tmp_path)
    with pytest.raises(ConfigError, match=r"auth_encryption_key file .* is empty"):
        encryption_key.resolve(CONF)
    if os.geteuid() != 0:   # root reads any file
        path.write_text("k")
        path.chmod(0)
        with pytest.raises(ConfigError, match="cannot read the auth_encryption_key file"):
            encryption_key.resolve(CONF)
