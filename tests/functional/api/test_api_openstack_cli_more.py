"""More `openstack` CLI commands: template validation, resource types, template versions,
build info, services, software configs and stack snapshots (outputs as Heat 27 prints)."""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from tests.functional.api.heat_target import settled, wait_for
from tests.support.clients import OpenStackCLI

pytestmark = pytest.mark.slow  # each CLI call starts a Python process with many plugins

TEMPLATE = """heat_template_version: 2018-08-31
parameters:
  p: {type: string, default: hello}
resources:
  v:
    type: OS::Heat::Value
    properties: {value: {get_param: p}}
outputs:
  o:
    value: {get_attr: [v, value]}
"""


@pytest.fixture(scope="module")
def cli(heat_endpoint: str, tmp_path_factory: pytest.TempPathFactory) -> OpenStackCLI:
    workdir = tmp_path_factory.mktemp("cli_more")
    (workdir / "t.yaml").write_text(TEMPLATE)
    (workdir / "cfg.sh").write_text("echo hi\n")
    return OpenStackCLI(heat_endpoint, cwd=workdir)


def test_template_validate_show_nested(cli: OpenStackCLI) -> None:
    result = cli.json("orchestration", "template", "validate", "-t", "t.yaml",
                      "--show-nested")
    assert result["Description"] == "No description"
    assert result["Parameters"]["p"] == {"Type": "String", "Description": "",
                                         "NoEcho": "false", "Label": "p",
                                         "Default": "hello"}


def test_resource_type_list_and_show(cli: OpenStackCLI) -> None:
    listed = cli.json("orchestration", "resource", "type", "list", "--filter",
                      "name=OS::Heat::None")
    assert listed == [{"Resource Type": "OS::Heat::None"}]
    shown = cli.json("orchestration", "resource", "type", "show", "OS::Heat::None")
    assert shown["resource_type"] == "OS::Heat::None"
    assert shown["attributes"]["show"] == {"description": "Detailed information about "
                                                          "resource.", "type": "map"}


def test_template_versions_and_functions(cli: OpenStackCLI) -> None:
    versions = {v["Version"]: v["Type"] for v in cli.json("orchestration", "template",
                                                          "version", "list")}
    assert versions["AWSTemplateFormatVersion.2010-09-09"] == "cfn"
    assert versions["heat_template_version.2018-08-31"] == "hot"
    functions = {f["Functions"] for f in cli.json(
        "orchestration", "template", "function", "list", "heat_template_version.2018-08-31")}
    assert {"get_attr", "get_param", "list_join"} <= functions


def test_build_info_and_services(cli: OpenStackCLI) -> None:
    info = cli.json("orchestration", "build", "info")
    assert set(info) == {"api", "engine"}
    services = cli.json("orchestration", "service", "list")
    assert services and services[0]["Status"] == "up"


def test_software_config_commands(cli: OpenStackCLI) -> None:
    name = f"api_cli_sc_{uuid.uuid4().hex[:6]}"
    created = cli.json("software", "config", "create", "--config-file", "cfg.sh",
                       "--group", "script", name)
    assert created["name"] == name
    assert created["group"] == "script"
    assert created["config"] == "echo hi\n"
    try:
        assert cli.json("software", "config", "show", created["id"])["config"] == "echo hi\n"
        names = [c["name"] for c in cli.json("software", "config", "list")]
        assert name in names
    finally:
        cli.run("software", "config", "delete", created["id"])
    gone = cli.run("software", "config", "show", created["id"], check=False)
    assert gone.returncode != 0


def test_snapshot_create_list_restore(cli: OpenStackCLI, hc: Any) -> None:
    name = f"api_cli_snap_{uuid.uuid4().hex[:6]}"
    cli.run("stack", "create", "-t", "t.yaml", name)
    settled(hc, name)
    try:
        snap = cli.json("stack", "snapshot", "create", name, "--name", "snap1")
        assert snap["name"] == "snap1"
        listed = wait_for(lambda: cli.json("stack", "snapshot", "list", name),
                          lambda rows: rows and rows[0]["status"] != "IN_PROGRESS",
                          "the snapshot")
        assert [(s["id"], s["name"], s["status"]) for s in listed] == [
            (snap["ID"], "snap1", "COMPLETE")]
        settled(hc, name)
        cli.run("stack", "snapshot", "restore", name, snap["ID"])
        assert settled(hc, name).stack_status == "RESTORE_COMPLETE"
    finally:
        cli.run("stack", "delete", "--yes", name)


SLOW = """heat_template_version: 2018-08-31
parameters:
  value: {type: string}
  wait: {type: number, default: 0}
resources:
  t:
    type: OS::Heat::TestResource
    properties:
      value: {get_param: value}
      action_wait_secs: {update: {get_param: wait}}
"""


def test_stack_cancel_rolls_an_update_back(cli: OpenStackCLI, hc: Any) -> None:
    assert cli.cwd is not None
    (cli.cwd / "slow.yaml").write_text(SLOW)
    name = f"api_cli_cancel_{uuid.uuid4().hex[:6]}"
    cli.run("stack", "create", "-t", "slow.yaml", "--parameter", "value=a", name)
    try:
        settled(hc, name)
        cli.run("stack", "update", "--existing", "--parameter", "value=b", "--parameter",
                "wait=15", name)
        wait_for(lambda: hc.stacks.get(name).stack_status,
                 lambda s: s == "UPDATE_IN_PROGRESS", "the update to start")
        cli.run("stack", "cancel", name)
        final = wait_for(lambda: hc.stacks.get(name),
                         lambda s: s.stack_status.startswith("ROLLBACK_")
                         and not s.stack_status.endswith("IN_PROGRESS"), "the rollback",
                         deadline=120)
        assert final.stack_status == "ROLLBACK_COMPLETE"
    finally:
        cli.run("stack", "delete", "--yes", name)


INNER = """heat_template_version: 2018-08-31
resources:
  leaf: {type: OS::Heat::RandomString}
"""
MIDDLE = """heat_template_version: 2018-08-31
resources:
  inner: {type: inner.yaml}
"""
OUTER = """heat_template_version: 2018-08-31
resources:
  middle: {type: middle.yaml}
"""


def test_resource_list_nested_depth_2(cli: OpenStackCLI, hc: Any) -> None:
    assert cli.cwd is not None
    for file, text in (("outer.yaml", OUTER), ("middle.yaml", MIDDLE),
                       ("inner.yaml", INNER)):
        (cli.cwd / file).write_text(text)
    name = f"api_cli_nest_{uuid.uuid4().hex[:6]}"
    cli.run("stack", "create", "-t", "outer.yaml", name)
    try:
        assert settled(hc, name).stack_status == "CREATE_COMPLETE"
        top = cli.json("stack", "resource", "list", name)
        assert [r["resource_name"] for r in top] == ["middle"]
        deep = cli.json("stack", "resource", "list", "--nested-depth", "2", name)
        by_name = {r["resource_name"]: r for r in deep}
        assert set(by_name) == {"middle", "inner", "leaf"}
        assert by_name["leaf"]["stack_name"].startswith(f"{name}-middle-")
        assert by_name["inner"]["stack_name"].startswith(f"{name}-middle-")
    finally:
        cli.run("stack", "delete", "--yes", name)
