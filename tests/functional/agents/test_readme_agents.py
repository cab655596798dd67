"""The software-deployment example (docs/agents.md), run as written with bash (endpoint
port, the instance directory and the tests' interpreter aside): the template, the
`openstack` commands, the wait for the metadata URL, and the agent chain run locally with
the same arguments as the server's command line."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

from tests.support import docs
from tests.support.agents import CHAIN_TIMEOUT, agents_or_skip
from tests.support.server import KilnProcess, clean_env

ROOT = Path(__file__).resolve().parents[3]
ENDPOINT = "http://127.0.0.1:8004/v1/demo"
LOCAL = ".venv-test/bin/python -m tests.support.agents /tmp/instance "


def _blocks() -> list[str]:
    return re.findall(r"```sh\n(.*?)```", docs.page("agents.md"), re.S)


def test_readme_software_deployment(kiln: KilnProcess, tmp_path: Path) -> None:
    agents_or_skip()
    first, on_server, locally = _blocks()
    assert f'OS="openstack --os-auth-type none --os-endpoint {ENDPOINT}"' in first

    # the server's command line and the local one give the collector the same arguments
    server_words = shlex.split(on_server.strip())
    assert server_words[:5] == ["os-collect-config", "--one-time", "--command",
                                "os-refresh-config", "--request-metadata-url"]
    [run_line] = [line for line in locally.splitlines() if "tests.support.agents" in line]
    assert run_line.startswith(LOCAL)
    assert shlex.split(run_line)[4:] == server_words[4:]

    script = (first + locally).replace(f"{ENDPOINT.rsplit('/v1', 1)[0]}/", f"{kiln.url}/")
    script = script.replace(LOCAL, f"{shlex.quote(sys.executable)} -m tests.support.agents "
                                   f"{shlex.quote(str(tmp_path / 'instance'))} ")
    env = clean_env()
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")])
    done = subprocess.run(["bash", "-euo", "pipefail", "-c", script], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=CHAIN_TIMEOUT + 120,
                          check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    # the last command prints the deployment's output
    assert done.stdout.rstrip().splitlines()[-1] == "Hello, world", done.stdout
