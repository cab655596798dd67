"""`kiln stack ...` run as a real process against a real `kiln serve`, checking what its
user sees: the tables and JSON on stdout, the progress and plan, the prompt, the exit
status. The live progress display and the confirmation prompt run on a pseudo-terminal
whose screen is rendered by a terminal emulator.

Expected behaviour is Heat's: with ``KILN_API_COMPARE_URL`` (e.g.
``http://127.0.0.1:8180/v1/admin``) the same tests run against a real Heat 27 instead,
which is how they were checked to work there too.
"""

from __future__ import annotations

import json
import re
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.functional.api.heat_target import COMPARE_URL
from tests.functional.api.heat_target import wait_for as wait_until
from tests.support.server import KilnProcess, clean_env, kiln_command
from tests.support.terminal import TerminalRun

TIMEOUT = 120.0

SIMPLE = """\
heat_template_version: 2018-08-31
parameters:
  length: {type: number, default: 12}
resources:
  secret:
    type: OS::Heat::RandomString
    properties: {length: {get_param: length}}
outputs:
  secret: {value: {get_attr: [secret, value]}, description: the secret}
"""

#: three resources that take a few seconds each, two of them at the same time ("second"
#: long enough that a test reading the screen at load 15+ sees several refreshes of it)
SLOW = """\
heat_template_version: 2018-08-31
resources:
  first:
    type: OS::Heat::TestResource
    properties: {value: one, action_wait_secs: {create: 2}}
  second:
    type: OS::Heat::TestResource
    properties: {value: two, action_wait_secs: {create: 8}}
  third:
    type: OS::Heat::TestResource
    properties: {value: {get_attr: [first, output]}, action_wait_secs: {create: 1}}
"""

#: a create that ends only when the test signals its handle
WAITING = """\
heat_template_version: 2018-08-31
resources:
  handle: {type: OS::Heat::WaitConditionHandle}
  wait:
    type: OS::Heat::WaitCondition
    properties: {handle: {get_resource: handle}, timeout: 600}
"""

FAILING = """\
heat_template_version: 2018-08-31
resources:
  fine: {type: OS::Heat::None}
  broken:
    type: OS::Heat::TestResource
    depends_on: fine
    properties: {fail: true}
"""

BEFORE = """\
heat_template_version: 2018-08-31
parameters:
  length: {type: number, default: 8}
resources:
  keep: {type: OS::Heat::None}
  inplace:
    type: OS::Heat::Value
    properties: {value: before}
  rep:
    type: OS::Heat::RandomString
    properties: {length: {get_param: length}}
  gone: {type: OS::Heat::None}
"""

AFTER = """\
heat_template_version: 2018-08-31
parameters:
  length: {type: number, default: 8}
resources:
  keep: {type: OS::Heat::None}
  inplace:
    type: OS::Heat::Value
    properties: {value: after}
  rep:
    type: OS::Heat::RandomString
    properties: {length: {get_param: length}}
  added:
    type: OS::Heat::Value
    properties: {value: new}
"""


@pytest.fixture(scope="module")
def endpoint(request: pytest.FixtureRequest) -> str:
    """The orchestration endpoint under test: a real `kiln serve`, or Heat when compared."""
    if COMPARE_URL:
        return COMPARE_URL
    server: KilnProcess = request.getfixturevalue("kiln_server")
    return server.endpoint("demo")


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    for name, text in (("simple.yaml", SIMPLE), ("slow.yaml", SLOW),
                       ("waiting.yaml", WAITING),
                       ("failing.yaml", FAILING), ("before.yaml", BEFORE),
                       ("after.yaml", AFTER)):
        (tmp_path / name).write_text(text)
    return tmp_path


@pytest.fixture
def name() -> str:
    """A stack name no other run uses (a compared Heat keeps its stacks between runs)."""
    return f"cli-{uuid.uuid4().hex[:8]}"


def env_for(endpoint: str) -> dict[str, str]:
    return {**clean_env(), "OS_ENDPOINT": endpoint, "NO_COLOR": "1"}


def kiln_stack(endpoint: str, workdir: Path, *args: str,
               stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*kiln_command(), "stack", *args], capture_output=True, text=True,
                          cwd=workdir, env=env_for(endpoint), timeout=TIMEOUT, input=stdin,
                          check=False)


def ok(result: subprocess.CompletedProcess[str]) -> subprocess.CompletedProcess[str]:
    assert result.returncode == 0, (f"exit {result.returncode}\nstdout:\n{result.stdout}\n"
                                    f"stderr:\n{result.stderr}")
    return result


def on_terminal(endpoint: str, workdir: Path, *args: str) -> TerminalRun:
    return TerminalRun([*kiln_command(), "stack", *args], env=env_for(endpoint), cwd=workdir)


def field_table(output: str) -> dict[str, str]:
    """A Field/Value table's first line per field."""
    rows: dict[str, str] = {}
    for line in output.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 2 and cells[0] and not line.startswith("+"):
            rows.setdefault(cells[0], cells[1])
    return rows


def api_get(endpoint: str, path: str) -> Any:
    """Read the endpoint directly, independent of the CLI under test."""
    response = httpx.get(endpoint + path, follow_redirects=True, timeout=30)
    response.raise_for_status()
    return response.json()


@pytest.fixture
def cleanup(endpoint: str, workdir: Path) -> Iterator[list[str]]:
    names: list[str] = []
    yield names
    for stack in names:
        kiln_stack(endpoint, workdir, "delete", "--yes", "--wait", stack)


def test_create_show_list_events_outputs_delete(endpoint: str, workdir: Path,
                                                name: str, cleanup: list[str]) -> None:
    cleanup.append(name)
    created = ok(kiln_stack(endpoint, workdir, "create", "-t", "simple.yaml",
                            "--parameter", "length=20", "--wait", name))
    assert field_table(created.stdout)["stack_status"] == "CREATE_COMPLETE"
    # without a terminal, progress is one line per event on stderr, then the summary
    assert re.search(rf"\[{name}\.secret\]: CREATE_COMPLETE", created.stderr)
    assert re.search(rf"Stack {name} CREATE_COMPLETE in [\d.]+s: 1 resource done, 0 failed",
                     created.stderr)

    shown = json.loads(ok(kiln_stack(endpoint, workdir, "show", name, "-f", "json")).stdout)
    assert shown["stack_name"] == name
    assert shown["stack_status"] == "CREATE_COMPLETE"
    assert shown["parameters"]["length"] == "20"
    (output,) = shown["outputs"]
    assert output["output_key"] == "secret"
    assert len(output["output_value"]) == 20

    listed = json.loads(ok(kiln_stack(endpoint, workdir, "list", "-f", "json")).stdout)
    row = next(r for r in listed if r["Stack Name"] == name)
    assert row["ID"] == shown["id"]
    assert row["Stack Status"] == "CREATE_COMPLETE"
    table = ok(kiln_stack(endpoint, workdir, "list")).stdout
    assert re.search(rf"\| {shown['id']} \| {name} .*\| CREATE_COMPLETE ", table)

    events = json.loads(ok(kiln_stack(endpoint, workdir, "events", name,
                                      "-f", "json")).stdout)
    statuses = [(e["resource_name"], e["resource_status"]) for e in events]
    assert statuses.index(("secret", "CREATE_IN_PROGRESS")) < statuses.index(
        ("secret", "CREATE_COMPLETE"))
    assert statuses[0] == (name, "CREATE_IN_PROGRESS")
    assert statuses[-1] == (name, "CREATE_COMPLETE")
    assert set(events[0]) >= {"id", "event_time", "resource_status_reason",
                              "physical_resource_id", "logical_resource_id"}

    outputs = json.loads(ok(kiln_stack(endpoint, workdir, "outputs", name,
                                       "-f", "json")).stdout)
    assert outputs == [{"output_key": "secret", "output_value": output["output_value"],
                        "description": "the secret"}]
    one = json.loads(ok(kiln_stack(endpoint, workdir, "outputs", name, "secret",
                                   "-f", "json")).stdout)
    assert one["output_value"] == output["output_value"]

    deleted = ok(kiln_stack(endpoint, workdir, "delete", "--yes", "--wait", name))
    assert re.search(rf"Stack {name} DELETE_COMPLETE", deleted.stderr)
    gone = kiln_stack(endpoint, workdir, "show", name)
    assert gone.returncode == 1
    assert gone.stderr == f"kiln: error: Stack not found: {name}\n"


def test_endpoint_root_with_project_id(endpoint: str, workdir: Path) -> None:
    root, project = re.fullmatch(r"(.*)/v1/([^/]+)", endpoint).groups()  # type: ignore[union-attr]
    env = {**clean_env(), "NO_COLOR": "1"}
    result = subprocess.run(
        [*kiln_command(), "stack", "--os-auth-type", "none", "--os-endpoint", root,
         "--os-project-id", project, "list", "-f", "json"],
        capture_output=True, text=True, cwd=workdir, env=env, timeout=TIMEOUT, check=False)
    assert result.returncode == 0, result.stderr
    assert isinstance(json.loads(result.stdout), list)


def test_no_endpoint_is_a_usage_error(workdir: Path) -> None:
    result = subprocess.run([*kiln_command(), "stack", "list"], capture_output=True,
                            text=True, cwd=workdir, env=clean_env(), timeout=TIMEOUT,
                            check=False)
    assert result.returncode == 2
    assert "--os-endpoint" in result.stderr
    assert "Traceback" not in result.stderr


def test_validate(endpoint: str, workdir: Path) -> None:
    valid = ok(kiln_stack(endpoint, workdir, "validate", "-t", "simple.yaml", "-f", "json"))
    assert json.loads(valid.stdout)["Parameters"]["length"]["Default"] == 12

    (workdir / "unknown.yaml").write_text(
        "heat_template_version: 2018-08-31\nresources:\n  r: {type: OS::No::Such}\n")
    unknown = kiln_stack(endpoint, workdir, "validate", "-t", "unknown.yaml")
    assert unknown.returncode == 1
    assert "OS::No::Such" in unknown.stderr
    assert unknown.stdout == ""

    (workdir / "broken.yaml").write_text(
        "heat_template_version: 2018-08-31\nresources:\n  r: [unclosed\n")
    broken = kiln_stack(endpoint, workdir, "validate", "-t", "broken.yaml")
    assert broken.returncode == 1
    assert re.search(r"line \d+", broken.stderr), broken.stderr

    missing = kiln_stack(endpoint, workdir, "validate", "-t", "nowhere.yaml")
    assert missing.returncode == 1
    assert "nowhere.yaml" in missing.stderr


def test_failed_create_exits_non_zero(endpoint: str, workdir: Path, name: str,
                                      cleanup: list[str]) -> None:
    cleanup.append(name)
    result = kiln_stack(endpoint, workdir, "create", "-t", "failing.yaml", "--wait", name,
                        "-f", "json")
    assert result.returncode == 1
    assert json.loads(result.stdout)["stack_status"] == "CREATE_FAILED"
    assert f"Stack {name} CREATE_FAILED" in result.stderr
    assert re.search(r"✗ broken CREATE_FAILED: .*Test Resource failed", result.stderr)


def test_refused_request_exits_non_zero(endpoint: str, workdir: Path, name: str) -> None:
    result = kiln_stack(endpoint, workdir, "create", "-t", "simple.yaml",
                        "--parameter", "length=many", name)
    assert result.returncode == 1
    assert "length" in result.stderr
    assert "Traceback" not in result.stderr
    listed = api_get(endpoint, "/stacks")["stacks"]
    assert name not in {s["stack_name"] for s in listed}


def _created(endpoint: str, workdir: Path, name: str, template: str) -> None:
    ok(kiln_stack(endpoint, workdir, "create", "-t", template, "--wait", name))


def test_preview_shows_every_kind_of_change(endpoint: str, workdir: Path, name: str,
                                            cleanup: list[str]) -> None:
    cleanup.append(name)
    _created(endpoint, workdir, name, "before.yaml")
    shown = ok(kiln_stack(endpoint, workdir, "preview", name, "-t", "after.yaml",
                          "--parameter", "length=10")).stdout
    lines = [line.strip() for line in shown.splitlines()]
    assert lines[0] == (f"Plan for stack {name}: 1 to create, 1 to update in place, "
                        "1 to replace, 1 to delete (1 unchanged)")
    # a block per resource, its property changes under it
    blocks = "\n".join(lines[1:])
    assert '+ added  (OS::Heat::Value)  will be created\n+ value: "new"' in blocks
    assert ('~ inplace  (OS::Heat::Value)  will be updated in place\n'
            '~ value: "before" → "after"') in blocks
    assert "-/+ rep  (OS::Heat::RandomString)  will be replaced\n~ length: 8 → 10" in blocks
    assert "- gone  (OS::Heat::None)  will be deleted" in blocks
    assert "keep" not in blocks

    as_json = json.loads(ok(kiln_stack(endpoint, workdir, "preview", name, "-t", "after.yaml",
                                       "--parameter", "length=10", "-f", "json")).stdout)
    assert as_json["resource_changes"] == {"added": ["added"], "updated": ["inplace"],
                                           "replaced": ["rep"], "deleted": ["gone"],
                                           "unchanged": ["keep"]}
    rep = next(r for r in as_json["resources"] if r["resource_name"] == "rep")
    assert rep["properties"] == [{"path": "length", "old": 8, "new": 10}]
    # nothing was changed
    assert {r["resource_name"] for r in api_get(endpoint, f"/stacks/{name}/resources")[
        "resources"]} == {"keep", "inplace", "rep", "gone"}


def test_update_asks_before_applying(endpoint: str, workdir: Path, name: str,
                                     cleanup: list[str]) -> None:
    cleanup.append(name)
    _created(endpoint, workdir, name, "before.yaml")
    update = ("update", name, "-t", "after.yaml", "--parameter", "length=10", "--wait")

    declined = on_terminal(endpoint, workdir, *update)
    screen = declined.expect(lambda s: "Apply this update? [y/N]" in s, "the prompt")
    assert "-/+ rep" in screen  # the plan is shown before the question
    declined.type("n\r")
    assert declined.wait() == 1
    assert "update cancelled; nothing was changed" in declined.text
    stack = api_get(endpoint, f"/stacks/{name}")["stack"]
    assert stack["stack_status"] == "CREATE_COMPLETE"

    accepted = on_terminal(endpoint, workdir, *update)
    accepted.expect(lambda s: "Apply this update? [y/N]" in s, "the prompt")
    accepted.type("y\r")
    assert accepted.wait() == 0
    assert re.search(rf"✓ Stack {name} UPDATE_COMPLETE in [\d.]+s", accepted.text)
    stack = api_get(endpoint, f"/stacks/{name}")["stack"]
    assert stack["stack_status"] == "UPDATE_COMPLETE"
    assert {r["resource_name"] for r in api_get(endpoint, f"/stacks/{name}/resources")[
        "resources"]} == {"keep", "inplace", "rep", "added"}


def test_update_without_terminal_needs_yes(endpoint: str, workdir: Path, name: str,
                                           cleanup: list[str]) -> None:
    cleanup.append(name)
    _created(endpoint, workdir, name, "before.yaml")
    refused = kiln_stack(endpoint, workdir, "update", name, "-t", "after.yaml", stdin="y\n")
    assert refused.returncode == 1
    assert "pass --yes" in refused.stderr
    assert api_get(endpoint, f"/stacks/{name}")["stack"]["stack_status"] == "CREATE_COMPLETE"

    applied = ok(kiln_stack(endpoint, workdir, "update", name, "-t", "after.yaml", "--yes",
                            "--wait", "-f", "json"))
    assert json.loads(applied.stdout)["stack_status"] == "UPDATE_COMPLETE"
    assert "Plan for stack" in applied.stderr  # the plan still shown, off stdout


def test_live_progress_on_a_terminal(endpoint: str, workdir: Path, name: str,
                                     cleanup: list[str]) -> None:
    cleanup.append(name)
    run = on_terminal(endpoint, workdir, "create", "-t", "slow.yaml", "--wait", name)
    # while it runs: what it does, for how long, the counts, the resources in progress
    live = run.expect(lambda s: "in progress" in s and "second" in s
                      and "CREATE_IN_PROGRESS" in s, "the live display with a resource")
    assert re.search(rf"Creating stack {name} +\d+\.\ds", live), live
    counts = re.search(r"(\d+) done · (\d+) in progress · (\d+) failed · (\d+) waiting", live)
    assert counts, live
    assert int(counts[2]) >= 1
    assert sum(map(int, counts.groups())) == 3
    assert re.search(r"second +OS::Heat::TestResource +CREATE_IN_PROGRESS +\d+\.\ds", live)
    # later the counts move on while it is still running
    run.expect(lambda s: "1 done" in s or "2 done" in s, "a resource done")

    assert run.wait() == 0
    final = run.text
    assert "Creating stack" not in final  # the live display gives way to the summary
    assert re.search(rf"✓ Stack {name} CREATE_COMPLETE in [\d.]+s: 3 resources done, 0 failed",
                     final)
    assert re.search(r"\| stack_status +\| CREATE_COMPLETE", final)
    # a refreshing display: the elapsed time was shown growing
    shown = sorted({float(m) for snap in run.snapshots
                    for m in re.findall(rf"Creating stack {name} +(\d+\.\d)s", snap)})
    assert len(shown) >= 3 and shown[-1] - shown[0] >= 1.0


def test_failure_on_a_terminal(endpoint: str, workdir: Path, name: str,
                               cleanup: list[str]) -> None:
    cleanup.append(name)
    run = on_terminal(endpoint, workdir, "create", "-t", "failing.yaml", "--wait", name)
    assert run.wait() == 1
    assert re.search(rf"✗ Stack {name} CREATE_FAILED in [\d.]+s: 1 resource done, 1 failed",
                     run.text)
    assert re.search(r"✗ broken CREATE_FAILED: .*Test Resource failed", run.text)


def test_ctrl_c_stops_watching_not_the_action(endpoint: str, workdir: Path, name: str,
                                              cleanup: list[str]) -> None:
    cleanup.append(name)
    # the create waits for a signal, so Ctrl-C surely lands while it runs (a create of a
    # few seconds could end first on a loaded machine, and the CLI exit 0)
    run = on_terminal(endpoint, workdir, "create", "-t", "waiting.yaml", "--wait", name)
    run.expect(lambda s: "CREATE_IN_PROGRESS" in s, "the live display")
    run.type("\x03")
    assert run.wait() == 130
    assert f"stopped watching; the create of stack {name} goes on" in run.text
    assert "Traceback" not in run.text
    # the stack goes on without the client, and completes when signalled
    stack = api_get(endpoint, f"/stacks/{name}")["stack"]
    assert stack["stack_status"] == "CREATE_IN_PROGRESS"
    signalled = httpx.post(f"{endpoint}/stacks/{name}/{stack['id']}/resources/handle/signal",
                           json={"status": "SUCCESS", "id": "1", "data": "go on"},
                           timeout=60)
    assert signalled.status_code == 200, signalled.text
    settled = wait_until(lambda: api_get(endpoint, f"/stacks/{name}")["stack"],
                         lambda s: not s["stack_status"].endswith("IN_PROGRESS"),
                         f"stack {name} to settle")
    assert settled["stack_status"] == "CREATE_COMPLETE"


def test_delete_on_a_terminal_asks_first(endpoint: str, workdir: Path, name: str,
                                         cleanup: list[str]) -> None:
    cleanup.append(name)
    _created(endpoint, workdir, name, "simple.yaml")
    run = on_terminal(endpoint, workdir, "delete", "--wait", name)
    run.expect(lambda s: f"Delete stack {name}? [y/N]" in s, "the question")
    run.type("n\r")
    assert run.wait() == 1
    assert "delete cancelled; nothing was changed" in run.text
    assert api_get(endpoint, f"/stacks/{name}")["stack"]["stack_status"] == "CREATE_COMPLETE"
