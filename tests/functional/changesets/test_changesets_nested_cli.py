"""Nested change sets in ``kiln stack changeset`` (issue 28): ``create --include-nested``
and ``show`` print each nested stack's change set under its resource, hidden values
masked, for a provider template being changed and an ``OS::Heat::Stack`` being added;
the real ``kiln`` CLI as a subprocess against a real ``kiln serve``."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.functional.changesets.support import cli, ok, settled
from tests.support.clients import heat_client
from tests.support.server import KilnProcess, start_kiln

CHILD = """\
heat_template_version: 2018-08-31
parameters:
  length: {type: number}
  password: {type: string, hidden: true}
resources:
  inner:
    type: OS::Heat::RandomString
    properties: {length: {get_param: length}}
  note:
    type: OS::Heat::Value
    properties: {value: {get_param: password}}
"""
PARENT = """\
heat_template_version: 2018-08-31
parameters:
  length: {type: number, default: 8}
  password: {type: string, hidden: true, default: first-s3cret}
resources:
  kid:
    type: child.yaml
    properties: {length: {get_param: length}, password: {get_param: password}}
"""
EXTRA = """\
heat_template_version: 2018-08-31
resources:
  flag: {type: OS::Heat::None}
"""
GROWN = PARENT + """\
  extra:
    type: OS::Heat::Stack
    properties: {template: {get_file: extra.yaml}}
"""


@pytest.fixture(scope="module")
def kiln(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KilnProcess]:
    proc = start_kiln(tmp_path_factory.mktemp("cs-nested-cli"))
    yield proc
    assert proc.stop() == 0, proc.logs()


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    for name, text in (("child.yaml", CHILD), ("parent.yaml", PARENT), ("extra.yaml", EXTRA),
                       ("grown.yaml", GROWN)):
        (tmp_path / name).write_text(text)
    return tmp_path


def _rows(table: str) -> list[list[str]]:
    """The change rows of ``show``'s last table, cells stripped on the right only (the
    resource column's indent is what is checked)."""
    lines = table.splitlines()
    (start,) = [i for i, line in enumerate(lines) if line.startswith("| action ")]
    rows = []
    for line in lines[start:]:
        if line.startswith("|") and not line.startswith("|-"):
            rows.append([cell[1:].rstrip() for cell in line.strip("|").split("|")])
    return rows[1:]


def test_create_include_nested_then_show_and_execute(kiln: KilnProcess, workdir: Path) -> None:
    ok(cli(kiln, workdir, "create", "-t", "parent.yaml", "--wait", "tree"))
    made = ok(cli(kiln, workdir, "changeset", "create", "tree", "-t", "grown.yaml",
                  "--parameter", "length=12", "--parameter", "password=new-s3cret",
                  "--include-nested", "--name", "grow"))
    assert "new-s3cret" not in made.stdout and "first-s3cret" not in made.stdout
    shown = ok(cli(kiln, workdir, "changeset", "show", "tree", "grow"))
    out = shown.stdout
    assert "new-s3cret" not in out and "first-s3cret" not in out
    assert re.search(r"include_nested_stacks\s*\|\s*True", out), out
    rows = _rows(out)
    resources = [r[1] for r in rows]
    heat = heat_client(kiln.endpoint("demo"))
    kid_stack = heat.resources.get("tree", "kid").physical_resource_id
    kid_name = heat.stacks.get(kid_stack).stack_name
    # the parent's rows for kid, then kid's nested stack named, then its own rows indented
    first_kid = resources.index("kid")
    header = resources.index(f"  stack {kid_name}")
    assert rows[header][2] == "change set grow-kid"
    assert first_kid < header and all(r == "kid" for r in resources[first_kid:header])
    inner = [r for r in rows if r[1] == "  inner"]
    assert inner == [["Modify", "  inner", "OS::Heat::RandomString", "True", "length",
                      "Always", "8", "12"]], out
    (note,) = [r for r in rows if r[1] == "  note"]
    assert (note[0], note[4], note[6], note[7]) == ("Modify", "value", "******", "******")
    # the OS::Heat::Stack added: a nested change set of a stack still to be created
    extra = resources.index("extra")
    assert rows[extra][0] == "Add"
    assert resources[extra + 1] == "  stack tree-extra"
    assert rows[extra + 1][2] == "change set grow-extra"
    assert rows[extra + 2][:3] == ["Add", "  flag", "OS::Heat::None"]

    # as JSON: each nested change set under the change that names it
    record = json.loads(ok(cli(kiln, workdir, "changeset", "show", "tree", "grow",
                               "-f", "json")).stdout)
    by_name = {c["logical_resource_id"]: c for c in record["changes"]}
    nested = by_name["kid"]["nested_change_set"]
    assert nested["id"] == by_name["kid"]["change_set_id"]
    assert nested["root_change_set"] == {"id": record["id"], "name": "grow"}
    assert nested["parameters"]["password"] == "******"
    assert {c["logical_resource_id"] for c in nested["changes"]} == {"inner", "note"}
    assert by_name["extra"]["nested_change_set"]["change_type"] == "CREATE"

    # the list shows the root only, marked as including nested stacks
    listed = json.loads(ok(cli(kiln, workdir, "changeset", "list", "tree", "-f", "json")).stdout)
    assert [(c["name"], c["include_nested_stacks"]) for c in listed] == [("grow", True)]
    # a nested change set is opened under its root's stack too, and not executed alone
    alone = cli(kiln, workdir, "changeset", "show", "tree", nested["id"], "-f", "json")
    assert json.loads(ok(alone).stdout)["name"] == "grow-kid"
    refused = cli(kiln, workdir, "changeset", "execute", "tree", nested["id"])
    assert refused.returncode == 1 and "nested change set" in refused.stderr, refused.stderr

    ok(cli(kiln, workdir, "changeset", "execute", "--wait", "tree", "grow"))
    assert settled(heat, "tree").stack_status == "UPDATE_COMPLETE"
    assert len(heat.resources.get(kid_stack, "inner").attributes["value"]) == 12
    after = json.loads(ok(cli(kiln, workdir, "changeset", "show", "tree", "grow",
                              "-f", "json")).stdout)
    assert after["changes"][0]["nested_change_set"]["execution_status"] == "EXECUTE_COMPLETE"


def test_without_include_nested_no_nested_rows(kiln: KilnProcess, workdir: Path) -> None:
    ok(cli(kiln, workdir, "create", "-t", "parent.yaml", "--wait", "flat"))
    ok(cli(kiln, workdir, "changeset", "create", "flat", "-t", "parent.yaml",
           "--parameter", "length=10", "--name", "plain"))
    out = ok(cli(kiln, workdir, "changeset", "show", "flat", "plain")).stdout
    assert [r[1] for r in _rows(out)] == ["kid"]
    assert "change set" not in out


def test_a_nested_change_set_is_not_found_under_an_unrelated_stack(
        kiln: KilnProcess, workdir: Path) -> None:
    """Opening a nested change set under a stack above it is the only new way in: under
    another stack it is the same 404 as any unknown change set."""
    ok(cli(kiln, workdir, "create", "-t", "parent.yaml", "--wait", "root-a"))
    ok(cli(kiln, workdir, "create", "-t", "parent.yaml", "--wait", "other-b"))
    made = json.loads(ok(cli(kiln, workdir, "changeset", "create", "root-a", "-t", "parent.yaml",
                             "--parameter", "length=9", "--include-nested", "--name", "nine",
                             "-f", "json")).stdout)
    (kid,) = made["changes"]
    heat = heat_client(kiln.endpoint("demo"))
    other = heat.stacks.get("other-b")
    missing = httpx.get(f"{kiln.endpoint('demo')}/stacks/other-b/{other.id}/changesets/"
                        f"{kid['change_set_id']}", timeout=30)
    assert missing.status_code == 404, missing.text
    assert "does not exist" in cli(kiln, workdir, "changeset", "show", "other-b",
                                   kid["change_set_id"]).stderr
    # nor under its own root's stack from another project
    root = heat.stacks.get("root-a")
    for project in ("demo", "other"):
        seen = httpx.get(f"{kiln.endpoint(project)}/stacks/root-a/{root.id}/changesets/"
                         f"{kid['change_set_id']}", timeout=30)
        assert seen.status_code == (200 if project == "demo" else 404), seen.text
