"""More of `kiln stack` as its user meets it: the commands of docs/cli.md run verbatim, files a
template refers to, a rolled-back create, the plan of `update --dry-run`, and logging in
through a real Keystone with the openstack CLI's OS_* variables."""

from __future__ import annotations

import http.server
import json
import re
import shlex
import subprocess
import textwrap
import uuid
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.functional.test_cli_stack import (
    TIMEOUT,
    api_get,
    endpoint,
    field_table,
    kiln_stack,
    ok,
)
from tests.support import docs
from tests.support.fixtures import StartKeystone
from tests.support.keystone import KeystoneProcess
from tests.support.local_http import local_http_server
from tests.support.server import KilnProcess, clean_env, kiln_command

__all__ = ["endpoint"]  # the fixture, shared with test_cli_stack

README_ENDPOINT = "http://127.0.0.1:8004/v1/demo"


def _section(name: str, title: str) -> str:
    return docs.section(docs.page(name), title)


def _quick_start_template() -> tuple[str, str]:
    match = re.search(r"cat > (\S+) <<'YAML'\n(.*?)\nYAML\n",
                      _section("getting-started.md", "Quick start"), re.S)
    assert match, "the quick start writes its template with a heredoc"
    return match[1], match[2] + "\n"


def test_readme_kiln_stack_commands(kiln_server: KilnProcess, tmp_path: Path) -> None:
    section = docs.page("cli.md")
    block = re.search(r"```sh\n(.*?)```", section, re.S)
    assert block
    filename, body = _quick_start_template()
    (tmp_path / filename).write_text(body)
    lines = block[1].strip().splitlines()
    assert lines[0] == f"export OS_ENDPOINT={README_ENDPOINT}"
    endpoint_url = kiln_server.endpoint("demo")
    results = {}
    for line in lines[1:]:
        words = shlex.split(line)
        assert words[:2] == ["kiln", "stack"]
        results[words[2]] = ok(kiln_stack(endpoint_url, tmp_path, *words[2:]))

    assert field_table(results["create"].stdout)["stack_status"] == "CREATE_COMPLETE"
    assert re.search(r"\| s1 +\| demo +\| CREATE_COMPLETE", results["list"].stdout)
    assert field_table(results["show"].stdout)["stack_name"] == "s1"
    value = field_table(results["outputs"].stdout)["output_value"]
    assert len(value) == 16 and value.isalnum()
    assert "CREATE_COMPLETE" in results["events"].stdout
    # the plan docs/cli.md shows is the one printed
    shown = re.search(r"```\n(\s*Plan for stack.*?)```", section, re.S)
    assert shown
    assert results["preview"].stdout == textwrap.dedent(shown[1])
    assert field_table(results["update"].stdout)["stack_status"] == "UPDATE_COMPLETE"
    assert "Stack s1 DELETE_COMPLETE" in results["delete"].stderr


def test_the_readme_tour(kiln_server: KilnProcess, tmp_path: Path) -> None:
    """The README's one-minute tour, line by line (the endpoint's port aside): the
    template it writes, then each `.venv/bin/kiln stack` command, run with this Kiln."""
    section = docs.section(docs.readme(), "A one-minute tour")
    (block,) = re.findall(r"```sh\n(.*?)```", section, re.S)
    heredoc = re.search(r"cat > (\S+) <<'YAML'\n(.*?)\nYAML\n", block, re.S)
    assert heredoc
    (tmp_path / heredoc[1]).write_text(heredoc[2] + "\n")
    lines = [line for line in block.splitlines() if line.startswith(".venv/bin/kiln ")]
    assert block.startswith(f"export OS_ENDPOINT={README_ENDPOINT}\n")
    results = {}
    for line in lines:
        words = shlex.split(line)
        assert words[1] == "stack"
        results[words[2]] = ok(kiln_stack(kiln_server.endpoint("demo"), tmp_path, *words[2:]))
    assert list(results) == ["create", "outputs", "delete"]
    assert field_table(results["create"].stdout)["stack_status"] == "CREATE_COMPLETE"
    value = field_table(results["outputs"].stdout)["output_value"]
    assert len(value) == 16 and value.isalnum()
    assert "DELETE_COMPLETE" in results["delete"].stderr

def test_files_a_template_refers_to(endpoint: str, tmp_path: Path) -> None:
    """get_file, a template used as a type (in a subdirectory, with its own get_file) and an
    environment's provider template are all read locally and reach the server."""
    name = f"cli-files-{uuid.uuid4().hex[:8]}"
    (tmp_path / "sub").mkdir()
    (tmp_path / "greeting.txt").write_text("hello from a file")
    (tmp_path / "sub" / "inner.txt").write_text("nested file")
    (tmp_path / "sub" / "child.yaml").write_text(
        "heat_template_version: 2018-08-31\n"
        "resources:\n  v: {type: OS::Heat::Value, properties: {value: {get_file: inner.txt}}}\n"
        "outputs:\n  text: {value: {get_attr: [v, value]}}\n")
    (tmp_path / "provider.yaml").write_text(
        "heat_template_version: 2018-08-31\nparameters:\n  word: {type: string}\n"
        "outputs:\n  said: {value: {get_param: word}}\n")
    (tmp_path / "env.yaml").write_text(
        "resource_registry:\n  My::Word: provider.yaml\nparameter_defaults:\n  word: hi\n")
    (tmp_path / "main.yaml").write_text(
        "heat_template_version: 2018-08-31\n"
        "parameters:\n  word: {type: string}\n"
        "resources:\n"
        "  greeting: {type: OS::Heat::Value, properties: {value: {get_file: greeting.txt}}}\n"
        "  child: {type: sub/child.yaml}\n"
        "  worded: {type: My::Word, properties: {word: {get_param: word}}}\n"
        "outputs:\n"
        "  greeting: {value: {get_attr: [greeting, value]}}\n"
        "  child: {value: {get_attr: [child, text]}}\n"
        "  word: {value: {get_attr: [worded, said]}}\n"
        "  param: {value: {get_param: word}}\n")
    try:
        ok(kiln_stack(endpoint, tmp_path, "create", "-t", "main.yaml", "-e", "env.yaml",
                      "--wait", name))
        outputs = json.loads(ok(kiln_stack(endpoint, tmp_path, "outputs", name,
                                           "-f", "json")).stdout)
        values = {o["output_key"]: o["output_value"] for o in outputs}
        assert values == {"greeting": "hello from a file", "child": "nested file",
                          "word": "hi", "param": "hi"}
    finally:
        kiln_stack(endpoint, tmp_path, "delete", "--yes", "--wait", name)


def test_rolled_back_create_exits_non_zero(endpoint: str, tmp_path: Path) -> None:
    name = f"cli-rb-{uuid.uuid4().hex[:8]}"
    (tmp_path / "failing.yaml").write_text(
        "heat_template_version: 2018-08-31\nresources:\n"
        "  fine: {type: OS::Heat::None}\n"
        "  broken: {type: OS::Heat::TestResource, depends_on: fine, "
        "properties: {fail: true}}\n")
    try:
        result = kiln_stack(endpoint, tmp_path, "create", "-t", "failing.yaml",
                            "--enable-rollback", "--wait", name, "-f", "json")
        assert result.returncode == 1, result.stderr
        assert json.loads(result.stdout)["stack_status"] == "ROLLBACK_COMPLETE"
        assert f"Stack {name} ROLLBACK_COMPLETE" in result.stderr
        assert re.search(r"broken CREATE_FAILED: .*Test Resource failed", result.stderr)
    finally:
        kiln_stack(endpoint, tmp_path, "delete", "--yes", "--wait", name)


def test_update_dry_run_changes_nothing(endpoint: str, tmp_path: Path) -> None:
    name = f"cli-dry-{uuid.uuid4().hex[:8]}"
    (tmp_path / "v1.yaml").write_text(
        "heat_template_version: 2018-08-31\nresources:\n"
        "  v: {type: OS::Heat::Value, properties: {value: {a: 1, b: [1, 2]}}}\n")
    (tmp_path / "v2.yaml").write_text(
        "heat_template_version: 2018-08-31\nresources:\n"
        "  v: {type: OS::Heat::Value, properties: {value: {a: 2, b: [1, 2], c: x}}}\n")
    try:
        ok(kiln_stack(endpoint, tmp_path, "create", "-t", "v1.yaml", "--wait", name))
        plan = ok(kiln_stack(endpoint, tmp_path, "update", name, "-t", "v2.yaml",
                             "--dry-run")).stdout
        lines = [line.strip() for line in plan.splitlines()]
        # a change deep inside a map is one line per leaf that changed
        assert lines[1:] == ["~ v  (OS::Heat::Value)  will be updated in place",
                             "~ value.a: 1 → 2", '+ value.c: "x"']
        stack = api_get(endpoint, f"/stacks/{name}")["stack"]
        assert stack["stack_status"] == "CREATE_COMPLETE"
    finally:
        kiln_stack(endpoint, tmp_path, "delete", "--yes", "--wait", name)


@pytest.fixture
def keystone_with_kiln(start_keystone_factory: StartKeystone,
                       kiln_server: KilnProcess) -> KeystoneProcess:
    """A private Keystone whose catalog lists the module's kiln serve as orchestration."""
    keystone = start_keystone_factory()
    keystone.register_service("orchestration", "kiln",
                              f"{kiln_server.url}/v1/%(tenant_id)s")
    return keystone


# a dozen CLI runs, each a Python start and a Keystone login: 156 s measured at load 27,
# too close to the suite's 300 s per test
@pytest.mark.timeout(900)
def test_keystone_login_finds_the_endpoint(keystone_with_kiln: KeystoneProcess,
                                           kiln_server: KilnProcess, tmp_path: Path) -> None:
    account = keystone_with_kiln.account()
    (tmp_path / "t.yaml").write_text(
        "heat_template_version: 2018-08-31\nresources:\n  n: {type: OS::Heat::None}\n")
    env = {**clean_env(), **account.openrc()}

    def run(*args: str, environ: dict[str, str] = env) -> subprocess.CompletedProcess[str]:
        return subprocess.run([*kiln_command(), "stack", *args], capture_output=True,
                              text=True, cwd=tmp_path, env=environ, timeout=TIMEOUT,
                              check=False)

    created = run("create", "-t", "t.yaml", "--wait", "ks1")
    assert created.returncode == 0, created.stderr
    # the catalog's URL with the token's project id in it: the stack is in that project
    listed = httpx.get(f"{kiln_server.url}/v1/{account.project_id}/stacks", timeout=30)
    assert [s["stack_name"] for s in listed.json()["stacks"]] == ["ks1"]
    shown = json.loads(run("show", "ks1", "-f", "json").stdout)
    assert shown["stack_status"] == "CREATE_COMPLETE"

    wrong = run("list", environ={**env, "OS_PASSWORD": "not-the-password"})
    assert wrong.returncode == 1
    assert wrong.stderr.startswith("kiln: error: authentication failed")
    assert "Traceback" not in wrong.stderr
    assert run("delete", "--yes", "--wait", "ks1").returncode == 0

    # the same login from a clouds.yaml entry, OS_CLOUD the only setting (as openstack's)
    rc = account.openrc()
    clouds = {"clouds": {
        "mine": {"auth": {"auth_url": rc["OS_AUTH_URL"], "username": rc["OS_USERNAME"],
                          "password": rc["OS_PASSWORD"], "project_name": rc["OS_PROJECT_NAME"],
                          "user_domain_name": "Default", "project_domain_name": "Default"}},
        "local": {"auth_type": "none",
                  "auth": {"endpoint": f"{kiln_server.url}/v1/{account.project_id}"}}}}
    (tmp_path / "clouds.yaml").write_text(json.dumps(clouds))
    by_file = {**clean_env(), "OS_CLIENT_CONFIG_FILE": str(tmp_path / "clouds.yaml")}
    made = run("create", "-t", "t.yaml", "--wait", "ks2", environ={**by_file, "OS_CLOUD": "mine"})
    assert made.returncode == 0, made.stderr
    listed = json.loads(run("--os-cloud", "local", "list", "-f", "json", environ=by_file).stdout)
    assert [s["Stack Name"] for s in listed] == ["ks2"]
    # a variable given beside the cloud wins over the file's value, as for openstack
    refused = run("list", environ={**by_file, "OS_CLOUD": "mine", "OS_PASSWORD": "wrong"})
    assert refused.returncode == 1
    assert refused.stderr.startswith("kiln: error: authentication failed")
    missing = run("list", environ={**by_file, "OS_CLOUD": "nowhere"})
    assert missing.returncode == 2
    assert "--os-cloud nowhere: Cloud nowhere was not found" in missing.stderr
    assert run("delete", "--yes", "--wait", "ks2", environ={**by_file, "OS_CLOUD": "mine"}
               ).returncode == 0


def test_existing_update_keeps_the_template(endpoint: str, tmp_path: Path) -> None:
    """--existing (PATCH): only the parameter given changes; the plan shows its effect."""
    name = f"cli-patch-{uuid.uuid4().hex[:8]}"
    (tmp_path / "t.yaml").write_text(
        "heat_template_version: 2018-08-31\n"
        "parameters:\n  length: {type: number, default: 8}\n  word: {type: string}\n"
        "resources:\n"
        "  secret: {type: OS::Heat::RandomString, properties: {length: {get_param: length}}}\n"
        "  said: {type: OS::Heat::Value, properties: {value: {get_param: word}}}\n")
    try:
        ok(kiln_stack(endpoint, tmp_path, "create", "-t", "t.yaml", "--parameter", "word=hi",
                      "--wait", name))
        result = ok(kiln_stack(endpoint, tmp_path, "update", name, "--existing",
                               "--parameter", "length=11", "--yes", "--wait"))
        assert "-/+ secret  (OS::Heat::RandomString)  will be replaced" in result.stdout
        assert "~ length: 8 → 11" in result.stdout
        assert "said" not in result.stdout.split("Plan for stack", 1)[1].split("+---")[0]
        stack = api_get(endpoint, f"/stacks/{name}")["stack"]
        assert stack["stack_status"] == "UPDATE_COMPLETE"
        assert stack["parameters"]["word"] == "hi"
        assert stack["parameters"]["length"] == "11"

        neither = kiln_stack(endpoint, tmp_path, "update", name, "--yes")
        assert neither.returncode == 2
        assert "give a template (-t) or --existing" in neither.stderr
    finally:
        kiln_stack(endpoint, tmp_path, "delete", "--yes", "--wait", name)


def test_tags_timeout_and_list_filters(endpoint: str, tmp_path: Path) -> None:
    name = f"cli-tags-{uuid.uuid4().hex[:8]}"
    tag = f"t{uuid.uuid4().hex[:6]}"
    (tmp_path / "t.yaml").write_text(
        "heat_template_version: 2018-08-31\nresources:\n  n: {type: OS::Heat::None}\n")
    try:
        created = json.loads(ok(kiln_stack(
            endpoint, tmp_path, "create", "-t", "t.yaml", "--tags", f"{tag},other",
            "--timeout", "7", "--wait", name, "-f", "json")).stdout)
        assert created["stack_status"] == "CREATE_COMPLETE"
        shown = json.loads(ok(kiln_stack(endpoint, tmp_path, "show", name, "-f",
                                         "json")).stdout)
        assert sorted(shown["tags"]) == sorted([tag, "other"])
        assert shown["timeout_mins"] == 7
        tagged = json.loads(ok(kiln_stack(endpoint, tmp_path, "list", "--tags", tag,
                                          "-f", "json")).stdout)
        assert [r["Stack Name"] for r in tagged] == [name]
        by_status = json.loads(ok(kiln_stack(
            endpoint, tmp_path, "list", "--property", "status=CREATE_COMPLETE",
            "--property", f"name={name}", "-f", "json")).stdout)
        assert [r["Stack Name"] for r in by_status] == [name]
        failed_only = json.loads(ok(kiln_stack(
            endpoint, tmp_path, "list", "--property", "status=CREATE_FAILED",
            "--property", f"name={name}", "-f", "json")).stdout)
        assert failed_only == []
    finally:
        kiln_stack(endpoint, tmp_path, "delete", "--yes", "--wait", name)


def test_wait_follows_kiln_live_event_stream(kiln_server: KilnProcess, tmp_path: Path) -> None:
    """Against kiln serve, --wait reads the server-sent event stream: one events request
    for the whole action, however long it runs (polling asks again and again)."""
    name = f"cli-sse-{uuid.uuid4().hex[:8]}"
    (tmp_path / "slow.yaml").write_text(
        "heat_template_version: 2018-08-31\nresources:\n"
        "  a: {type: OS::Heat::TestResource, properties: {action_wait_secs: {create: 2}}}\n"
        "  b: {type: OS::Heat::TestResource, depends_on: a,\n"
        "      properties: {action_wait_secs: {create: 2}}}\n")
    endpoint_url = kiln_server.endpoint("demo")
    created = ok(kiln_stack(endpoint_url, tmp_path, "create", "-t", "slow.yaml", "--wait",
                            name))
    assert re.search(rf"\[{name}\.b\]: CREATE_COMPLETE", created.stderr)
    assert f"Stack {name} CREATE_COMPLETE" in created.stderr
    stack_id = field_table(created.stdout)["id"]
    events_path = f"/v1/demo/stacks/{name}/{stack_id}/events"
    requests = kiln_server.records_when_logged(
        lambda r: r.get("logger") == "kiln.access" and r.get("path") == events_path)
    assert len(requests) == 1, requests
    kiln_stack(endpoint_url, tmp_path, "delete", "--yes", "--wait", name)


def test_template_and_environment_from_urls(endpoint: str, tmp_path: Path) -> None:
    """-t and -e take URLs; what they refer to is fetched relative to them, by the CLI."""
    site = tmp_path / "site"
    (site / "t").mkdir(parents=True)
    (site / "t" / "main.yaml").write_text(
        "heat_template_version: 2018-08-31\nparameters:\n  word: {type: string}\n"
        "resources:\n"
        "  f: {type: OS::Heat::Value, properties: {value: {get_file: words/hello.txt}}}\n"
        "outputs:\n  f: {value: {get_attr: [f, value]}}\n  w: {value: {get_param: word}}\n")
    (site / "t" / "words").mkdir()
    (site / "t" / "words" / "hello.txt").write_text("hello over http")
    (site / "env.yaml").write_text("parameters:\n  word: from-url-env\n")
    served: list[str] = []

    class Files(http.server.SimpleHTTPRequestHandler):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, directory=str(site), **kwargs)

        def log_message(self, format: str, *args: Any) -> None:
            served.append(self.path)

    name = f"cli-url-{uuid.uuid4().hex[:8]}"
    with local_http_server(Files) as base:
        try:
            ok(kiln_stack(endpoint, tmp_path, "create", "-t", f"{base}/t/main.yaml",
                          "-e", f"{base}/env.yaml", "--wait", name))
            outputs = json.loads(ok(kiln_stack(endpoint, tmp_path, "outputs", name,
                                               "-f", "json")).stdout)
            assert {o["output_key"]: o["output_value"] for o in outputs} == {
                "f": "hello over http", "w": "from-url-env"}
            assert sorted(served) == ["/env.yaml", "/t/main.yaml", "/t/words/hello.txt"]
        finally:
            kiln_stack(endpoint, tmp_path, "delete", "--yes", "--wait", name)


def test_progress_counts_the_members_of_nested_stacks(endpoint: str, tmp_path: Path) -> None:
    """Against kiln serve the watch streams the nested stacks' events too: a group's
    members are counted and named by their path from the top stack."""
    name = f"cli-nested-{uuid.uuid4().hex[:8]}"
    (tmp_path / "member.yaml").write_text(
        "heat_template_version: 2018-08-31\nresources:\n"
        "  inner: {type: OS::Heat::RandomString}\n")
    (tmp_path / "t.yaml").write_text(
        "heat_template_version: 2018-08-31\nresources:\n"
        "  group:\n    type: OS::Heat::ResourceGroup\n"
        "    properties: {count: 3, resource_def: {type: member.yaml}}\n"
        "  after: {type: OS::Heat::None, depends_on: [group]}\n")
    try:
        created = ok(kiln_stack(endpoint, tmp_path, "create", "-t", "t.yaml", "--wait", name))
        lines = created.stderr.splitlines()
        for member in ("0", "1", "2"):
            assert any(f"[{name}.group.{member}]: CREATE_COMPLETE" in line for line in lines)
            assert any(f"[{name}.group.{member}.inner]: CREATE_COMPLETE" in line
                       for line in lines), created.stderr
        # group, after, three members and the resource inside each
        assert re.search(rf"Stack {name} CREATE_COMPLETE in [\d.]+s: 8 resources done, "
                         "0 failed", created.stderr), created.stderr
    finally:
        kiln_stack(endpoint, tmp_path, "delete", "--yes", "--wait", name)
