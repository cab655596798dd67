"""The `openstack` CLI (python-openstackclient + heatclient) driving the API the way users do.

Expected outputs are what the same commands print against Heat 27 (set
KILN_API_COMPARE_URL to run them there).
"""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from tests.functional.api.heat_target import settled
from tests.support.clients import OpenStackCLI

TEMPLATE = """heat_template_version: 2018-08-31
parameters:
  p: {type: string, default: hello}
resources:
  v:
    type: OS::Heat::Value
    properties: {value: {get_param: p}}
  r:
    type: OS::Heat::RandomString
    properties: {length: 6}
outputs:
  o:
    description: out o
    value: {get_attr: [v, value]}
  l:
    value: {get_attr: [r, value]}
"""
pytestmark = pytest.mark.slow  # each CLI call starts a Python process with many plugins

HOOK_ENV = """resource_registry:
  resources:
    v:
      hooks: pre-create
"""


@pytest.fixture(scope="module")
def cli(heat_endpoint: str, tmp_path_factory: pytest.TempPathFactory) -> OpenStackCLI:
    workdir = tmp_path_factory.mktemp("cli")
    (workdir / "t.yaml").write_text(TEMPLATE)
    (workdir / "hooks.yaml").write_text(HOOK_ENV)
    return OpenStackCLI(heat_endpoint, cwd=workdir)


def unique(prefix: str) -> str:
    return f"api_cli_{prefix}_{uuid.uuid4().hex[:6]}"


def fields(rows: Any) -> dict[str, Any]:
    """`-f json` of a show command is a dict; of a Field/Value table, a list of pairs."""
    if isinstance(rows, dict):
        return rows
    return {row["Field"]: row["Value"] for row in rows}


@pytest.fixture(scope="module")
def stack(cli: OpenStackCLI, hc: Any) -> Any:
    name = unique("main")
    printed = cli.run("stack", "create", "-t", "t.yaml", "--parameter", "p=hi",
                      "--tag", "x,y", "--wait", name).stdout
    assert "CREATE_COMPLETE" in printed
    yield fields(cli.json("stack", "show", name))
    cli.run("stack", "delete", "--yes", name)


def test_create_wait_prints_the_finished_stack(stack: dict[str, Any]) -> None:
    assert stack["stack_status"] == "CREATE_COMPLETE"
    assert stack["stack_name"].startswith("api_cli_main_")


def test_stack_list_and_show(cli: OpenStackCLI, stack: dict[str, Any]) -> None:
    listed = {s["Stack Name"]: s for s in cli.json("stack", "list")}
    assert listed[stack["stack_name"]]["Stack Status"] == "CREATE_COMPLETE"
    assert listed[stack["stack_name"]]["ID"] == stack["id"]
    tagged = [s["Stack Name"] for s in cli.json("stack", "list", "--tags", "x,y")]
    assert stack["stack_name"] in tagged
    shown = fields(cli.json("stack", "show", stack["stack_name"]))
    assert shown["id"] == stack["id"]
    assert shown["parameters"]["p"] == "hi"
    assert shown["tags"] == ["x", "y"]


def test_output_list_and_show_all(cli: OpenStackCLI, stack: dict[str, Any]) -> None:
    keys = sorted(o["output_key"] for o in cli.json("stack", "output", "list",
                                                    stack["stack_name"]))
    assert keys == ["l", "o"]
    one = fields(cli.json("stack", "output", "show", stack["stack_name"], "o"))
    assert one["output_value"] == "hi"
    every = cli.json("stack", "output", "show", "--all", stack["stack_name"])
    assert every["o"] == {"output_key": "o", "description": "out o", "output_value": "hi"}
    assert len(every["l"]["output_value"]) == 6


def test_resource_and_event_commands(cli: OpenStackCLI, stack: dict[str, Any]) -> None:
    resources = {r["resource_name"]: r for r in cli.json("stack", "resource", "list",
                                                         stack["stack_name"])}
    assert set(resources) == {"v", "r"}
    assert resources["v"]["resource_status"] == "CREATE_COMPLETE"
    shown = fields(cli.json("stack", "resource", "show", stack["stack_name"], "v"))
    assert shown["attributes"] == {"value": "hi"}
    events = cli.json("stack", "event", "list", stack["stack_name"])
    statuses = {(e["resource_name"], e["resource_status"]) for e in events}
    assert ("v", "CREATE_COMPLETE") in statuses
    assert (stack["stack_name"], "CREATE_COMPLETE") in statuses
    v_events = cli.json("stack", "event", "list", "--resource", "v", stack["stack_name"])
    assert {e["resource_status"] for e in v_events} == {"CREATE_IN_PROGRESS",
                                                         "CREATE_COMPLETE"}


def test_template_and_environment_show(cli: OpenStackCLI, stack: dict[str, Any]) -> None:
    template = cli.json("stack", "template", "show", stack["stack_name"])
    assert template["outputs"]["o"]["description"] == "out o"
    env = cli.json("stack", "environment", "show", stack["stack_name"])
    assert env["parameters"] == {"p": "hi"}


def test_update_dry_run_then_existing_wait(cli: OpenStackCLI, hc: Any) -> None:
    name = unique("upd")
    cli.run("stack", "create", "-t", "t.yaml", name)
    settled(hc, name)
    try:
        dry = cli.json("stack", "update", "--dry-run", "--existing", "--parameter", "p=bye",
                       name)
        assert [r["resource_name"] for r in dry["updated"]] == ["v"]
        assert [r["resource_name"] for r in dry["unchanged"]] == ["r"]
        assert dry["added"] == dry["deleted"] == dry["replaced"] == []
        printed = cli.run("stack", "update", "--existing", "--parameter", "p=bye", "--wait",
                          name).stdout
        assert "UPDATE_COMPLETE" in printed
        assert settled(hc, name).stack_status == "UPDATE_COMPLETE"
        value = fields(cli.json("stack", "output", "show", name, "o"))["output_value"]
        assert value == "bye"
    finally:
        cli.run("stack", "delete", "--yes", name)


def test_check_suspend_resume_and_failures(cli: OpenStackCLI, hc: Any) -> None:
    name = unique("act")
    cli.run("stack", "create", "-t", "t.yaml", name)
    settled(hc, name)
    try:
        for command, status in (("check", "CHECK_COMPLETE"), ("suspend", "SUSPEND_COMPLETE"),
                                ("resume", "RESUME_COMPLETE")):
            rows = cli.json("stack", command, name)
            assert [r["Stack Name"] for r in rows] == [name]
            assert settled(hc, name).stack_status == status
        assert cli.run("stack", "failures", "list", name).stdout.strip() == ""
    finally:
        cli.run("stack", "delete", "--yes", name)


def test_hook_poll_and_clear(cli: OpenStackCLI, hc: Any) -> None:
    name = unique("hook")
    cli.run("stack", "create", "-t", "t.yaml", "-e", "hooks.yaml", name)
    try:
        from tests.functional.api.heat_target import wait_for

        pending = wait_for(lambda: cli.json("stack", "hook", "poll", name),
                           lambda rows: bool(rows), "the pre-create hook")
        assert [(h["Resource Name"], h["Resource Status Reason"]) for h in pending] == [
            ("v", "CREATE paused until Hook pre-create is cleared")]
        cli.run("stack", "hook", "clear", "--pre-create", name, "v")
        assert settled(hc, name).stack_status == "CREATE_COMPLETE"
        after = cli.run("stack", "hook", "poll", name, check=False)
        assert after.returncode == 1
        assert "Stack status CREATE_COMPLETE not IN_PROGRESS" in after.stderr
    finally:
        cli.run("stack", "delete", "--yes", name)


def test_delete_wait(cli: OpenStackCLI, hc: Any) -> None:
    name = unique("del")
    cli.run("stack", "create", "-t", "t.yaml", name)
    settled(hc, name)
    cli.run("stack", "delete", "--yes", "--wait", name)
    assert name not in [s["Stack Name"] for s in cli.json("stack", "list")]
    missing = cli.run("stack", "show", name, check=False)
    assert missing.returncode != 0
    assert f"Stack not found: {name}" in missing.stderr
