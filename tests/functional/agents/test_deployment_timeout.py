"""A deployment whose server never answers fails when the stack's action times out, with
Heat's words (on the resource and on the software-deployments row); the stack can then be
deleted."""

from __future__ import annotations

import json
from typing import Any

from tests.functional.agents.deploying import (
    create,
    deleted,
    deployment_template,
    settled,
)
from tests.support.clients import heat_client
from tests.support.fixtures import StartKiln


def test_a_deployment_that_never_signals_times_out(start_kiln_factory: StartKiln) -> None:
    # stack_action_timeout stands in for a template's timeout_mins (whole minutes)
    kiln = start_kiln_factory(
        options={"DEFAULT": {"stack_action_timeout": 3, "graceful_shutdown_timeout": 2}}
    )
    hc: Any = heat_client(kiln.endpoint("demo"))
    sid = create(hc, "silent", deployment_template())
    stack = settled(hc, sid)
    assert stack.stack_status == "CREATE_FAILED"
    assert stack.stack_status_reason == "Timed out"
    deployment = hc.resources.get(sid, "deployment")
    assert deployment.resource_status == "CREATE_FAILED"
    assert deployment.resource_status_reason == (
        'CREATE aborted (Task create from SoftwareDeployment "deployment" '
        f'Stack "silent" [{sid}] Timed out)'
    )
    # Heat's handle_create_cancel: the deployment row itself is FAILED too, not left
    # IN_PROGRESS (heat-tempest-plugin's test_deployments_timeout_failed lists them)
    row = hc.software_deployments.get(deployment.physical_resource_id)
    assert (row.status, row.status_reason) == ("FAILED", "Deployment cancelled.")
    listed = hc.software_deployments.list(server_id=row.server_id)
    assert [(d.id, d.status) for d in listed] == [(row.id, "FAILED")]
    hc.stacks.delete(sid)
    assert deleted(hc, sid) == "DELETE_COMPLETE"


def test_a_child_stack_given_no_timeout_has_its_parents(start_kiln_factory: StartKiln) -> None:
    """Heat's StackResource passes the parent's ``timeout_mins`` to a child that sets
    none, so a parent's timeout also ends its children's actions (the deployments of an
    OS::Heat::SoftwareDeployments group are then cancelled, as heat-tempest-plugin's
    test_deployments_timeout_failed expects); a child's own timeout stays its own."""
    kiln = start_kiln_factory()
    hc: Any = heat_client(kiln.endpoint("demo"))
    inner = json.dumps(
        {"heat_template_version": "2016-10-14", "resources": {"n": {"type": "OS::Heat::None"}}}
    )
    template = {
        "heat_template_version": "2016-10-14",
        "resources": {
            "inherits": {"type": "OS::Heat::Stack", "properties": {"template": inner}},
            "own": {"type": "OS::Heat::Stack", "properties": {"template": inner, "timeout": 7}},
        },
    }
    sid = hc.stacks.create(stack_name="timeouts", template=template, timeout_mins=3)["stack"]["id"]
    assert settled(hc, sid).stack_status == "CREATE_COMPLETE"
    child = {
        name: hc.stacks.get(hc.resources.get(sid, name).physical_resource_id)
        for name in ("inherits", "own")
    }
    assert (child["inherits"].timeout_mins, child["own"].timeout_mins) == (3, 7)
