"""``ExternalId`` in a user's CFN template, as Heat 27 answers it: Heat's CFN dialect
ignores keys it does not know inside a resource, so the template validates as it would
without the key and the resource is created, not adopted (checked against the real
Heat 27.0.1 of ../shared/peer-heat). In Kiln the key is the mark an IMPORT change set
writes (tests/functional/cfn/test_cfn_changesets_extra.py), honoured only there.
python-heatclient against a real ``kiln serve``."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from tests.support.clients import heat_client, wait_for_stack_status
from tests.support.server import KilnProcess, start_kiln


def _template(external: bool) -> dict[str, Any]:
    resource: dict[str, Any] = {"Type": "OS::Heat::RandomString",
                                "Properties": {"length": 6}}
    if external:
        resource["ExternalId"] = "obj-1234"
    return {"AWSTemplateFormatVersion": "2010-09-09", "Resources": {"Rand": resource},
            "Outputs": {"Value": {"Value": {"Fn::GetAtt": ["Rand", "value"]}}}}


@pytest.fixture(scope="module")
def heat(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    proc: KilnProcess = start_kiln(tmp_path_factory.mktemp("cfn-external-id"))
    yield heat_client(proc.endpoint("demo"))
    assert proc.stop() == 0, proc.logs()


def test_validate_answers_as_without_the_key(heat: Any) -> None:
    assert heat.stacks.validate(template=_template(True)) == \
        heat.stacks.validate(template=_template(False))


def test_the_resource_is_created_not_adopted(heat: Any) -> None:
    heat.stacks.create(stack_name="cfn-ext", template=json.dumps(_template(True)))
    stack = wait_for_stack_status(heat, "cfn-ext")
    assert stack.stack_status == "CREATE_COMPLETE", stack.stack_status_reason
    (rand,) = heat.resources.list("cfn-ext")
    assert rand.resource_status == "CREATE_COMPLETE"
    assert rand.physical_resource_id != "obj-1234"
    (value,) = [o["output_value"] for o in heat.stacks.get("cfn-ext").outputs]
    assert len(value) == 6
    # unlike Heat, which shows the ignored key back, Kiln does not store it
    # (docs/heat-compatibility.md): in a stored CFN template it marks an import
    assert "ExternalId" not in heat.stacks.template("cfn-ext")["Resources"]["Rand"]
    # an update with the key again is an ordinary one (nothing to change)
    heat.stacks.update("cfn-ext", template=json.dumps(_template(True)))
    stack = wait_for_stack_status(heat, "cfn-ext")
    assert stack.stack_status == "UPDATE_COMPLETE", stack.stack_status_reason
    heat.stacks.delete("cfn-ext")
