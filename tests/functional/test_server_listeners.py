"""`kiln serve`'s listeners as a newcomer meets them: ports moved or listeners turned off
from the command line, a taken port's error naming what moves it, one line saying where
everything is served, readable logs on a terminal, and a stop that says what it waits for.

Every case runs the installed `kiln` command as a process and talks to it over HTTP.
"""

from __future__ import annotations

import re
import socket
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.support import docs
from tests.support.clients import heat_client, wait_for_stack_status
from tests.support.commands import run_kiln
from tests.support.fixtures import StartKiln
from tests.support.ports import free_port, listens_on
from tests.support.server import HTTP_TIMEOUT, clean_env, kiln_command, write_config
from tests.support.terminal import TerminalRun


@pytest.fixture
def taken_port() -> Iterator[int]:
    """A port another process (this test) listens on, as a developer machine's 8000."""
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        yield taken.getsockname()[1]


def _serving(records: list[dict[str, object]]) -> list[dict[str, object]]:
    return [r for r in records if str(r.get("message", "")).startswith("Kiln is serving")]


HANDLE = """
heat_template_version: 2018-08-31
resources:
  handle: {type: AWS::CloudFormation::WaitConditionHandle}
outputs:
  url: {value: {get_resource: handle}}
"""


def test_a_taken_cfn_port_does_not_stop_serve_with_no_cfn(
        start_kiln_factory: StartKiln, taken_port: int) -> None:
    server = start_kiln_factory(options={"heat_api_cfn": {"bind_port": taken_port}},
                                args=["--no-cfn"])
    heat = heat_client(server.endpoint("demo"))
    # a stack whose resource is handed a CFN URL still works: the URL is only handed out
    stack = heat.stacks.create(stack_name="h", template=HANDLE)["stack"]
    assert wait_for_stack_status(heat, stack["id"]).stack_status == "CREATE_COMPLETE"
    assert not listens_on(server.proc.pid, taken_port)
    [warning] = [r for r in server.log_records() if r["level"] == "WARNING"]
    assert "unless heat_metadata_server_url and heat_waitcondition_server_url name" \
        in warning["message"]
    [line] = _serving(server.log_records())
    assert line["message"] == (
        f"Kiln is serving: API {server.url}, dashboard {server.url}/, "
        f"CloudWatch {server.cloudwatch_url}; CFN off")


def test_flags_move_every_listener_over_the_files_ports(
        start_kiln_factory: StartKiln, tmp_path: Path) -> None:
    # the file's [heat_api_cfn] and [heat_api_cloudwatch] ports are others: the flags win
    api, cfn, watch = free_port(), free_port(), free_port()
    server = start_kiln_factory(port=api, args=[
        "--port", str(api), "--cfn-port", str(cfn), "--cloudwatch-port", str(watch),
        "--no-cloudwatch"])
    with httpx.Client(timeout=HTTP_TIMEOUT) as http:
        assert http.get(f"http://127.0.0.1:{api}/", headers={"Accept": "application/json"}
                        ).status_code in (200, 300)
        # the CFN API answers an unsigned request with its own (AWS's) error
        answer = http.get(f"http://127.0.0.1:{cfn}/v1/?Action=ListStacks")
        assert answer.status_code == 400 and "<ErrorResponse" in answer.text
    assert listens_on(server.proc.pid, cfn)
    assert not listens_on(server.proc.pid, watch)
    assert server.cfn_port is not None and not listens_on(server.proc.pid, server.cfn_port)
    [line] = _serving(server.log_records())
    assert line["message"] == (
        f"Kiln is serving: API http://127.0.0.1:{api}, dashboard http://127.0.0.1:{api}/, "
        f"CFN http://127.0.0.1:{cfn}/v1/; CloudWatch off")


@pytest.mark.parametrize(("group", "flag", "off", "option"), [
    ("heat_api_cfn", "--cfn-port", "--no-cfn", "serve_cfn"),
    ("heat_api_cloudwatch", "--cloudwatch-port", "--no-cloudwatch", "serve_cloudwatch"),
])
def test_a_taken_optional_port_says_what_moves_it_and_turns_it_off(
        tmp_path: Path, taken_port: int, group: str, flag: str, off: str,
        option: str) -> None:
    config = write_config(tmp_path / "kiln.conf", {
        "DEFAULT": {"state_path": tmp_path / "state"},
        "heat_api": {"bind_port": free_port()}, group: {"bind_port": taken_port}})
    result = run_kiln("serve", "--config-file", str(config), cwd=tmp_path)
    assert result.returncode == 1
    assert result.stderr.startswith(
        f"kiln: error: cannot listen on 127.0.0.1:{taken_port}: address already in use; ")
    assert f"move it with {flag} PORT ([{group}] bind_host, bind_port)" in result.stderr
    assert f"turn it off with {off} ([kiln_api] {option} = false)" in result.stderr
    assert len(result.stderr.splitlines()) == 1


def test_a_taken_api_port_names_the_port_flag(tmp_path: Path, taken_port: int) -> None:
    config = write_config(tmp_path / "kiln.conf", {
        "DEFAULT": {"state_path": tmp_path / "state"}})
    result = run_kiln("serve", "--config-file", str(config), "--port", str(taken_port),
                      cwd=tmp_path)
    assert result.returncode == 1
    assert result.stderr == (
        f"kiln: error: cannot listen on 127.0.0.1:{taken_port}: address already in use; "
        "that is the native API's address: move it with --port PORT ([heat_api] bind_host, "
        "bind_port)\n")


def test_a_bad_flag_value_is_one_line(tmp_path: Path) -> None:
    config = write_config(tmp_path / "kiln.conf", {
        "DEFAULT": {"state_path": tmp_path / "state"}})
    result = run_kiln("serve", "--config-file", str(config), "--cfn-bind-host", "no host!",
                      cwd=tmp_path)
    assert result.returncode == 2
    assert result.stderr == ("kiln: error: --cfn-bind-host: invalid value 'no host!': "
                             "no host! is not a valid host address\n")


def test_one_line_says_where_everything_is_served(start_kiln_factory: StartKiln) -> None:
    server = start_kiln_factory()
    assert server.port is not None
    with socket.create_connection(("127.0.0.1", server.port)) as garbage:
        garbage.sendall(b"NOT HTTP AT ALL\r\n\r\n")
        garbage.recv(1024)  # uvicorn answers 400 and closes
    assert server.stop() == 0
    # uvicorn's warnings still show: quieter is not blind
    assert [r["message"] for r in server.log_records() if r["logger"] == "uvicorn.error"] \
        == ["Invalid HTTP request received."]
    [line] = _serving(server.log_records())
    assert line["message"] == (
        f"Kiln is serving: API {server.url}, dashboard {server.url}/, "
        f"CFN {server.cfn_url}, CloudWatch {server.cloudwatch_url}")
    assert line["listeners"] == {"heat_api": server.url, "heat_api_cfn": server.cfn_url,
                                 "heat_api_cloudwatch": server.cloudwatch_url}
    # uvicorn's per-listener start and stop lines are gone
    messages = [r["message"] for r in server.log_records()]
    assert not [m for m in messages if "Application startup" in m or "Started server" in m
                or "Waiting for application" in m]


def test_logs_on_a_terminal_are_human_readable(tmp_path: Path) -> None:
    port = free_port()
    config = write_config(tmp_path / "kiln.conf", {
        "DEFAULT": {"state_path": tmp_path / "state"},
        "heat_api": {"bind_port": port}})
    run = TerminalRun([*kiln_command(), "serve", "--config-file", str(config),
                       "--cfn-port", str(free_port()), "--cloudwatch-port", str(free_port())],
                      env=clean_env(), cwd=tmp_path, columns=250)
    screen = run.expect(lambda text: "Kiln is serving" in text, "the serving line")
    line = next(x for x in screen.splitlines() if "Kiln is serving" in x)
    assert " INFO kiln.server [-] Kiln is serving: API http://127.0.0.1:" in line
    assert "{" not in screen
    run.type("\x03")  # Ctrl-C
    assert run.wait() == 0
    assert "kiln serve stopped" in run.text


SLOW = """
heat_template_version: 2018-08-31
resources:
  slow:
    type: OS::Heat::TestResource
    properties: {wait_secs: 120}
"""


def test_a_graceful_stop_says_what_it_waits_for_and_the_takeover_names_the_stack(
        start_kiln_factory: StartKiln, tmp_path: Path) -> None:
    options = {"DEFAULT": {"graceful_shutdown_timeout": 8}}
    server = start_kiln_factory(workdir=tmp_path / "k", options=options)
    heat = heat_client(server.endpoint("demo"))
    stack_id = heat.stacks.create(stack_name="patient", template=SLOW)["stack"]["id"]
    assert heat.stacks.get(stack_id).stack_status == "CREATE_IN_PROGRESS"
    assert server.stop(timeout=60) == 0
    waits = [r["message"] for r in server.log_records()
             if str(r["message"]).startswith("stopping: waiting for")]
    # one line at once and one every 5 s while the 8 s budget runs out
    assert len(waits) >= 2, server.logs()
    assert waits[0] == ("stopping: waiting for 1 stack action (patient) to finish; 8 s "
                        "left before running actions are checkpointed for the next engine "
                        "to continue")
    # 5 s later (give or take a loaded machine's lag) about 3 s are left
    assert re.fullmatch(r"stopping: waiting for 1 stack action \(patient\) to finish; [23] s "
                        "left before running actions are checkpointed for the next engine "
                        "to continue", waits[1]), waits

    restarted = start_kiln_factory(workdir=tmp_path / "k", options=options)
    [taking] = restarted.records_when_logged(
        lambda r: str(r.get("message", "")).startswith("taking over stack"))
    assert taking["message"] == (
        f"taking over stack patient ({stack_id}, CREATE_IN_PROGRESS) that no engine holds "
        "(its engine stopped before finishing it, or an API process admitted it)")
    heat = heat_client(restarted.endpoint("demo"))
    heat.stacks.delete(stack_id)



def test_the_readme_serve_command_with_listeners_off(start_kiln_factory: StartKiln) -> None:
    section = docs.page("running.md")
    [command] = [line for line in section.splitlines()
                 if line.startswith(".venv/bin/kiln serve --")]
    words = command.split()
    assert words[:2] == [".venv/bin/kiln", "serve"] and words[-2] == "--port"
    port = free_port()  # the page's port, moved to one free on this machine
    server = start_kiln_factory(port=port, args=[*words[2:-1], str(port)])
    [line] = _serving(server.log_records())
    assert line["message"] == (f"Kiln is serving: API http://127.0.0.1:{port}, dashboard "
                               f"http://127.0.0.1:{port}/; CFN off, CloudWatch off")
    assert server.cfn_port is not None and server.cloudwatch_port is not None
    assert not listens_on(server.proc.pid, server.cfn_port)
    assert not listens_on(server.proc.pid, server.cloudwatch_port)


if sys.platform != "linux":  # pragma: no cover
    pytestmark = pytest.mark.skip("pty and psutil's socket listing: Linux only")


@pytest.mark.parametrize(("command", "group", "path"), [
    ("api", "heat_api", "/"),
    ("api-cfn", "heat_api_cfn", "/v1/?Action=ListStacks"),
    ("api-cloudwatch", "heat_api_cloudwatch", "/"),
])
def test_a_single_api_command_takes_the_listener_flags(
        start_kiln_factory: StartKiln, command: str, group: str, path: str) -> None:
    # issue 27: `kiln api --port N` (and api-cfn, api-cloudwatch) moves its one listener
    # as `kiln serve --port N` does, over the file's port
    flagged, in_file = free_port(), free_port()
    server = start_kiln_factory(command=command, port=flagged,
                                options={group: {"bind_port": in_file}},
                                args=["--bind-host", "127.0.0.1", "--port", str(flagged)])
    with httpx.Client(timeout=HTTP_TIMEOUT) as http:
        answer = http.get(f"http://127.0.0.1:{flagged}{path}",
                          headers={"Accept": "application/json"})
    assert answer.status_code < 500, answer.text
    if command == "api-cfn":  # the CFN API's own (AWS's) error for an unsigned request
        assert answer.status_code == 400 and "<ErrorResponse" in answer.text
    assert listens_on(server.proc.pid, flagged)
    assert not listens_on(server.proc.pid, in_file)


def test_a_single_api_command_refuses_a_bad_port(tmp_path: Path) -> None:
    result = run_kiln("api-cfn", "--port", "70000", cwd=tmp_path)
    assert result.returncode == 2
    assert "Invalid value for '--port'" in result.stderr
