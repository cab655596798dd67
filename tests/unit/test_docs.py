"""The documentation site (mkdocs.yml, docs/) stays whole: every page in the nav and every
nav entry a page, the generated API reference current, and every command block of the
README and the pages run (or, where it cannot be, checked) by a named test."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml

from kiln.conf import CONF
from tests.support import docs

ROOT = docs.ROOT
FENCE = re.compile(r"^\s*```(\S*)[^\n]*$")
HEADING = re.compile(r"^(#{1,6}) (.*)$")
#: block languages that are things to run or load (an unlabelled block is output)
COMMANDS = ("sh", "python", "ini")

#: (page, heading the block is under, how the block starts) -> the test that runs it as
#: written (or loads it: a configuration example)
RUN_BY = {
    ("README.md", "Kiln", ""): "tests/unit/server/test_readme.py",
    ("README.md", "A one-minute tour", ""): "tests/functional/test_cli_stack_more.py",
    ("README.md", "What the test command costs", ""): "tests/unit/test_docs.py",
    ("contributing.md", "What the test command costs", ""): "tests/unit/test_docs.py",
    ("getting-started.md", "Getting started", ""): "tests/unit/test_docs.py",
    ("getting-started.md", "Quick start", ""): "tests/functional/test_cli_quickstart.py",
    ("agents.md", "Software deployments", ""): "tests/functional/agents/test_readme_agents.py",
    ("autoscaling.md", "Autoscaling and alarms", ""):
        "tests/functional/scaling/test_readme_autoscaling.py",
    ("cli.md", "The `kiln stack` command", ""): "tests/functional/test_cli_stack_more.py",
    ("cli-reference.md", "Connecting", ""): "tests/functional/test_cli_docs.py",
    ("cli-reference.md", "Create, inspect, update", ""): "tests/functional/test_cli_docs.py",
    ("cli-reference.md", "Resources and the template", ""): "tests/functional/test_cli_docs.py",
    ("cli-reference.md", "Suspend, resume, check", ""): "tests/functional/test_cli_docs.py",
    ("cli-reference.md", "Drift", ""): "tests/functional/test_cli_docs.py",
    ("cli-reference.md", "Snapshots", ""): "tests/functional/test_cli_docs.py",
    ("cli-reference.md", "Change sets and history", ""): "tests/functional/test_cli_docs.py",
    ("cli-reference.md", "Signals, watching, cancelling an update", ""):
        "tests/functional/test_cli_docs.py",
    ("cli-reference.md", "Events", ""): "tests/functional/test_cli_docs.py",
    ("cli-reference.md", "Lifecycle hooks", ""): "tests/functional/test_cli_docs.py",
    ("cli-reference.md", "Abandon and adopt", ""): "tests/functional/test_cli_docs.py",
    ("cli-reference.md", "Cleaning up", ""): "tests/functional/test_cli_docs.py",
    ("keystone.md", "Behind Keystone", "[paste_deploy]"): "tests/unit/server/test_readme.py",
    ("keystone.md", "Servers' credentials", "[DEFAULT]"): "tests/unit/server/test_readme.py",
    ("notifications.md", "Notifications", ""): "tests/unit/test_docs.py",
    ("events.md", "Live events", ""): "tests/functional/api/test_event_stream.py",
    ("changesets.md", "With the kiln CLI", ""):
        "tests/functional/changesets/test_changesets_docs.py",
    ("changesets.md", "Nested stacks with the kiln CLI", ""):
        "tests/functional/changesets/test_changesets_docs.py",
    ("changesets.md", "With boto3", ""): "tests/functional/changesets/test_changesets_docs.py",
    ("changesets.md", "Importing existing objects", ""):
        "tests/functional/changesets/test_changesets_docs.py",
    ("changesets.md", "Importing on the native API", ""):
        "tests/functional/changesets/test_changesets_docs.py",
    ("changesets.md", "A stack's history", ""):
        "tests/functional/changesets/test_changesets_docs.py",
    ("drift.md", "A worked example", ""): "tests/cloud/test_drift_docs.py",
    ("drift.md", "From boto3", ""): "tests/cloud/test_drift_docs.py",
    ("plugins.md", "Writing a resource plugin", ""):
        "tests/unit/resources/test_plugin_guide.py",
    ("resources.md", "OpenStack resources", "[kiln_clients]"):
        "tests/unit/clients/test_clients.py",
    ("resources.md", "Worked example: the mission template", "openstack keypair create"):
        "tests/cloud/test_mission_template.py",
    ("running.md", "Running Kiln", ".venv/bin/kiln serve"):
        "tests/functional/test_server_listeners.py",
    ("running.md", "Running Kiln", "[DEFAULT]"): "tests/unit/server/test_readme.py",
    ("running.md", "Databases", ""): "tests/integration/test_db_upgrade_servers.py",
    ("signals.md", "Servers talk back", ""): "tests/functional/cfn/test_readme_signals.py",
    ("deployment-workers.md", "Worker processes", "[DEFAULT]"):
        "tests/unit/server/test_workers_options.py",
    ("deployment.md", "Topology: three controllers", "[DEFAULT]"):
        "tests/unit/server/test_workers_options.py",
    ("deployment.md", "Quorum queues and TLS", "[DEFAULT]"):
        "tests/integration/scaleout/test_rabbit_options.py",
}
#: blocks no test runs as written, and why (what is tested instead)
NOT_RUN = {
    ("heat-compatibility.md", "bash scripts/test.sh tests/functional/test_corpus.py"):
        "the corpus commands: CI runs the comparison; re-recording needs a live Heat 27",
    ("keystone.md", "openstack user create"): "registering Kiln needs an admin login to a "
        "cloud's Keystone; the identity tests register their Kiln's service and endpoints "
        "through Keystone's API (tests/support/keystone.py)",
    ("keystone.md", "# with an admin openrc"): "tests/functional/identity/test_stack_users.py "
        "runs kiln keystone-setup with these options (its own names)",
    ("contributing.md", "python -m tests.support.cloud start"): "the update comparison "
        "needs a live Heat 27 beside the test cloud; its findings are cloud tests "
        "(tests/cloud/test_update_parity.py)",
    ("resources.md", "cd tests/cloud/templates"): "tests/cloud/test_seed_template.py runs "
        "this life cycle with heatclient against the test cloud",
}
#: interface sketches, not commands
SKETCHES = {"contracts.md"}


def _nav_pages(nav: Any) -> list[str]:
    if isinstance(nav, str):
        return [nav]
    if isinstance(nav, list):
        return [p for item in nav for p in _nav_pages(item)]
    if isinstance(nav, dict):
        return [p for value in nav.values() for p in _nav_pages(value)]
    return []


def _config() -> Any:
    # mkdocs.yml has no custom tags: plain YAML
    return yaml.safe_load((ROOT / "mkdocs.yml").read_text())


def test_every_page_is_in_the_nav_and_every_entry_is_a_page() -> None:
    nav = _nav_pages(_config()["nav"])
    pages = sorted(str(p.relative_to(docs.DOCS)) for p in docs.DOCS.rglob("*.md"))
    assert sorted(nav) == pages
    assert len(set(nav)) == len(nav)


def test_the_api_reference_is_generated_from_the_openapi_description() -> None:
    done = subprocess.run([sys.executable, str(ROOT / "scripts" / "api_reference.py"),
                           "--check"], capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    spec = yaml.safe_load((ROOT / "kiln" / "api" / "openapi.yaml").read_text())
    page = docs.page("api-reference.md")
    for path, item in spec["paths"].items():
        for method in ("get", "put", "post", "patch", "delete"):
            if method in item:
                assert f"### `{method.upper()} {path}`" in page


def _blocks(name: str) -> list[tuple[str, str, str]]:
    """(heading, language, text) of each fenced block of a page."""
    text = docs.readme() if name == "README.md" else docs.page(name)
    out, heading, lang, body = [], "", None, []
    for line in text.split("\n"):
        fence = FENCE.match(line)
        if fence and lang is None:
            lang, body = fence[1], []
        elif line.strip().startswith("```") and lang is not None:
            out.append((heading, lang, "\n".join(body)))
            lang = None
        elif lang is not None:
            body.append(line.strip())
        elif match := HEADING.match(line):
            heading = match[2]
    return out


def test_every_command_block_is_run_by_a_test() -> None:
    names = ["README.md", *sorted(str(p.relative_to(docs.DOCS)) for p in docs.DOCS.rglob("*.md"))]
    unclaimed = []
    for name in names:
        if name in SKETCHES:
            continue
        for heading, lang, body in _blocks(name):
            if not lang.startswith(COMMANDS):
                continue
            if any(page == name and body.startswith(start) and reason
                   for (page, start), reason in NOT_RUN.items()):
                continue
            runners = [test for (page, title, begins), test in RUN_BY.items()
                       if page == name and heading.startswith(title)
                       and body.startswith(begins)]
            if not runners:
                unclaimed.append(f"{name}, under {heading!r}: {body.splitlines()[0]}")
                continue
            test = ROOT / runners[0]
            assert test.exists(), runners[0]
            page_name = "README" if name == "README.md" else name
            assert page_name in test.read_text() or "docs.readme()" in test.read_text(), (
                f"{runners[0]} does not read {name}")
    assert not unclaimed, "blocks no test runs (add the test, or the reason to NOT_RUN):\n" \
        + "\n".join(unclaimed)


def test_the_test_command_subsets_are_what_the_script_takes() -> None:
    """The README's fast subsets (and their copy in contributing.md) name existing tests,
    and the documentation build is the step scripts/test.sh runs."""
    readme = docs.section(docs.readme(), "What the test command costs")
    contributing = docs.section(docs.page("contributing.md"), "What the test command costs")
    (block,) = re.findall(r"```sh\n(.*?)```", readme, re.S)
    assert re.findall(r"```sh\n(.*?)```", contributing, re.S) == [block]
    assert readme.split("```sh")[0] == contributing.split("```sh")[0]
    script = (ROOT / "scripts" / "test.sh").read_text()
    for line in block.splitlines():
        words = line.split()
        if words[:3] == ["bash", "scripts/test.sh", "lint"]:
            assert len(words) == 3 and "lint_only=true" in script  # test_test_script.py
        elif words[:2] == ["bash", "scripts/test.sh"]:
            assert (ROOT / words[2]).exists(), line
            assert 'exec "${pytest[@]}" "$@"' in script
        else:
            assert words[:4] == [".venv-test/bin/mkdocs", "build", "--strict", "--site-dir"]
            assert '"$VENV/bin/mkdocs" build --strict' in script


def test_getting_started_opens_with_the_readmes_two_commands() -> None:
    readme = [body for heading, _, body in _blocks("README.md") if heading == "Kiln"]
    page = [body for heading, _, body in _blocks("getting-started.md")
            if heading == "Getting started"]
    assert page == readme and len(readme) == 2


def test_the_notifications_example_configuration_loads(tmp_path: Path) -> None:
    from kiln.conf_loader import load_config

    (example,) = re.findall(r"```ini\n(.*?)```", docs.page("notifications.md"), re.S)
    path = tmp_path / "kiln.conf"
    path.write_text(example)
    try:
        conf = load_config([path.as_posix()])
        assert conf.host == "controller-1"
        assert conf.oslo_messaging_notifications.driver == ["messagingv2"]
        assert conf.oslo_messaging_notifications.transport_url.startswith("rabbit://")
    finally:
        CONF.clear()


def test_config_reference_writes_any_file_with_the_markers(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from kiln.cli import main
    from kiln.conf_reference import BEGIN_MARKER, END_MARKER, render_markdown

    page = tmp_path / "page.md"
    page.write_text(f"# Options\n\n{BEGIN_MARKER}\nold\n{END_MARKER}\n\nafter\n")
    done = CliRunner().invoke(main, ["config-reference", "--write", str(page)])
    assert done.exit_code == 0, done.output
    assert page.read_text() == f"# Options\n\n{render_markdown()}\nafter\n"
    bare = tmp_path / "README.md"
    bare.write_text("# no reference here\n")
    done = CliRunner().invoke(main, ["config-reference", "--write", str(bare)])
    assert done.exit_code != 0
    assert "no configuration reference markers found (the reference is in " \
        "docs/configuration.md)" in done.output
    assert bare.read_text() == "# no reference here\n"


def test_the_readme_is_a_front_page_linking_every_page() -> None:
    """The README stays short (issue 27: a front page, at most 300 lines) and its
    Documentation list reaches every page of the site (the site's home aside)."""
    readme = docs.readme()
    assert len(readme.splitlines()) <= 300
    listed = set(re.findall(r"\]\(docs/([^)#]+\.md)\)", docs.section(readme, "Documentation")))
    pages = set(_nav_pages(_config()["nav"])) - {"index.md"}
    assert pages - listed == set(), "pages the README's Documentation list does not link"
    assert all((docs.DOCS / name).exists() for name in listed)


def _unbound_names(code: str) -> set[str]:
    """Names a python block reads but neither binds nor gets from the builtins: what a
    reader who pastes the block alone meets as a NameError."""
    import ast
    import builtins

    tree = ast.parse(code)
    bound: set[str] = set(dir(builtins))
    read: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            (read if isinstance(node.ctx, ast.Load) else bound).add(node.id)
        elif isinstance(node, ast.alias):
            bound.add((node.asname or node.name).split(".")[0])
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(node.name)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
    return read - bound


def test_every_python_block_can_be_pasted_alone() -> None:
    """A page's python block imports and sets up what it uses (a newcomer pasting
    drift.md's boto3 block met `NameError: name 'cfn' is not defined`): the tests that
    run these blocks run them with empty globals, so a name a block leaves to the reader
    must show here first."""
    import textwrap

    missing = []
    for path in sorted(docs.DOCS.rglob("*.md")):
        if path.name in SKETCHES:
            continue
        for block in re.findall(r"^([ \t]*)```python\n(.*?)^[ \t]*```", path.read_text(),
                                re.S | re.M):
            names = _unbound_names(textwrap.dedent(block[1]))
            if names:
                missing.append(f"{path.name}: {sorted(names)}")
    assert not missing, "python blocks using names they do not define:\n" + "\n".join(missing)


def test_pages_running_a_bare_kiln_say_where_it_is() -> None:
    """README's tour runs `.venv/bin/kiln`; a page whose commands run plain `kiln` says
    that is the one in `.venv/bin` (a newcomer coming from the tour, whose PATH does not
    have it, otherwise meets `kiln: command not found`)."""
    silent = []
    for path in sorted(docs.DOCS.rglob("*.md")):
        text = path.read_text()
        blocks = re.findall(r"```sh\n(.*?)```", text, re.S)
        if any(re.search(r"^\s*kiln ", block, re.M) for block in blocks) \
                and ".venv/bin" not in text:
            silent.append(path.name)
    assert not silent, f"pages running `kiln` without saying where it is: {silent}"
