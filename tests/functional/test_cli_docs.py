"""docs/cli-reference.md run as its reader would: every ``sh`` block, in order, against a real
`kiln serve` with the real `kiln` command. Files are written from the heredocs, each
`kiln stack` line is run (a line ending in ``&`` in the background, collected by the
next ``wait``), and every one must exit 0. Then what the page promises is checked on
what was printed, and every `kiln stack` command is shown to appear on the page."""

from __future__ import annotations

import json
import re
import shlex
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

import click
import pytest

from tests.functional.api.heat_target import wait_for
from tests.functional.test_cli_stack import (
    TIMEOUT,
    api_get,
    env_for,
    field_table,
    kiln_stack,
    ok,
)
from tests.support.server import KilnProcess, kiln_command

DOC = Path(__file__).resolve().parents[2] / "docs" / "cli-reference.md"
DOC_ENDPOINT = "http://127.0.0.1:8004/v1/demo"


def blocks(text: str) -> list[str]:
    return re.findall(r"```sh\n(.*?)```", text, re.S)


@dataclass
class Tour:
    """The page's commands as run: each line's result, by its text."""

    endpoint: str
    cwd: Path
    results: dict[str, subprocess.CompletedProcess[str]] = field(default_factory=dict)
    running: list[tuple[str, subprocess.Popen[str]]] = field(default_factory=list)

    def before(self, words: list[str]) -> None:
        """What the page tells its reader to look for before a step, waited for."""
        if words[2:4] == ["hook", "clear"]:
            stack = words[4] if not words[4].startswith("-") else words[5]
            wait_for(lambda: api_get(self.endpoint, f"/stacks/{stack}/events")["events"],
                     lambda events: any("paused until Hook" in (
                         e.get("resource_status_reason") or "") for e in events),
                     f"{stack} to reach its hook")
        if words[2:4] == ["resource", "signal"]:
            stack, resource = words[4], words[5]
            wait_for(lambda: api_get(self.endpoint, f"/stacks/{stack}/resources")[
                "resources"], lambda rs: any(
                    r["resource_name"] == resource and r["resource_status"].endswith(
                        "_COMPLETE") for r in rs), f"{stack}'s {resource}")

    def run(self, line: str) -> None:
        if line == "wait":
            for text, proc in self.running:
                out, err = proc.communicate(timeout=TIMEOUT)
                self.results[text] = ok(subprocess.CompletedProcess(
                    proc.args, proc.returncode, out, err))
            self.running.clear()
            return
        if line.startswith("export OS_ENDPOINT="):
            assert line == f"export OS_ENDPOINT={DOC_ENDPOINT}"
            return
        words = shlex.split(line)
        assert words[:2] == ["kiln", "stack"], line
        self.before(words)
        if words[-1] == "&":
            proc = subprocess.Popen([*kiln_command(), *words[1:-1]], stdout=subprocess.PIPE,
                                    stderr=subprocess.PIPE, text=True, cwd=self.cwd,
                                    env=env_for(self.endpoint))
            self.running.append((line, proc))
            return
        key = line if line not in self.results else f"{line} (again)"
        self.results[key] = ok(kiln_stack(self.endpoint, self.cwd, *words[2:]))


def run_page(endpoint: str, cwd: Path) -> Tour:
    tour = Tour(endpoint, cwd)
    for block in blocks(DOC.read_text()):
        lines = iter(block.splitlines())
        for line in lines:
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            heredoc = re.fullmatch(r"cat > (\S+) <<'YAML'", line)
            if heredoc:
                body = []
                for text in lines:
                    if text == "YAML":
                        break
                    body.append(text)
                (cwd / heredoc[1]).write_text("\n".join(body) + "\n")
                continue
            tour.run(line)
    assert not tour.running, "a background command the page never waits for"
    return tour


def test_every_command_of_docs_cli(kiln_server: KilnProcess, tmp_path: Path) -> None:
    tour = run_page(kiln_server.endpoint("demo"), tmp_path)
    out = {line: result.stdout for line, result in tour.results.items()}
    err = {line: result.stderr for line, result in tour.results.items()}

    assert field_table(out["kiln stack create -t app.yaml --wait app"])[
        "stack_status"] == "CREATE_COMPLETE"
    assert list(field_table(out["kiln stack show app -c stack_status -c outputs"])) == [
        "Field", "stack_status", "outputs"]
    assert "UPDATE_COMPLETE" in out[
        "kiln stack update app -t app.yaml --parameter length=20 --yes --wait"]
    header = out["kiln stack resource list app"].splitlines()[1]
    assert "resource_name" in header and "resource_status" in header
    assert list(field_table(out[
        "kiln stack resource show app secret -c resource_status -c physical_resource_id"
    ])) == ["Field", "resource_status", "physical_resource_id"]
    assert "RandomString" in out["kiln stack template show app"]
    for action, status in (("suspend", "SUSPEND_COMPLETE"), ("resume", "RESUME_COMPLETE"),
                           ("check", "CHECK_COMPLETE")):
        assert status in out[f"kiln stack {action} --wait app"]
    assert "Stack app: IN_SYNC (0 resource(s) drifted)" in out["kiln stack drift app"]
    drift = json.loads(out["kiln stack drift app --no-detect --all -f json"])
    assert drift["stack_drift_status"] == "IN_SYNC"
    assert {r["status"] for r in drift["resources"]} == {"NOT_CHECKED"}
    assert "COMPLETE" in out[
        "kiln stack snapshot create app --name before-upgrade --wait"]
    assert "before-upgrade" in out["kiln stack snapshot list app"]
    assert "RESTORE_COMPLETE" in out[
        "kiln stack snapshot restore app before-upgrade --wait"]
    assert "AVAILABLE" in out["kiln stack changeset show app longer"]
    assert "UPDATE_COMPLETE" in out["kiln stack changeset execute app longer --wait"]
    assert "longest" in out["kiln stack changeset list app"]
    assert "+    length: '20'" in out["kiln stack history diff app 1 2"]
    # the watch saw the signalled create end
    watched = "kiln stack watch gated &"
    assert field_table(out[watched])["stack_status"] == "CREATE_COMPLETE"
    assert "ROLLBACK_COMPLETE" in out["kiln stack cancel --wait gated"]
    assert "UPDATE_FAILED" in out["kiln stack cancel --no-rollback --wait gated"]
    assert "paused until Hook pre-create is cleared" in out["kiln stack event list hooked"]
    assert field_table(out["kiln stack watch hooked"])["stack_status"] == "CREATE_COMPLETE"
    followed = out["kiln stack event list --follow gated &"]
    assert re.search(r"\[gated\]: CREATE_COMPLETE", followed)
    assert re.search(r"\[gated\]: DELETE_COMPLETE", followed)
    adopted = field_table(out["kiln stack adopt app --adopt-file app.json --wait"])
    assert adopted["stack_status"] == "ADOPT_COMPLETE"
    assert json.loads((tmp_path / "app.json").read_text())["name"] == "app"
    assert "Stack app DELETE_COMPLETE" in err[
        "kiln stack delete --yes --wait app gated hooked"]


def _commands(group: click.Group, prefix: str) -> list[str]:
    names = []
    ctx = click.Context(group)
    for name in group.list_commands(ctx):
        command = group.get_command(ctx, name)
        if isinstance(command, click.Group):
            names += _commands(command, f"{prefix} {name}")
        else:
            names.append(f"{prefix} {name}")
    return names


@pytest.mark.parametrize("command", _commands(
    __import__("kiln.client.commands", fromlist=["stack"]).stack, "kiln stack"))
def test_docs_cli_runs_every_command(command: str) -> None:
    """Each `kiln stack` command is run by the page (so by the test above)."""
    lines = [line.strip() for block in blocks(DOC.read_text())
             for line in block.splitlines()]
    words = command.split()
    assert any(shlex.split(line)[:len(words)] == words for line in lines
               if line.startswith("kiln stack")), f"docs/cli-reference.md never runs {command}"
