"""The software-deployment example (docs/agents.md), run as written (endpoint port and paths
aside): the template, the `openstack` commands, and the agent chain's command line."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from pathlib import Path

from tests.functional.agents.deploying import wait_for
from tests.support import docs
from tests.support.agents import CHAIN_TIMEOUT, agents_or_skip
from tests.support.clients import OpenStackCLI
from tests.support.server import KilnProcess, clean_env

ENDPOINT = "http://127.0.0.1:8004/v1/demo"


def _blocks() -> list[str]:
    return re.findall(r"```sh\n(.*?)```", docs.page("agents.md"), re.S)


def _openstack(line: str) -> list[str]:
    words = shlex.split(line)
    assert words[:5] == ["openstack", "--os-auth-type", "none", "--os-endpoint", ENDPOINT]
    return words[5:]


def test_readme_software_deployment(kiln: KilnProcess, tmp_path: Path) -> None:
    agents_or_skip()
    first, on_server, locally = _blocks()
    match = re.search(r"cat > (\S+) <<'YAML'\n(.*?)\nYAML\n", first, re.S)
    assert match
    (tmp_path / match.group(1)).write_text(match.group(2) + "\n")
    cli = OpenStackCLI(kiln.endpoint("demo"), cwd=tmp_path)
    create, show_url = [_openstack(x) for x in first.splitlines() if x.startswith("openstack")]
    cli.run(*create)

    def printed_url() -> str:
        return cli.run(*show_url).stdout.strip()

    url = wait_for(printed_url, lambda u: u.startswith("http"), "the metadata URL")

    # the server's command line and the local one give the collector the same arguments
    server_words = shlex.split(on_server.strip())
    assert server_words[:5] == ["os-collect-config", "--one-time", "--command",
                                "os-refresh-config", "--request-metadata-url"]
    run_line, show_greeting = [x for x in locally.splitlines() if x.strip()]
    local_words = shlex.split(run_line)
    assert local_words[:3] == [".venv-test/bin/python", "-m", "tests.support.agents"]
    assert local_words[4:] == server_words[4:]
    args = [url if w == "$URL" else w for w in local_words[4:]]
    done = subprocess.run([sys.executable, "-m", "tests.support.agents",
                           str(tmp_path / "instance"), *args],
                          capture_output=True, text=True, timeout=CHAIN_TIMEOUT,
                          env=clean_env(), cwd=Path(__file__).resolve().parents[3],
                          check=False)
    assert done.returncode == 0, done.stdout + done.stderr

    def greeting() -> str:
        return cli.run(*_openstack(show_greeting), "-f", "value",
                       "-c", "output_value").stdout.strip()

    assert wait_for(greeting, lambda g: g != "None", "the greeting") == "Hello, world"
