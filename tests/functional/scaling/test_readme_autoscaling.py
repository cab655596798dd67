"""The autoscaling example (docs/autoscaling.md), run as written (ports aside, and a
watcher round of half a second instead of ten) against a real ``kiln serve`` with the real
``openstack`` CLI, ``kiln ec2-credentials`` and boto3."""

from __future__ import annotations

import json
import re
import shlex
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support import docs
from tests.support.clients import OpenStackCLI, heat_client
from tests.support.server import KilnProcess, kiln_command, start_kiln

pytestmark = pytest.mark.slow
SECTION = docs.page("autoscaling.md")


@pytest.fixture(scope="module")
def kiln(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KilnProcess]:
    proc = start_kiln(tmp_path_factory.mktemp("kiln"),
                      options={"kiln_alarms": {"evaluation_interval": 0.5}})
    yield proc
    assert proc.stop() == 0, proc.logs()


def blocks(kind: str) -> list[str]:
    return re.findall(rf"```{kind}\n(.*?)```", SECTION, re.S)


@pytest.mark.timeout(600)  # three waits on a 10-second alarm window, on a loaded machine
def test_readme_autoscaling_example(kiln: KilnProcess, tmp_path: Path) -> None:
    (shell,) = blocks("sh")
    (python,) = blocks("python")
    heredoc = re.search(r"cat > (\S+) <<'YAML'\n(.*?)\nYAML\n", shell, re.S)
    assert heredoc is not None
    (tmp_path / heredoc.group(1)).write_text(heredoc.group(2) + "\n")
    cli = OpenStackCLI(kiln.endpoint("demo"), cwd=tmp_path)
    for line in shell.splitlines():
        words = shlex.split(line) if line and not line.startswith(("cat", " ")) else []
        if words[:1] == ["openstack"]:
            assert words[1:5] == ["--os-auth-type", "none", "--os-endpoint",
                                  "http://127.0.0.1:8004/v1/demo"]
            assert "CREATE_COMPLETE" in cli.run(*words[5:]).stdout
        elif words[:1] == ["kiln"]:
            made = subprocess.run([*kiln_command(), *words[1:], "--config-file",
                                   str(kiln.config_file)], capture_output=True, text=True,
                                  check=True, timeout=60)
            keys = json.loads(made.stdout)
    code = (python.replace("http://127.0.0.1:8003", kiln.cloudwatch_url)
            .replace('"ACCESS"', repr(keys["access"])).replace('"SECRET"', repr(keys["secret"])))

    heat = heat_client(kiln.endpoint("demo"))

    def size() -> Any:   # what `openstack stack output show web size` prints, read faster
        return heat.stacks.output_show("web", "size")["output"]["output_value"]

    def run_until(snippet: str, wanted: int) -> None:
        deadline = time.monotonic() + 150
        while size() != wanted:
            assert time.monotonic() < deadline, f"size never became {wanted}"
            exec(compile(snippet, "autoscaling.md", "exec"), {})   # the page's own lines
            time.sleep(1.0)  # one sample a second, bounded by the deadline

    assert cli.json("stack", "output", "show", "web", "size")["output_value"] == 1
    run_until(code, 2)
    low = code.replace('"Value": 95', '"Value": 20')
    assert low != code
    run_until(low, 1)
    found = re.search(r"`(openstack stack resource signal web scale_up)`", SECTION)
    assert found is not None
    signal = shlex.split(found.group(1))[1:]
    deadline = time.monotonic() + 60
    while size() != 2:   # a signal within the 5 s cooldown is refused; the next one not
        assert time.monotonic() < deadline, "signal never scaled"
        assert cli.run(*signal).returncode == 0
        time.sleep(1.0)  # one signal a second, bounded by the deadline
