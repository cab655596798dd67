"""Kiln's change set routes on the native API, driven by httpx and by the ``kiln``
CLI as a subprocess, against a real ``kiln serve``; python-heatclient sees the stack
(and every answer it knows) unchanged by a change set until it is executed."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.functional.changesets.support import cli, ok, settled
from tests.support.clients import heat_client
from tests.support.server import KilnProcess, start_kiln

BEFORE = """\
heat_template_version: 2018-08-31
parameters:
  length: {type: number, default: 8}
  password: {type: string, hidden: true, default: first-s3cret}
resources:
  rand:
    type: OS::Heat::RandomString
    properties: {length: {get_param: length}}
  note:
    type: OS::Heat::Value
    properties: {value: {get_param: password}}
  old: {type: OS::Heat::None}
"""

AFTER = """\
heat_template_version: 2018-08-31
parameters:
  length: {type: number, default: 8}
  password: {type: string, hidden: true, default: first-s3cret}
resources:
  rand:
    type: OS::Heat::RandomString
    properties: {length: {get_param: length}}
  note:
    type: OS::Heat::Value
    properties: {value: {list_join: ['-', [{get_param: password}, 'v2']]}}
  new: {type: OS::Heat::None}
"""


@pytest.fixture(scope="module")
def kiln(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KilnProcess]:
    proc = start_kiln(tmp_path_factory.mktemp("cs-native"))
    yield proc
    assert proc.stop() == 0, proc.logs()


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    (tmp_path / "before.yaml").write_text(BEFORE)
    (tmp_path / "after.yaml").write_text(AFTER)
    return tmp_path


def test_review_then_execute_over_http_and_heatclient(kiln: KilnProcess) -> None:
    heat = heat_client(kiln.endpoint("demo"))
    heat.stacks.create(stack_name="cs-http", template=BEFORE)
    stack = settled(heat, "cs-http")
    base = f"{kiln.endpoint('demo')}/stacks/cs-http/{stack.id}/changesets"
    made = httpx.post(
        base, json={"name": "v2", "template": AFTER, "description": "second version"}, timeout=30
    )
    assert made.status_code == 201, made.text
    shown = made.json()["changeset"]
    assert (shown["status"], shown["execution_status"]) == ("CREATE_COMPLETE", "AVAILABLE")
    assert "first-s3cret" not in made.text
    assert shown["parameters"] == {}
    by_name = {c["logical_resource_id"]: c for c in shown["changes"]}
    assert by_name["new"]["action"] == "Add"
    assert by_name["old"]["action"] == "Remove"
    note = by_name["note"]
    assert (note["action"], note["replacement"]) == ("Modify", "False")
    assert note["details"][0]["target"] == {
        "attribute": "Properties",
        "name": "value",
        "requires_recreation": "Never",
    }
    assert note["details"][0]["before"] == note["details"][0]["after"] == "******"
    assert "rand" not in by_name
    # nothing changed yet, for Heat's clients too
    assert heat.stacks.get("cs-http").stack_status == "CREATE_COMPLETE"
    assert {r.resource_name for r in heat.resources.list(stack.id)} == {"rand", "note", "old"}
    # the link a second person opens
    link = shown["links"][0]["href"]
    assert httpx.get(link, timeout=30).json()["changeset"]["changes"] == shown["changes"]
    listed = httpx.get(base, timeout=30).json()["changesets"]
    assert [c["name"] for c in listed] == ["v2"] and "changes" not in listed[0]
    executed = httpx.post(link + "/execute", timeout=30)
    assert executed.status_code == 202, executed.text
    assert settled(heat, "cs-http").stack_status == "UPDATE_COMPLETE"
    assert {r.resource_name for r in heat.resources.list(stack.id)} == {"rand", "note", "new"}
    again = httpx.post(link + "/execute", timeout=30)
    assert again.status_code == 409, again.text
    assert again.json()["error"]["type"] == "InvalidChangeSetStatus"
    assert httpx.get(base + "/nope", timeout=30).status_code == 404
    assert httpx.post(base, json={"template": AFTER}, timeout=30).status_code == 400
    assert httpx.post(base, json={"name": "9bad", "template": AFTER}, timeout=30).status_code == 400
    assert httpx.delete(link, timeout=30).status_code == 204
    assert httpx.get(link, timeout=30).status_code == 404


def test_cli_create_show_execute_list_delete(kiln: KilnProcess, workdir: Path) -> None:
    ok(cli(kiln, workdir, "create", "-t", "before.yaml", "--wait", "cs-cli"))
    made = ok(
        cli(
            kiln,
            workdir,
            "changeset",
            "create",
            "cs-cli",
            "-t",
            "after.yaml",
            "--name",
            "v2",
            "-f",
            "json",
        )
    )
    shown = json.loads(made.stdout)
    assert shown["execution_status"] == "AVAILABLE"
    table = ok(cli(kiln, workdir, "changeset", "show", "cs-cli", "v2")).stdout
    assert "Remove" in table and "Add" in table and "******" in table
    assert "first-s3cret" not in table
    listed = json.loads(ok(cli(kiln, workdir, "changeset", "list", "cs-cli", "-f", "json")).stdout)
    assert [c["name"] for c in listed] == ["v2"]
    # a second plan, then the stack changes under it: the second is refused
    ok(
        cli(
            kiln,
            workdir,
            "changeset",
            "create",
            "cs-cli",
            "-t",
            "after.yaml",
            "--parameter",
            "length=12",
            "--name",
            "longer",
        )
    )
    ok(cli(kiln, workdir, "changeset", "execute", "--wait", "cs-cli", "v2"))
    stale = json.loads(
        ok(cli(kiln, workdir, "changeset", "show", "cs-cli", "longer", "-f", "json")).stdout
    )
    assert stale["execution_status"] == "OBSOLETE"
    refused = cli(kiln, workdir, "changeset", "execute", "cs-cli", "longer")
    assert refused.returncode != 0 and "OBSOLETE" in refused.stderr
    ok(cli(kiln, workdir, "changeset", "delete", "cs-cli", "longer"))
    missing = cli(kiln, workdir, "changeset", "show", "cs-cli", "longer")
    assert missing.returncode != 0 and "does not exist" in missing.stderr


CHILD = """\
heat_template_version: 2018-08-31
parameters:
  length: {type: number}
resources:
  inner:
    type: OS::Heat::RandomString
    properties: {length: {get_param: length}}
"""
PARENT = """\
heat_template_version: 2018-08-31
resources:
  kid:
    type: child.yaml
    properties: {length: 8}
"""


def test_nested_change_sets_of_a_provider_template(kiln: KilnProcess) -> None:
    heat = heat_client(kiln.endpoint("demo"))
    heat.stacks.create(stack_name="cs-tree", template=PARENT, files={"child.yaml": CHILD})
    stack = settled(heat, "cs-tree")
    base = f"{kiln.endpoint('demo')}/stacks/cs-tree/{stack.id}/changesets"
    grown = CHILD + "  more: {type: OS::Heat::None}\n"
    made = httpx.post(
        base,
        json={
            "name": "grow",
            "template": PARENT,
            "files": {"child.yaml": grown},
            "include_nested_stacks": True,
        },
        timeout=30,
    )
    assert made.status_code == 201, made.text
    root = made.json()["changeset"]
    assert root["include_nested_stacks"] is True
    (kid,) = root["changes"]
    assert (kid["logical_resource_id"], kid["action"]) == ("kid", "Modify")
    child_stack = heat.stacks.get(kid["physical_resource_id"])
    link = (
        f"{kiln.endpoint('demo')}/stacks/{child_stack.stack_name}/{child_stack.id}"
        f"/changesets/{kid['change_set_id']}"
    )
    child = httpx.get(link, timeout=30).json()["changeset"]
    assert child["parent_change_set"] == child["root_change_set"] == {
        "id": root["id"],
        "name": "grow",
    }
    assert [(c["action"], c["logical_resource_id"]) for c in child["changes"]] == [
        ("Add", "more")
    ]
    refused = httpx.post(link + "/execute", timeout=30)
    assert refused.status_code == 409, refused.text
    # a second plan, made obsolete by an update of the nested stack alone
    other = {"name": "stale", "template": PARENT, "files": {"child.yaml": grown},
             "include_nested_stacks": True}
    assert httpx.post(base, json=other, timeout=30).status_code == 201
    heat.stacks.update(child_stack.id, template=CHILD, parameters={"length": 9})
    assert settled(heat, child_stack.id).stack_status == "UPDATE_COMPLETE"
    stale = httpx.post(f"{base}/stale/execute", timeout=30)
    assert stale.status_code == 409 and "nested stack changed" in stale.text, stale.text
    grow = httpx.post(f"{base}/grow/execute", timeout=30)
    assert grow.status_code == 409, grow.text  # obsolete as well
    made = httpx.post(base, json={**other, "name": "grow-2"}, timeout=30)
    (kid,) = made.json()["changeset"]["changes"]
    link = (
        f"{kiln.endpoint('demo')}/stacks/{child_stack.stack_name}/{child_stack.id}"
        f"/changesets/{kid['change_set_id']}"
    )
    assert httpx.post(f"{base}/grow-2/execute", timeout=30).status_code == 202
    assert settled(heat, "cs-tree").stack_status == "UPDATE_COMPLETE"
    assert {r.resource_name for r in heat.resources.list(child_stack.id)} == {"inner", "more"}
    assert httpx.get(link, timeout=30).json()["changeset"]["execution_status"] == (
        "EXECUTE_COMPLETE"
    )
