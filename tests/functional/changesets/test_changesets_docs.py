"""The worked examples of docs/changesets.md, run as written (the ports aside) against
a real ``kiln serve``: the sh block with bash and the ``kiln`` CLI, the python blocks
with boto3 and a keypair from the command their comment names."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support import docs
from tests.support.clients import heat_client
from tests.support.server import KilnProcess, clean_env, kiln_command


def _block(language: str, heading: str) -> str:
    section = docs.section(docs.page("changesets.md"), heading)
    (block,) = re.findall(rf"```{language}\n(.*?)```", section, re.S)
    return block


def _run(script: str, kiln_server: KilnProcess, workdir: Path) -> subprocess.CompletedProcess[str]:
    """A page's sh block with bash, against the server (its port in place of 8004)."""
    script = script.replace("http://127.0.0.1:8004/", f"{kiln_server.url}/")
    env = {**clean_env(), "NO_COLOR": "1"}
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    done = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", script],
        cwd=workdir,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, f"{done.stdout}\n{done.stderr}"
    return done


def test_the_cli_example(kiln_server: KilnProcess, tmp_path: Path) -> None:
    script = _block("sh", "With the kiln CLI")
    assert "http://127.0.0.1:8004/v1/demo" in script
    done = _run(script, kiln_server, tmp_path)
    out = done.stdout
    # what the page says the commands print
    assert out.rstrip().splitlines()[-1] == "EXECUTE_COMPLETE"
    assert re.search(r"Modify\s*\|\s*token\s*\|.*\|\s*True\s*\|\s*length\s*\|\s*Always", out)
    assert re.search(r"Remove\s*\|\s*legacy", out) and re.search(r"Add\s*\|\s*modern", out)
    assert "not-for-your-eyes" not in out
    heat = heat_client(kiln_server.endpoint("demo"))
    assert {r.resource_name for r in heat.resources.list("shop")} == {"token", "login", "modern"}
    heat.stacks.delete("shop")


def test_the_nested_cli_example(kiln_server: KilnProcess, tmp_path: Path) -> None:
    done = _run(_block("sh", "Nested stacks with the kiln CLI"), kiln_server, tmp_path)
    out = done.stdout
    assert "not-for-your-eyes" not in out and "still-secret" not in out
    assert re.search(r"Modify\s*\|\s*web\s*\|.*\|\s*length\s*\|.*\|\s*8\s*\|\s*16\s*\|", out)
    assert re.search(r"\|\s*\|\s{3}stack store-web-\S+\s*\|\s*change set longer-keys-web\s*\|", out)
    assert re.search(r"Modify\s*\|\s{3}session_key\s*\|.*\|\s*True\s*\|\s*length\s*\|\s*Always\s*"
                     r"\|\s*8\s*\|\s*16", out), out
    assert re.search(r"Modify\s*\|\s{3}login\s*\|.*\|\s*value\s*\|.*\|\s*\*{6}\s*\|\s*\*{6}", out)
    assert re.search(r"Modify\s*\|\s*web\s*\|.*\|\s*password\s*\|.*\|\s*\*{6}\s*\|\s*\*{6}", out)
    assert "UPDATE_COMPLETE" in out
    heat = heat_client(kiln_server.endpoint("demo"))
    (web,) = heat.resources.list("store")
    key = heat.resources.get(web.physical_resource_id, "session_key")
    assert len(key.attributes["value"]) == 16  # the root ran the nested stack's change
    # what the paragraph after the block says: JSON, the list, the id under the root
    env = {**clean_env(), "OS_ENDPOINT": kiln_server.endpoint("demo"), "NO_COLOR": "1"}

    def kiln(*args: str) -> str:
        return subprocess.run([*kiln_command(), "stack", *args], env=env, capture_output=True,
                              text=True, timeout=120, check=True).stdout

    record = json.loads(kiln("changeset", "show", "store", "longer-keys", "-f", "json"))
    (change,) = record["changes"]
    nested = change["nested_change_set"]
    assert nested["name"] == "longer-keys-web"
    listed = json.loads(kiln("changeset", "list", "store", "-f", "json"))
    assert [(c["name"], c["include_nested_stacks"]) for c in listed] == [("longer-keys", True)]
    alone = json.loads(kiln("changeset", "show", "store", nested["id"], "-f", "json"))
    assert alone["root_change_set"]["name"] == "longer-keys"
    for verb in ("execute", "delete"):
        refused = subprocess.run([*kiln_command(), "stack", "changeset", verb, "store",
                                  nested["id"]], env=env, capture_output=True, text=True,
                                 timeout=120, check=False)
        assert refused.returncode == 1 and "nested change set" in refused.stderr, refused.stderr
    heat.stacks.delete("store")


def test_the_boto3_example(kiln_server: KilnProcess, capsys: pytest.CaptureFixture[str]) -> None:
    _run_python(_block("python", "With boto3"), kiln_server)
    assert capsys.readouterr().out.strip() == "Modify Token True length 8 -> 16"
    heat_client(kiln_server.endpoint("demo")).stacks.delete("shop-cfn")


def test_the_import_and_nested_example(
    kiln_server: KilnProcess, capsys: pytest.CaptureFixture[str]
) -> None:
    _run_python(_block("python", "Importing existing objects"), kiln_server)
    assert capsys.readouterr().out.strip().splitlines() == [
        "Import obj-1234",
        "Modify Inner ['length']",
    ]
    heat = heat_client(kiln_server.endpoint("demo"))
    (old,) = heat.resources.list("legacy")
    assert old.physical_resource_id == "obj-1234"
    (kid,) = heat.resources.list("family")
    inner = heat.resources.get(kid.physical_resource_id, "Inner")
    assert len(inner.attributes["value"]) == 12  # replaced by the root's execution
    heat.stacks.delete("legacy")
    heat.stacks.delete("family")


def _run_python(snippet: str, kiln_server: KilnProcess) -> None:
    """A page's python block, with keys from the command its comment names."""
    (command,) = re.findall(r"# keys from: (kiln ec2-credentials create [^\n]*)", snippet)
    made = subprocess.run(
        [*kiln_command(), *command.split()[1:], "--config-file", str(kiln_server.config_file)],
        capture_output=True,
        text=True,
        env=clean_env(),
        timeout=60,
        check=True,
    )
    keys = json.loads(made.stdout)
    code = (
        snippet.replace("http://127.0.0.1:8000/v1/", kiln_server.cfn_url)
        .replace('"ACCESS"', repr(keys["access"]))
        .replace('"SECRET"', repr(keys["secret"]))
    )
    assert code != snippet
    exec(compile(code, "changesets.md", "exec"), {})  # the page's own lines


def test_the_history_example(kiln_server: KilnProcess, tmp_path: Path) -> None:
    script = _block("sh", "A stack's history")
    done = _run(script, kiln_server, tmp_path)
    assert "+    replicas: '3'" in done.stdout, done.stdout
    assert done.stdout.rstrip().splitlines()[-3:] == ["1 CREATE", "2 UPDATE", "3 UPDATE"]
    heat = heat_client(kiln_server.endpoint("demo"))
    assert heat.stacks.get("garden").parameters["replicas"] == "1"
    heat.stacks.delete("garden")


def test_the_import_example(kiln_server: KilnProcess, tmp_path: Path) -> None:
    script = _block("sh", "Importing on the native API and with the kiln CLI")
    out = _run(script, kiln_server, tmp_path).stdout
    # what the page says: one change, an Import of old; then the object's id
    assert re.search(r"Import\s*\|\s*old", out)
    assert not re.search(r"(Add|Modify|Remove)\s*\|", out)
    assert out.rstrip().splitlines()[-1] == "obj-1234"
    heat = heat_client(kiln_server.endpoint("demo"))
    assert {r.resource_name for r in heat.resources.list("depot")} == {"keep", "old"}
    heat.stacks.delete("depot")
