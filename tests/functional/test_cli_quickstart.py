"""The quick start (docs/getting-started.md), run verbatim (endpoint port aside) against a
real `kiln serve` with the real `openstack` CLI, checking what the user sees at each step."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

from tests.support import docs
from tests.support.clients import OpenStackCLI
from tests.support.server import KilnProcess

README_ENDPOINT = "http://127.0.0.1:8004/v1/demo"


def quick_start_block() -> str:
    section = docs.section(docs.page("getting-started.md"), "Quick start")
    match = re.search(r"```sh\n(.*?)```", section, re.S)
    assert match, "the quick start has a sh code block"
    return match.group(1)


def template_from_heredoc(block: str) -> tuple[str, str]:
    match = re.search(r"cat > (\S+) <<'YAML'\n(.*?)\nYAML\n", block, re.S)
    assert match, "the quick start writes its template with a heredoc"
    return match.group(1), match.group(2) + "\n"


def openstack_commands(block: str) -> list[list[str]]:
    """Each `openstack` line, minus the auth/endpoint options the CLI fixture adds."""
    commands = []
    for line in block.splitlines():
        if not line.startswith("openstack "):
            continue
        words = shlex.split(line)
        assert words[1:5] == ["--os-auth-type", "none", "--os-endpoint", README_ENDPOINT]
        commands.append(words[5:])
    return commands


def table(output: str) -> dict[str, str]:
    """The Field/Value table the CLI prints, first line of each value."""
    rows: dict[str, str] = {}
    for line in output.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 2 and cells[0] and not line.startswith("+"):
            rows.setdefault(cells[0], cells[1])
    return rows


def test_readme_quick_start(kiln_server: KilnProcess, tmp_path: Path) -> None:
    block = quick_start_block()
    name, body = template_from_heredoc(block)
    (tmp_path / name).write_text(body)
    cli = OpenStackCLI(kiln_server.endpoint("demo"), cwd=tmp_path)
    create, listing, show, output, delete = openstack_commands(block)

    assert create[:2] == ["stack", "create"]
    created = cli.run(*create)
    assert re.search(r"\[s1\]: CREATE_COMPLETE", created.stdout)
    assert table(created.stdout)["stack_status"] == "CREATE_COMPLETE"

    listed = cli.run(*listing).stdout
    row = next(line for line in listed.splitlines() if "| s1 " in line)
    assert "CREATE_COMPLETE" in row
    assert "| demo " in row

    shown = table(cli.run(*show).stdout)
    assert shown["stack_name"] == "s1"
    assert shown["stack_status"] == "CREATE_COMPLETE"

    value = table(cli.run(*output).stdout)["output_value"]
    assert len(value) == 12  # the template's default length
    assert value.isalnum()

    deleted = cli.run(*delete)
    assert deleted.returncode == 0
    gone = cli.run("stack", "show", "s1", check=False)
    assert gone.returncode == 1
    assert gone.stderr == "Stack not found: s1\n"  # what the same CLI prints against Heat
