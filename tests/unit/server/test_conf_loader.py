"""Strict loading of heat.conf-style files: what an operator sees when the file is wrong."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from kiln.conf import CONF
from kiln.conf_loader import ConfigError, database_url, load_config, state_path


@pytest.fixture(autouse=True)
def _restore_conf() -> Iterator[None]:
    yield
    CONF.clear()  # drop parsed files; registered options and their defaults stay


def write(tmp_path: Path, text: str, name: str = "kiln.conf") -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def test_heat_conf_option_names_are_applied(tmp_path: Path) -> None:
    conf = load_config([write(tmp_path, """
[DEFAULT]
state_path = /srv/kiln
max_resources_per_stack = 20
max_stacks_per_tenant = 7
debug = true
[database]
connection = postgresql://kiln@db/kiln
[heat_api]
bind_host = 0.0.0.0
bind_port = 8204
""")])
    assert conf.state_path == "/srv/kiln"
    assert conf.max_resources_per_stack == 20
    assert conf.max_stacks_per_tenant == 7
    assert conf.debug is True
    assert conf.heat_api.bind_host == "0.0.0.0"
    assert conf.heat_api.bind_port == 8204
    assert database_url(conf) == "postgresql://kiln@db/kiln"


def test_later_file_wins(tmp_path: Path) -> None:
    first = write(tmp_path, "[heat_api]\nbind_port = 9001\n", "a.conf")
    second = write(tmp_path, "[heat_api]\nbind_port = 9002\n", "b.conf")
    assert load_config([first, second]).heat_api.bind_port == 9002


def test_section_names_match_case_insensitively_like_oslo_config(tmp_path: Path) -> None:
    conf = load_config([write(tmp_path, "[DATABASE]\nconnection = sqlite:////x.db\n")])
    assert conf.database.connection == "sqlite:////x.db"


def test_without_files_the_embedded_defaults_apply() -> None:
    conf = load_config([])
    assert conf.heat_api.bind_host == "127.0.0.1"
    assert conf.heat_api.bind_port == 8004
    assert conf.max_resources_per_stack == 1000


def test_default_database_is_sqlite_under_state_path(tmp_path: Path) -> None:
    conf = load_config([write(tmp_path, f"[DEFAULT]\nstate_path = {tmp_path}/st\n")])
    assert database_url(conf) == f"sqlite:///{tmp_path}/st/kiln.sqlite"


def test_state_path_expands_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    conf = load_config([write(tmp_path, "[DEFAULT]\nstate_path = ~/kiln-state\n")])
    assert state_path(conf) == f"{tmp_path}/kiln-state"


def test_unknown_option_is_named_with_its_section_and_file(tmp_path: Path) -> None:
    path = write(tmp_path, "[heat_api]\nbind_prot = 9000\n")
    with pytest.raises(ConfigError) as err:
        load_config([path])
    assert str(err.value) == (f"{path}: unknown option 'bind_prot' in section [heat_api]; "
                              "did you mean 'bind_port'?")


def test_option_in_the_wrong_section_is_unknown_there(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"unknown option 'bind_port' in section \[DEFAULT\]"):
        load_config([write(tmp_path, "[DEFAULT]\nbind_port = 9000\n")])


def test_unknown_section_is_named(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"unknown section \[keystone_authtokn\]"):
        load_config([write(tmp_path, "[keystone_authtokn]\nauth_url = http://x\n")])


HEAT_CONF = """\
[DEFAULT]
transport_url = rabbit://guest:guest@127.0.0.1:5672/
num_engine_workers = 4
backdoor_port = 0
heat_metadata_server_url = http://10.0.0.5:8000
max_resources_per_stack = 2000
[database]
connection = sqlite:///{db}
[keystone_authtoken]
auth_type = password
auth_url = http://keystone:5000
username = heat
password = secret
project_name = service
[trustee]
auth_type = password
username = heat
[oslo_messaging_rabbit]
rabbit_ha_queues = false
[heat_api]
bind_port = 8204
"""


def test_an_operators_heat_conf_starts_with_heats_own_options_ignored(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    # Heat's options Kiln has are applied (the Keystone middleware's and the trustee's
    # auth plugins too, oslo.messaging's for notifications); Heat's options Kiln does not
    # implement are accepted and named in a warning
    path = write(tmp_path, HEAT_CONF.format(db=tmp_path / "k.sqlite"))
    with caplog.at_level("WARNING", logger="kiln.conf_loader"):
        conf = load_config([path])
    assert conf.max_resources_per_stack == 2000
    assert conf.heat_api.bind_port == 8204
    assert conf.heat_metadata_server_url == "http://10.0.0.5:8000"
    assert conf.keystone_authtoken.auth_type == "password"
    assert conf.trustee.auth_type == "password"
    assert conf.transport_url == "rabbit://guest:guest@127.0.0.1:5672/"
    assert conf.control_exchange == "heat"
    assert conf.oslo_messaging_notifications.driver == []
    (warning,) = [r.getMessage() for r in caplog.records if r.name == "kiln.conf_loader"]
    assert conf.num_engine_workers == 4
    assert "DEFAULT.backdoor_port" in warning and "num_engine_workers" not in warning
    assert "transport_url" not in warning and "oslo_messaging_rabbit" not in warning
    assert "keystone_authtoken" not in warning and "trustee" not in warning


def test_a_misspelt_auth_plugin_option_is_refused(tmp_path: Path) -> None:
    text = "[keystone_authtoken]\nauth_type = password\nusername = heat\nusrname = x\n"
    with pytest.raises(ConfigError, match="unknown option 'usrname' in section "
                                          r"\[keystone_authtoken\]"):
        load_config([write(tmp_path, text)])


def test_a_misspelt_option_is_still_refused_in_a_heat_conf(tmp_path: Path) -> None:
    text = HEAT_CONF.format(db=tmp_path / "k.sqlite") + "max_resources_per_stak = 3\n"
    with pytest.raises(ConfigError, match="unknown option 'max_resources_per_stak'"):
        load_config([write(tmp_path, text)])


def test_oslo_config_command_line_options_are_not_file_keys(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="unknown option 'config_file'"):
        load_config([write(tmp_path, "[DEFAULT]\nconfig_file = other.conf\n")])


@pytest.mark.parametrize(("text", "option", "section"), [
    ("[heat_api]\nbind_port = http\n", "bind_port", "heat_api"),
    ("[heat_api]\nbind_port = 70000\n", "bind_port", "heat_api"),
    ("[DEFAULT]\ndebug = perhaps\n", "debug", "DEFAULT"),
    ("[DEFAULT]\nmax_resources_per_stack = many\n", "max_resources_per_stack", "DEFAULT"),
    ("[DEFAULT]\ngraceful_shutdown_timeout = -1\n", "graceful_shutdown_timeout", "DEFAULT"),
])
def test_invalid_value_is_named(tmp_path: Path, text: str, option: str, section: str) -> None:
    path = write(tmp_path, text)
    with pytest.raises(ConfigError) as err:
        load_config([path])
    assert str(err.value).startswith(
        f"{path}: invalid value for option '{option}' in section [{section}]: ")


def test_invalid_value_names_the_file_that_set_it(tmp_path: Path) -> None:
    """Of several files, the one whose value is in effect (the last setting it)."""
    bad = tmp_path / "bad.conf"
    bad.write_text("[heat_api]\nbind_port = http\n")
    later = tmp_path / "later.conf"
    later.write_text("[DEFAULT]\ndebug = true\n")
    with pytest.raises(ConfigError) as err:
        load_config([str(bad), str(later)])
    assert str(err.value).startswith(
        f"{bad}: invalid value for option 'bind_port' in section [heat_api]: ")


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"configuration file not found: .*nope\.conf"):
        load_config([str(tmp_path / "nope.conf")])


def test_unparsable_file_reports_line(tmp_path: Path) -> None:
    path = write(tmp_path, "[DEFAULT]\ndebug = true\nthis is not an assignment\n")
    with pytest.raises(ConfigError, match=r"cannot parse: .*\(line 3\)"):
        load_config([path])


def test_assignment_before_any_section(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="Section must be started"):
        load_config([write(tmp_path, "debug = true\n")])
