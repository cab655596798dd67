"""The worked example of signals (docs/signals.md), run verbatim with bash (ports aside)
against a real ``kiln serve``: the real ``openstack`` CLI, heat-cfntools' cfn-signal and curl."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support import cfntools, docs
from tests.support.clients import heat_client, wait_for_stack_status
from tests.support.server import KilnProcess, clean_env, kiln_command


def worked_example() -> str:
    section = docs.page("signals.md")
    blocks = re.findall(r"```sh\n(.*?)```", section, re.S)
    assert len(blocks) == 1, "the page has one sh block: the worked example"
    return blocks[0]


def test_readme_worked_example(kiln_server: KilnProcess, tmp_path: Path) -> None:
    script = worked_example()
    assert "http://127.0.0.1:8004/v1/demo" in script
    script = script.replace("http://127.0.0.1:8004/", f"{kiln_server.url}/")
    env = clean_env()
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent),
                                   str(cfntools.venv() / "bin"), env.get("PATH", "")])
    with cfntools.system_paths():
        done = subprocess.run(["bash", "-euo", "pipefail", "-c", script], cwd=tmp_path,
                              env=env, capture_output=True, text=True, timeout=600,
                              check=False)
    assert done.returncode == 0, f"{done.stdout}\n{done.stderr}"
    # the last command prints the wait condition's data (curl's answer to the signal,
    # a bare JSON null without a newline, precedes it on the line)
    assert done.stdout.rstrip().splitlines()[-1].endswith('{"web1": "10.0.0.5"}')
    heat = heat_client(kiln_server.endpoint("demo"))
    stack = wait_for_stack_status(heat, "booting")
    assert stack.stack_status == "CREATE_COMPLETE"
    heat.stacks.delete(stack.id)


def test_the_boto3_example(kiln_server: KilnProcess, capsys: pytest.CaptureFixture[str]) -> None:
    """The page's boto3 snippet, run as written (the endpoint's port aside) with a keypair
    from the command its comment names."""
    (snippet,) = re.findall(r"```python\n(.*?)```", docs.page("signals.md"), re.S)
    (command,) = re.findall(r"# keys from: (kiln ec2-credentials create [^\n]*)", snippet)
    made = subprocess.run([*kiln_command(), *command.split()[1:], "--config-file",
                           str(kiln_server.config_file)], capture_output=True, text=True,
                          env=clean_env(), timeout=60, check=True)
    keys = json.loads(made.stdout)
    heat = heat_client(kiln_server.endpoint("demo"))
    heat.stacks.create(stack_name="boto3doc", template={
        "heat_template_version": "2018-08-31",
        "resources": {"v": {"type": "OS::Heat::Value", "properties": {"value": 1}}}})
    assert wait_for_stack_status(heat, "boto3doc").stack_status == "CREATE_COMPLETE"
    code = (snippet.replace("http://127.0.0.1:8000/v1/", kiln_server.cfn_url)
            .replace('"ACCESS"', repr(keys["access"]))
            .replace('"SECRET"', repr(keys["secret"])))
    assert code != snippet
    exec(compile(code, "signals.md", "exec"), {})   # the page's own lines
    printed = capsys.readouterr().out
    assert "'StackName': 'boto3doc'" in printed and "CREATE_COMPLETE" in printed
    heat.stacks.delete("boto3doc")
