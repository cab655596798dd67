"""What an operator sees when `kiln` is started with a bad configuration.

Each case runs the installed `kiln` command as a process: a clear one-line message naming
the problem, a non-zero exit status, and no Python traceback.
"""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from tests.support.commands import run_kiln as kiln

CONFIG_ERROR = 2


def config(tmp_path: Path, body: str) -> str:
    path = tmp_path / "kiln.conf"
    path.write_text(f"[DEFAULT]\nstate_path = {tmp_path}/state\n{body}")
    return str(path)


@pytest.mark.parametrize("command", ["serve", "api", "engine"])
def test_unknown_option_stops_every_server_command(tmp_path: Path, command: str) -> None:
    path = config(tmp_path, "max_resource_per_stack = 10\n")
    result = kiln(command, "--config-file", path, cwd=tmp_path)
    assert result.returncode == CONFIG_ERROR
    assert result.stderr == (
        f"kiln: error: {path}: unknown option 'max_resource_per_stack' in section [DEFAULT]; "
        "did you mean 'max_resources_per_stack'?\n")
    assert not (tmp_path / "state").exists()


@pytest.mark.parametrize(("body", "message"), [
    # what was expected and what was given, not Python's words ("invalid literal for
    # int() with base 10: 'eighty'")
    ("[heat_api]\nbind_port = eighty\n",
     "{path}: invalid value for option 'bind_port' in section [heat_api]: expected a port "
     "number from 0 to 65535, got 'eighty'\n"),
    ("[heat_api]\nbind_port = 65536\n",
     "{path}: invalid value for option 'bind_port' in section [heat_api]: expected a port "
     "number from 0 to 65535, got '65536'\n"),
    ("[kiln_alarms]\nevaluation_interval = abc\n",
     "{path}: invalid value for option 'evaluation_interval' in section [kiln_alarms]: "
     "expected a number of at least 0.05, got 'abc'\n"),
    ("debug = sometimes\n", "{path}: invalid value for option 'debug' in section [DEFAULT]: "
     "expected true or false, got 'sometimes'\n"),
    ("[heat_apii]\nbind_port = 1\n", "unknown section [heat_apii]; did you mean [heat_api]?\n"),
    ("this line is broken\n", "cannot parse"),
])
def test_bad_config_is_one_clear_line(tmp_path: Path, body: str, message: str) -> None:
    path = config(tmp_path, body)
    result = kiln("serve", "--config-file", path, cwd=tmp_path)
    assert result.returncode == CONFIG_ERROR
    assert result.stderr.startswith("kiln: error: ")
    assert message.format(path=path) in result.stderr
    assert "Traceback" not in result.stderr + result.stdout
    assert len(result.stderr.splitlines()) == 1


def test_missing_config_file(tmp_path: Path) -> None:
    result = kiln("serve", "--config-file", str(tmp_path / "absent.conf"), cwd=tmp_path)
    assert result.returncode == CONFIG_ERROR
    assert result.stderr == f"kiln: error: configuration file not found: {tmp_path}/absent.conf\n"


def test_port_already_in_use_is_a_clear_startup_error(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = kiln("serve", "--config-file",
                      config(tmp_path, f"[heat_api]\nbind_port = {port}\n"), cwd=tmp_path)
    assert result.returncode == 1
    assert f"kiln: error: cannot listen on 127.0.0.1:{port}: address already in use" \
        in result.stderr
    assert "Traceback" not in result.stderr


def test_unwritable_state_path_is_a_config_error(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    path = tmp_path / "kiln.conf"
    path.write_text(f"[DEFAULT]\nstate_path = {blocker}/state\n")
    result = kiln("db", "upgrade", "--config-file", str(path), cwd=tmp_path)
    assert result.returncode == CONFIG_ERROR
    assert result.stderr.startswith("kiln: error: cannot create state directory")
    assert "Traceback" not in result.stderr


def test_version(tmp_path: Path) -> None:
    from kiln import __version__
    result = kiln("--version", cwd=tmp_path)
    assert result.returncode == 0
    assert result.stdout == f"kiln, version {__version__}\n"


def test_several_api_workers_without_a_broker_are_refused(tmp_path: Path) -> None:
    # each process would run the actions it accepts: another's stacks would be out of
    # reach (tests/integration/test_workers.py runs them with a broker)
    result = kiln("serve", "--config-file", config(tmp_path, "[heat_api]\nworkers = 4\n"),
                  cwd=tmp_path)
    assert result.returncode == CONFIG_ERROR
    assert result.stderr.startswith("kiln: error: [heat_api] workers = 4 (4 processes) "
                                    "needs [DEFAULT] transport_url")


def _garbage(path: Path, tmp_path: Path) -> None:
    path.write_bytes(b"this is no database\n" * 200)


def _truncated(path: Path, tmp_path: Path) -> None:
    conf = tmp_path / "make.conf"
    conf.write_text(f"[DEFAULT]\nstate_path = {tmp_path}/make\n"
                    f"[database]\nconnection = sqlite:///{path}\n")
    assert kiln("db", "upgrade", "--config-file", str(conf), cwd=tmp_path).returncode == 0
    whole = path.read_bytes()
    path.write_bytes(whole[:len(whole) // 3])


@pytest.mark.parametrize("spoil", [_garbage, _truncated], ids=["garbage", "truncated"])
def test_a_file_that_is_not_a_database_is_named(tmp_path: Path, spoil: object) -> None:
    db_file = tmp_path / "kiln.sqlite"
    spoil(db_file, tmp_path)  # type: ignore[operator]
    path = config(tmp_path, f"[database]\nconnection = sqlite:///{db_file}\n")
    result = kiln("serve", "--config-file", path, cwd=tmp_path)
    assert result.returncode == 1
    assert result.stderr.startswith(f"kiln: error: cannot open the database file {db_file}: ")
    assert ("file is not a database" in result.stderr
            or "database disk image is malformed" in result.stderr)
    assert len(result.stderr.splitlines()) == 1
