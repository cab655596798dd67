"""docs/drift.md's worked example, run as written on the test cloud: its `kiln stack`
lines with the kiln CLI, `openstack stack` with the openstack CLI on Kiln, the other
`openstack` lines with the openstack CLI on the cloud (behind Kiln's back), and its
boto3 block once the stack has drifted. Names get a unique suffix (the cloud is shared)."""

from __future__ import annotations

import contextlib
import io
import re
import shlex
import subprocess
import uuid
from pathlib import Path
from typing import Any

from tests.cloud.helpers import delete_and_wait
from tests.support import docs
from tests.support.aws import issue_keypair
from tests.support.clients import OpenStackCLI
from tests.support.cloud import Cloud
from tests.support.server import KilnProcess, clean_env, kiln_command

PAGE = "drift.md"


def _block(title: str, lang: str) -> str:
    (found,) = re.findall(rf"```{lang}\n(.*?)```", docs.section(docs.page(PAGE), title),
                          re.S)
    return str(found)


def test_the_worked_example_runs_as_written(cloud: Cloud, cloud_kiln: KilnProcess,
                                            cloud_heat: Any, tmp_path: Path) -> None:
    unique = f"shop{uuid.uuid4().hex[:6]}"
    lines = iter(_block("A worked example", "sh").replace("shop", unique).splitlines())
    # not in the working directory, where the CLI would read it for Kiln's calls too
    (tmp_path / "cloud").mkdir()
    clouds = cloud.clouds_yaml(tmp_path / "cloud" / "clouds.yaml")
    behind = {**clean_env(), "OS_CLIENT_CONFIG_FILE": str(clouds), "OS_CLOUD": "kiln-test"}
    kiln_env = {**clean_env(), "OS_ENDPOINT": cloud_kiln.endpoint("demo"), "NO_COLOR": "1"}
    on_kiln = OpenStackCLI(cloud_kiln.endpoint("demo"), cwd=tmp_path)
    drifts: list[subprocess.CompletedProcess[str]] = []
    printed = ""
    try:
        for line in lines:
            heredoc = re.fullmatch(r"cat > (\S+) <<'YAML'", line.strip())
            if heredoc:
                body = []
                for text in lines:
                    if text == "YAML":
                        break
                    body.append(text)
                (tmp_path / heredoc[1]).write_text("\n".join(body) + "\n")
                continue
            words = shlex.split(line)
            if words[:2] == ["kiln", "stack"]:
                done = subprocess.run([*kiln_command(), *words[1:]], capture_output=True,
                                      text=True, env=kiln_env, cwd=tmp_path, timeout=300,
                                      check=False)
                if words[2] == "drift":
                    drifts.append(done)
                    if len(drifts) == 1:
                        printed = _boto3_block(cloud_kiln, unique)
                    continue
            elif words[:2] == ["openstack", "stack"]:
                done = on_kiln.run(*words[1:], timeout=300)
            else:
                assert words[0] == "openstack", line
                done = subprocess.run(["/work/venv/bin/openstack", *words[1:]],
                                      capture_output=True, text=True, env=behind,
                                      cwd=tmp_path, timeout=120, check=False)
            assert done.returncode == 0, (line, done.stdout, done.stderr)
    finally:
        stacks = [s for s in cloud_heat.stacks.list() if s.stack_name == unique]
        for stack in stacks:
            assert delete_and_wait(cloud_heat, stack.id) == "DELETE_COMPLETE"

    first, second = drifts
    assert first.returncode == 2, first.stderr
    assert f"Stack {unique}: DRIFTED (2 resource(s) drifted)" in first.stdout
    assert f"{unique}-renamed" in first.stdout and "ADD" in first.stdout
    assert second.returncode == 0, second.stdout + second.stderr
    assert f"Stack {unique}: IN_SYNC" in second.stdout
    assert "DRIFTED 2" in printed
    assert f"net /name NOT_EQUAL {unique}-net -> {unique}-renamed" in printed


def _boto3_block(kiln: KilnProcess, name: str) -> str:
    """The page's boto3 block, run alone as pasted (its endpoint and keys this server's);
    what it printed."""
    keys = issue_keypair(kiln, "demo")
    snippet = _block("From boto3", "python")
    code = (snippet.replace('"shop"', repr(name))
            .replace("http://127.0.0.1:8000/v1/", kiln.cfn_url)
            .replace('"ACCESS"', repr(keys.access)).replace('"SECRET"', repr(keys.secret)))
    assert code.count(kiln.cfn_url) == 1 and repr(keys.secret) in code
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, PAGE, "exec"), {})  # the page's own lines
    return out.getvalue()
