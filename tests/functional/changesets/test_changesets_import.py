"""IMPORT change sets on the native API (``resources_to_import``) and in
``kiln stack changeset create --import RESOURCE=PHYSICAL_ID``: an existing object
brought under an existing stack through ``external_id`` adoption, nothing created, driven
by httpx and the ``kiln`` CLI against a real ``kiln serve``, the result read back with
python-heatclient; bad entries are 400s in Heat's fault format naming the entry."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.functional.changesets.support import cli, ok, settled
from tests.support.clients import heat_client
from tests.support.server import KilnProcess, start_kiln

BEFORE = """\
heat_template_version: 2018-08-31
resources:
  keep: {type: OS::Heat::None}
"""

#: the object to import, added to the template with a deletion policy (as CloudFormation
#: asks of every resource to import)
WITH_OLD = """\
heat_template_version: 2018-08-31
resources:
  keep: {type: OS::Heat::None}
  old: {type: OS::Heat::None, deletion_policy: Retain}
"""

WITH_NESTED = """\
heat_template_version: 2018-08-31
resources:
  keep: {type: OS::Heat::None}
  kid:
    type: OS::Heat::Stack
    deletion_policy: Retain
    properties: {template: {heat_template_version: 2018-08-31}}
"""


@pytest.fixture(scope="module")
def kiln(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KilnProcess]:
    proc = start_kiln(tmp_path_factory.mktemp("cs-import"))
    yield proc
    assert proc.stop() == 0, proc.logs()


def _stack(kiln: KilnProcess, name: str) -> tuple[Any, str]:
    heat = heat_client(kiln.endpoint("demo"))
    heat.stacks.create(stack_name=name, template=BEFORE)
    stack = settled(heat, name)
    assert stack.stack_status == "CREATE_COMPLETE"
    return heat, f"{kiln.endpoint('demo')}/stacks/{name}/{stack.id}/changesets"


def test_import_over_http(kiln: KilnProcess) -> None:
    heat, base = _stack(kiln, "imp-http")
    made = httpx.post(base, json={
        "name": "take-over", "template": WITH_OLD,
        "resources_to_import": [{"logical_resource_id": "old",
                                 "resource_type": "OS::Heat::None",
                                 "physical_resource_id": "obj-1234"}]}, timeout=30)
    assert made.status_code == 201, made.text
    shown = made.json()["changeset"]
    assert shown["status"] == "CREATE_COMPLETE", shown["status_reason"]
    assert shown["change_type"] == "IMPORT"
    (change,) = shown["changes"]
    assert (change["action"], change["logical_resource_id"],
            change["physical_resource_id"]) == ("Import", "old", "obj-1234")
    done = httpx.post(f"{base}/take-over/execute", timeout=30)
    assert done.status_code == 202, done.text
    assert settled(heat, "imp-http").stack_status == "UPDATE_COMPLETE"
    found = {r.resource_name: r.physical_resource_id for r in heat.resources.list("imp-http")}
    assert found["old"] == "obj-1234"


def test_import_with_the_cli(kiln: KilnProcess, tmp_path: Path) -> None:
    heat, _ = _stack(kiln, "imp-cli")
    (tmp_path / "with-old.yaml").write_text(WITH_OLD)
    out = ok(cli(kiln, tmp_path, "changeset", "create", "--name", "take-over",
                 "-t", "with-old.yaml", "--import", "old=obj-77", "imp-cli")).stdout
    assert "Import" in out and "obj-77" not in out.split("Import")[0]
    ok(cli(kiln, tmp_path, "changeset", "execute", "--wait", "imp-cli", "take-over"))
    found = {r.resource_name: r.physical_resource_id for r in heat.resources.list("imp-cli")}
    assert found["old"] == "obj-77"
    bad = cli(kiln, tmp_path, "changeset", "create", "--name", "again",
              "-t", "with-old.yaml", "--import", "old", "imp-cli")
    assert bad.returncode == 2 and "RESOURCE=PHYSICAL_ID" in bad.stderr


@pytest.mark.parametrize(("template", "entry", "place"), [
    (WITH_OLD, {"logical_resource_id": "nope", "physical_resource_id": "x"},
     "resources_to_import[0].logical_resource_id: 'nope' is not a resource of the template"),
    (WITH_OLD, {"logical_resource_id": "old"},
     "resources_to_import[0].physical_resource_id must be a non-empty string"),
    (WITH_OLD, {"logical_resource_id": "old", "physical_resource_id": "x",
                "resource_type": "OS::Heat::Value"},
     "resources_to_import[0].resource_type: 'OS::Heat::Value' is not the type of 'old'"),
    (WITH_NESTED, {"logical_resource_id": "kid", "physical_resource_id": "x"},
     "resources_to_import[0]: Resource 'kid' of type 'OS::Heat::Stack' cannot be imported"),
    (WITH_OLD, "old=x", "resources_to_import[0] must be an object"),
])
def test_bad_imports_are_400s_naming_the_entry(kiln: KilnProcess, template: str,
                                               entry: Any, place: str) -> None:
    name = f"imp-bad-{uuid.uuid4().hex[:8]}"
    heat, base = _stack(kiln, name)
    try:
        resp = httpx.post(base, json={"name": "bad", "template": template,
                                      "resources_to_import": [entry]}, timeout=30)
        assert resp.status_code == 400, resp.text
        body = resp.json()
        assert body["code"] == 400 and body["title"] == "Bad Request"
        assert place in body["error"]["message"], body
        assert httpx.get(base, timeout=30).json()["changesets"] == []
    finally:
        heat.stacks.delete(name)
