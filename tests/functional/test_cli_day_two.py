"""`kiln stack` on a stack that already runs, as a real process against a real `kiln
serve`: resources, suspend/resume/check/cancel, snapshots, events followed live, watching
an action started elsewhere, column selection, the template, abandon/adopt, hooks, and
the one error line every failure prints."""

from __future__ import annotations

import json
import re
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml

from tests.functional.api.heat_target import COMPARE_URL, wait_for
from tests.functional.test_cli_stack import (
    TIMEOUT,
    api_get,
    endpoint,
    env_for,
    field_table,
    kiln_stack,
    name,
    ok,
    on_terminal,
)
from tests.support.server import kiln_command

__all__ = ["endpoint", "name"]  # the fixtures, shared with test_cli_stack

SIMPLE = """\
heat_template_version: 2018-08-31
resources:
  secret:
    type: OS::Heat::RandomString
    properties: {length: 10}
outputs:
  secret: {value: {get_attr: [secret, value]}}
"""

#: a create that ends only when its handle is signalled
WAITING = """\
heat_template_version: 2018-08-31
resources:
  handle: {type: OS::Heat::WaitConditionHandle}
  wait:
    type: OS::Heat::WaitCondition
    properties: {handle: {get_resource: handle}, timeout: 600}
"""

#: WAITING with one more resource, slow to create: an update to it is in progress long
#: enough to be cancelled (a resource, not a wait condition, so that Heat, which lets a
#: resource in progress finish before it rolls back, ends within the test's time too)
WAITING_MORE = WAITING + """\
  slow:
    type: OS::Heat::TestResource
    properties: {action_wait_secs: {create: 20}}
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

#: FAILING after a few seconds: long enough for a watch to attach
FAILING_LATER = FAILING.replace(
    "fine: {type: OS::Heat::None}",
    "fine: {type: OS::Heat::TestResource, properties: {action_wait_secs: {create: 4}}}")

HOOKS = "resource_registry:\n  resources:\n    secret: {hooks: pre-create}\n"


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    for file, text in (("simple.yaml", SIMPLE), ("waiting.yaml", WAITING),
                       ("waiting-more.yaml", WAITING_MORE), ("failing.yaml", FAILING),
                       ("failing-later.yaml", FAILING_LATER),
                       ("hooks.yaml", HOOKS)):
        (tmp_path / file).write_text(text)
    return tmp_path


@pytest.fixture
def stacks(endpoint: str, workdir: Path) -> Any:
    """Stack names to delete after the test."""
    names: list[str] = []
    yield names
    for stack in names:
        kiln_stack(endpoint, workdir, "delete", "--yes", "--wait", stack)


def failed(result: subprocess.CompletedProcess[str], status: int = 1) -> str:
    """The one error line of a refused command."""
    assert result.returncode == status, (result.returncode, result.stdout, result.stderr)
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("kiln: error: "), result.stderr
    assert "Traceback" not in result.stderr
    return lines[0]


def background(endpoint: str, workdir: Path, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen([*kiln_command(), "stack", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, cwd=workdir,
                            env=env_for(endpoint))


def finished(proc: subprocess.Popen[str]) -> tuple[int, str, str]:
    """Exit status, stdout and stderr of a background command (read through the pipes'
    own buffers: communicate() would skip what a readline() already buffered)."""
    assert proc.stdout is not None and proc.stderr is not None
    with proc:
        status = proc.wait(timeout=TIMEOUT)
        return status, proc.stdout.read(), proc.stderr.read()


def stack_status(endpoint: str, name: str) -> str:
    return str(api_get(endpoint, f"/stacks/{name}")["stack"]["stack_status"])


def settled(endpoint: str, name: str) -> str:
    stack = wait_for(lambda: api_get(endpoint, f"/stacks/{name}")["stack"],
                     lambda s: not s["stack_status"].endswith("_IN_PROGRESS"),
                     f"stack {name} to settle")
    return str(stack["stack_status"])


def secret_of(endpoint: str, name: str) -> str:
    (output,) = api_get(endpoint, f"/stacks/{name}")["stack"]["outputs"]
    return str(output["output_value"])


def signal_handle(endpoint: str, workdir: Path, name: str, handle: str = "handle") -> None:
    ok(kiln_stack(endpoint, workdir, "resource", "signal", name, handle, "--data",
                  '{"status": "SUCCESS", "id": "1", "data": "go"}'))


def test_resource_list_show_and_columns(endpoint: str, workdir: Path, name: str,
                                        stacks: list[str]) -> None:
    stacks.append(name)
    ok(kiln_stack(endpoint, workdir, "create", "-t", "waiting.yaml", name))
    table = ok(kiln_stack(endpoint, workdir, "resource", "list", name)).stdout
    header = table.splitlines()[1]
    assert [c.strip() for c in header.strip("|").split("|")] == [
        "resource_name", "physical_resource_id", "resource_type", "resource_status",
        "updated_time"]
    assert re.search(r"\| handle +\| \S+ +\| OS::Heat::WaitConditionHandle +\| "
                     r"CREATE_COMPLETE", table)

    rows = json.loads(ok(kiln_stack(endpoint, workdir, "resource", "list", name, "-f",
                                    "json", "-c", "resource_name", "-c",
                                    "resource_status")).stdout)
    assert sorted(rows, key=lambda r: r["resource_name"]) == [
        {"resource_name": "handle", "resource_status": "CREATE_COMPLETE"},
        {"resource_name": "wait", "resource_status": "CREATE_IN_PROGRESS"}]
    # -c on a table, in the order given
    picked = ok(kiln_stack(endpoint, workdir, "resource", "list", name, "-c",
                           "resource_status", "-c", "resource_name")).stdout
    assert picked.splitlines()[1].split() == ["|", "resource_status", "|", "resource_name",
                                              "|"]

    shown = ok(kiln_stack(endpoint, workdir, "resource", "show", name, "handle")).stdout
    fields = field_table(shown)
    assert fields["resource_type"] == "OS::Heat::WaitConditionHandle"
    assert fields["resource_status"] == "CREATE_COMPLETE"
    one = ok(kiln_stack(endpoint, workdir, "resource", "show", name, "handle",
                        "-c", "resource_status", "-f", "value")).stdout
    assert one == "CREATE_COMPLETE\n"

    missing = failed(kiln_stack(endpoint, workdir, "resource", "show", name, "nope"))
    assert missing == f"kiln: error: Stack {name} has no resource nope"
    bad_column = failed(kiln_stack(endpoint, workdir, "resource", "list", name,
                                   "-c", "colour"), status=2)
    assert "no column 'colour'" in bad_column and "resource_status" in bad_column

    # the signal completes the create
    signal_handle(endpoint, workdir, name)
    assert settled(endpoint, name) == "CREATE_COMPLETE"


def test_resource_list_nested_and_filtered(endpoint: str, workdir: Path, name: str,
                                          stacks: list[str]) -> None:
    stacks.append(name)
    (workdir / "group.yaml").write_text(
        "heat_template_version: 2018-08-31\nresources:\n"
        "  solo: {type: OS::Heat::None}\n"
        "  group:\n    type: OS::Heat::ResourceGroup\n"
        "    properties: {count: 2, resource_def: {type: OS::Heat::None}}\n")
    ok(kiln_stack(endpoint, workdir, "create", "-t", "group.yaml", "--wait", name))
    top = json.loads(ok(kiln_stack(endpoint, workdir, "resource", "list", name, "-f",
                                   "json")).stdout)
    assert {r["resource_name"] for r in top} == {"solo", "group"}
    nested = json.loads(ok(kiln_stack(endpoint, workdir, "resource", "list", name, "-n", "1",
                                      "-f", "json")).stdout)
    by_name = {r["resource_name"]: r for r in nested}
    assert set(by_name) == {"solo", "group", "0", "1"}
    assert by_name["solo"]["stack_name"] == name
    assert by_name["0"]["stack_name"].startswith(f"{name}-group-")
    typed = json.loads(ok(kiln_stack(endpoint, workdir, "resource", "list", name, "--filter",
                                     "type=OS::Heat::None", "-f", "json")).stdout)
    assert [r["resource_name"] for r in typed] == ["solo"]


def test_mark_unhealthy_and_reset(endpoint: str, workdir: Path, name: str,
                                  stacks: list[str]) -> None:
    stacks.append(name)
    ok(kiln_stack(endpoint, workdir, "create", "-t", "simple.yaml", "--wait", name))
    ok(kiln_stack(endpoint, workdir, "resource", "mark-unhealthy", name, "secret",
                  "seen broken"))
    shown = json.loads(ok(kiln_stack(endpoint, workdir, "resource", "show", name, "secret",
                                     "-f", "json")).stdout)
    assert shown["resource_status"] == "CHECK_FAILED"
    assert shown["resource_status_reason"] == "seen broken"
    ok(kiln_stack(endpoint, workdir, "resource", "mark-unhealthy", "--reset", name, "secret"))
    shown = json.loads(ok(kiln_stack(endpoint, workdir, "resource", "show", name, "secret",
                                     "-f", "json")).stdout)
    assert shown["resource_status"] == "CHECK_COMPLETE"


def test_suspend_resume_check(endpoint: str, workdir: Path, name: str,
                              stacks: list[str]) -> None:
    stacks.append(name)
    ok(kiln_stack(endpoint, workdir, "create", "-t", "simple.yaml", "--wait", name))
    for action, status in (("suspend", "SUSPEND_COMPLETE"), ("resume", "RESUME_COMPLETE"),
                           ("check", "CHECK_COMPLETE")):
        result = ok(kiln_stack(endpoint, workdir, action, "--wait", name, "-f", "json"))
        (row,) = json.loads(result.stdout)
        assert row["Stack Name"] == name
        assert row["Stack Status"] == status
        assert re.search(rf"Stack {name} {status} in [\d.]+s", result.stderr)
        assert stack_status(endpoint, name) == status
    # resuming a stack that is not suspended: the endpoint's refusal, one line
    again = kiln_stack(endpoint, workdir, "suspend", "--wait", name)
    assert again.returncode == 0, again.stderr
    missing = failed(kiln_stack(endpoint, workdir, "suspend", "nosuch-stack"))
    assert missing == "kiln: error: Stack not found: nosuch-stack"


def test_cancel_update_rolls_back_or_not(endpoint: str, workdir: Path, name: str,
                                         stacks: list[str]) -> None:
    stacks.append(name)
    ok(kiln_stack(endpoint, workdir, "create", "-t", "waiting.yaml", name))
    signal_handle(endpoint, workdir, name)
    assert settled(endpoint, name) == "CREATE_COMPLETE"
    refused = failed(kiln_stack(endpoint, workdir, "cancel", name))
    assert refused == ("kiln: error: Cancelling update when stack is CREATE_COMPLETE is "
                       "not supported.")

    ok(kiln_stack(endpoint, workdir, "update", name, "-t", "waiting-more.yaml", "--yes"))
    assert stack_status(endpoint, name) == "UPDATE_IN_PROGRESS"
    rolled = ok(kiln_stack(endpoint, workdir, "cancel", "--wait", name, "-f", "json"))
    assert json.loads(rolled.stdout)[0]["Stack Status"] == "ROLLBACK_COMPLETE"
    names = {r["resource_name"] for r in api_get(endpoint, f"/stacks/{name}/resources")[
        "resources"]}
    assert names == {"handle", "wait"}   # what the update added was rolled back

    ok(kiln_stack(endpoint, workdir, "update", name, "-t", "waiting-more.yaml", "--yes"))
    stopped = ok(kiln_stack(endpoint, workdir, "cancel", "--no-rollback", "--wait", name,
                            "-f", "json"))
    assert json.loads(stopped.stdout)[0]["Stack Status"] == "UPDATE_FAILED"


def test_cancel_a_create_without_rollback(endpoint: str, workdir: Path, name: str,
                                          stacks: list[str]) -> None:
    stacks.append(name)
    ok(kiln_stack(endpoint, workdir, "create", "-t", "waiting.yaml", name))
    refused = failed(kiln_stack(endpoint, workdir, "cancel", name))
    assert refused == ("kiln: error: Cancelling update when stack is CREATE_IN_PROGRESS is "
                       "not supported.")
    stopped = ok(kiln_stack(endpoint, workdir, "cancel", "--no-rollback", "--wait", name,
                            "-f", "json"))
    assert json.loads(stopped.stdout)[0]["Stack Status"] == "CREATE_FAILED"


def test_watch_an_action_started_elsewhere(endpoint: str, workdir: Path, name: str,
                                           stacks: list[str]) -> None:
    stacks.append(name)
    ok(kiln_stack(endpoint, workdir, "create", "-t", "waiting.yaml", name))
    watching = background(endpoint, workdir, "watch", name, "-f", "json")
    wait_for(lambda: api_get(endpoint, f"/stacks/{name}/resources")["resources"],
             lambda rs: any(r["resource_name"] == "handle"
                            and r["resource_status"] == "CREATE_COMPLETE" for r in rs),
             "the handle")
    time.sleep(1)   # the watch is attached (it replays from the action's start anyway)
    signal_handle(endpoint, workdir, name)
    status, out, err = finished(watching)
    assert status == 0, err
    assert json.loads(out)["stack_status"] == "CREATE_COMPLETE"
    assert re.search(rf"Stack {name} CREATE_COMPLETE in [\d.]+s: 2 resources done, "
                     "0 failed", err), err

    # nothing running: the stack as it is, and the exit status says how it ended
    idle = ok(kiln_stack(endpoint, workdir, "watch", name))
    assert "has no action in progress; it is CREATE_COMPLETE" in idle.stderr
    assert field_table(idle.stdout)["stack_status"] == "CREATE_COMPLETE"


def test_watch_on_a_terminal(endpoint: str, workdir: Path, name: str,
                             stacks: list[str]) -> None:
    """On a terminal, `watch` is the live display `create --wait` has."""
    stacks.append(name)
    ok(kiln_stack(endpoint, workdir, "create", "-t", "waiting.yaml", name))
    run = on_terminal(endpoint, workdir, "watch", name)
    live = run.expect(lambda s: f"Creating stack {name}" in s and "CREATE_IN_PROGRESS" in s,
                      "the live display")
    assert re.search(r"1 done · 1 in progress · 0 failed", live), live
    signal_handle(endpoint, workdir, name)
    assert run.wait() == 0
    assert re.search(rf"✓ Stack {name} CREATE_COMPLETE in [\d.]+s: 2 resources done, "
                     "0 failed", run.text)


def test_watch_a_failing_action_exits_1(endpoint: str, workdir: Path, name: str,
                                        stacks: list[str]) -> None:
    stacks.append(name)
    ok(kiln_stack(endpoint, workdir, "create", "-t", "failing-later.yaml", name))
    result = kiln_stack(endpoint, workdir, "watch", name)
    assert result.returncode == 1, result.stderr
    assert field_table(result.stdout)["stack_status"] == "CREATE_FAILED"
    assert re.search(rf"Stack {name} CREATE_FAILED in [\d.]+s: 1 resource done, 1 failed",
                     result.stderr), result.stderr
    assert re.search(r"✗ broken CREATE_FAILED: .*Test Resource failed", result.stderr)


def test_failure_reason_said_once(endpoint: str, workdir: Path, name: str,
                                  stacks: list[str]) -> None:
    stacks.append(name)
    result = kiln_stack(endpoint, workdir, "create", "-t", "failing.yaml", "--wait", name)
    assert result.returncode == 1
    summary = result.stderr.split(f"Stack {name} CREATE_FAILED in", 1)[1]
    assert "1 resource done, 1 failed" in summary
    assert summary.count("Test Resource failed") == 1, summary
    assert re.search(r"✗ broken CREATE_FAILED: .*Test Resource failed", summary)


def test_event_list_and_follow(endpoint: str, workdir: Path, name: str,
                               stacks: list[str]) -> None:
    stacks.append(name)
    ok(kiln_stack(endpoint, workdir, "create", "-t", "simple.yaml", "--wait", name))
    events = json.loads(ok(kiln_stack(endpoint, workdir, "event", "list", name, "--resource",
                                      "secret", "-f", "json")).stdout)
    assert [e["resource_status"] for e in events] == ["CREATE_IN_PROGRESS",
                                                      "CREATE_COMPLETE"]
    following = background(endpoint, workdir, "event", "list", "--follow", name)
    assert following.stdout is not None
    first = following.stdout.readline()   # what happened so far comes first
    assert re.search(rf"\[{name}\]: CREATE_IN_PROGRESS", first), first
    ok(kiln_stack(endpoint, workdir, "suspend", "--wait", name))
    ok(kiln_stack(endpoint, workdir, "delete", "--yes", "--wait", name))
    status, out, err = finished(following)   # the stack's delete ends the stream
    assert status == 0, err
    lines = [first, *out.splitlines()]
    for expected in (rf"\[{name}\.secret\]: CREATE_COMPLETE", rf"\[{name}\]: SUSPEND_COMPLETE",
                     rf"\[{name}\.secret\]: DELETE_COMPLETE", rf"\[{name}\]: DELETE_COMPLETE"):
        assert any(re.search(expected, line) for line in lines), "\n".join(lines)


def test_follow_stops_on_ctrl_c(endpoint: str, workdir: Path, name: str,
                                stacks: list[str]) -> None:
    stacks.append(name)
    ok(kiln_stack(endpoint, workdir, "create", "-t", "simple.yaml", "--wait", name))
    following = background(endpoint, workdir, "event", "list", "--follow", name)
    assert following.stdout is not None
    following.stdout.readline()
    following.send_signal(signal.SIGINT)
    status, _, err = finished(following)
    assert status == 130
    assert "Traceback" not in err


def test_snapshots(endpoint: str, workdir: Path, name: str, stacks: list[str]) -> None:
    stacks.append(name)
    ok(kiln_stack(endpoint, workdir, "create", "-t", "simple.yaml", "--wait", name))
    made = json.loads(ok(kiln_stack(endpoint, workdir, "snapshot", "create", name, "--name",
                                    "first", "--wait", "-f", "json")).stdout)
    assert made["name"] == "first"
    assert made["status"] == "COMPLETE"
    listed = ok(kiln_stack(endpoint, workdir, "snapshot", "list", name)).stdout
    assert re.search(rf"\| {made['id']} \| first +\| COMPLETE ", listed), listed
    shown = json.loads(ok(kiln_stack(endpoint, workdir, "snapshot", "show", name, "first",
                                     "-f", "json")).stdout)
    assert shown["id"] == made["id"]
    assert "secret" in json.dumps(shown["data"])

    before = secret_of(endpoint, name)
    restored = ok(kiln_stack(endpoint, workdir, "snapshot", "restore", name, made["id"],
                             "--wait", "-f", "json"))
    assert json.loads(restored.stdout)[0]["Stack Status"] == "RESTORE_COMPLETE"
    assert re.search(rf"Stack {name} RESTORE_COMPLETE", restored.stderr)
    after = secret_of(endpoint, name)
    assert len(after) == len(before) == 10

    ok(kiln_stack(endpoint, workdir, "snapshot", "delete", name, "first"))
    assert json.loads(ok(kiln_stack(endpoint, workdir, "snapshot", "list", name,
                                    "-f", "json")).stdout) == []
    gone = failed(kiln_stack(endpoint, workdir, "snapshot", "show", name, "first"))
    assert gone == f"kiln: error: stack {name} has no snapshot first"


def test_update_prints_only_the_columns_asked_for(endpoint: str, workdir: Path, name: str,
                                                  stacks: list[str]) -> None:
    """`-f value -c` makes a script's one value: the plan goes to stderr."""
    stacks.append(name)
    ok(kiln_stack(endpoint, workdir, "create", "-t", "simple.yaml", "--wait", name))
    updated = ok(kiln_stack(endpoint, workdir, "update", name, "--existing", "--yes",
                            "--wait", "-f", "value", "-c", "stack_status"))
    assert updated.stdout == "UPDATE_COMPLETE\n"
    assert "Plan for stack" in updated.stderr


def test_template_show(endpoint: str, workdir: Path, name: str, stacks: list[str]) -> None:
    stacks.append(name)
    ok(kiln_stack(endpoint, workdir, "create", "-t", "simple.yaml", "--wait", name))
    shown = ok(kiln_stack(endpoint, workdir, "template", "show", name)).stdout
    assert yaml.safe_load(shown)["resources"] == yaml.safe_load(SIMPLE)["resources"]
    as_json = json.loads(ok(kiln_stack(endpoint, workdir, "template", "show", name,
                                       "-f", "json")).stdout)
    assert as_json["outputs"] == {"secret": {"value": {"get_attr": ["secret", "value"]}}}


def test_abandon_then_adopt_keeps_the_resources(endpoint: str, workdir: Path, name: str,
                                                stacks: list[str]) -> None:
    stacks.append(name)
    ok(kiln_stack(endpoint, workdir, "create", "-t", "simple.yaml", "--wait", name))
    value = secret_of(endpoint, name)
    abandoned = kiln_stack(endpoint, workdir, "abandon", name, "--output-file", "s.json")
    if COMPARE_URL and "Stack Abandon is not supported" in abandoned.stderr:
        pytest.skip("the compared Heat runs without enable_stack_abandon")
    ok(abandoned)
    assert f"stack {name} abandoned" in abandoned.stderr
    data = json.loads((workdir / "s.json").read_text())
    assert data["name"] == name and "secret" in data["resources"]
    wait_for(lambda: httpx.get(f"{endpoint}/stacks/{name}", timeout=30).status_code,
             lambda code: code == 404, f"stack {name} to be forgotten")

    adopted = ok(kiln_stack(endpoint, workdir, "adopt", name, "--adopt-file", "s.json",
                            "--wait"))
    assert field_table(adopted.stdout)["stack_status"] == "ADOPT_COMPLETE"
    assert re.search(rf"Stack {name} ADOPT_COMPLETE", adopted.stderr)
    after = secret_of(endpoint, name)
    assert after == value   # the same resource, not a new one


def test_hook_clear(endpoint: str, workdir: Path, name: str, stacks: list[str]) -> None:
    stacks.append(name)
    ok(kiln_stack(endpoint, workdir, "create", "-t", "simple.yaml", "-e", "hooks.yaml", name))
    wait_for(lambda: api_get(endpoint, f"/stacks/{name}/events")["events"],
             lambda events: any("paused until Hook pre-create" in (
                 e.get("resource_status_reason") or "") for e in events),
             "the pre-create hook")
    wrong = failed(kiln_stack(endpoint, workdir, "hook", "clear", "--pre-delete", name,
                              "secret"))
    assert "pre-delete" in wrong
    assert stack_status(endpoint, name) == "CREATE_IN_PROGRESS"
    ok(kiln_stack(endpoint, workdir, "hook", "clear", "--pre-create", name, "secret"))
    assert settled(endpoint, name) == "CREATE_COMPLETE"


def test_one_error_prefix(endpoint: str, workdir: Path) -> None:
    """Click's errors too are one `kiln: error:` line, never `Error:`."""
    unreadable = failed(kiln_stack(endpoint, workdir, "create", "-t", "nowhere.yaml", "s"))
    assert unreadable == (f"kiln: error: cannot read {workdir / 'nowhere.yaml'}: "
                          "No such file or directory")
    usage = failed(kiln_stack(endpoint, workdir, "resource", "show"), status=2)
    assert usage == ("kiln: error: Missing argument 'NAME'. "
                     "(see 'kiln stack resource show --help')")
    bad = failed(kiln_stack(endpoint, workdir, "create", "-t", "simple.yaml", "--parameter",
                            "oops", "s"), status=2)
    assert "'oops' is not KEY=VALUE" in bad
    unknown = failed(kiln_stack(endpoint, workdir, "snapshot", "list", "nosuch"))
    assert unknown == "kiln: error: Stack not found: nosuch"


def test_ec2_credentials_list_is_not_offered(endpoint: str, workdir: Path) -> None:
    """The Orchestration API has no call listing EC2 credentials: `kiln stack` offers no
    command for it (docs/cli-reference.md says where they are listed)."""
    result = kiln_stack(endpoint, workdir, "ec2-credentials", "list")
    assert result.returncode == 2
    assert result.stderr.startswith("kiln: error: No such command 'ec2-credentials'")


def test_a_stack_name_given_before_the_command(endpoint: str, workdir: Path) -> None:
    """`kiln stack history tour` (the name where the command goes, a newcomer's first
    guess) says where the name goes and the command that would have worked; a typo'd
    command keeps click's suggestion alone."""
    history = failed(kiln_stack(endpoint, workdir, "history", "tour"), status=2)
    assert history == (
        "kiln: error: No such command 'tour'. The stack's name goes after the command, as "
        "in 'kiln stack history list tour'. (see 'kiln stack history --help')")
    template = failed(kiln_stack(endpoint, workdir, "template", "tour"), status=2)
    assert "as in 'kiln stack template show tour'." in template
    shop = failed(kiln_stack(endpoint, workdir, "changeset", "shop"), status=2)
    assert "Did you mean 'show'? The stack's name goes after the command, as in " \
        "'kiln stack changeset list shop'." in shop
    typo = failed(kiln_stack(endpoint, workdir, "snapshot", "lisst", "tour"), status=2)
    assert typo == ("kiln: error: No such command 'lisst'. Did you mean 'list'? "
                    "(see 'kiln stack snapshot --help')")
