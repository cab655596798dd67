"""What Heat users script: wait for a stack to settle, then send the next action at once.

Through a real ``kiln serve`` and python-heatclient, in a loop: once a client reads a
settled state (CREATE_COMPLETE, the ROLLBACK_COMPLETE of an update that failed and
rolled back, CHECK_COMPLETE), the next request is accepted, never a 409 for the action
that has just ended. Before the fix, an update's rollback answered the check sent right
after ROLLBACK_COMPLETE with 409 'already has an action (UPDATE) in progress' about one
time in 25 (the engine's claim was still the update's, its stored state the
rollback's); the deterministic version of each race is in
tests/unit/engine/test_action_races.py.
"""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from tests.support.clients import wait_for_stack_status

ROUNDS = 12
SETTLE_SECONDS = 180.0  # generous: the machine may be loaded


def template(fail: bool) -> dict[str, Any]:
    return {"heat_template_version": "2018-08-31", "resources": {
        "r": {"type": "OS::Heat::RandomString"},
        "group": {"type": "OS::Heat::ResourceGroup", "properties": {
            "count": 2, "resource_def": {"type": "OS::Heat::RandomString"}}},
        "t": {"type": "OS::Heat::TestResource",
              "properties": {"fail": fail, "value": str(fail)}}}}


def settled(hc: Any, stack_id: str) -> str:
    status: str = wait_for_stack_status(hc, stack_id, timeout=SETTLE_SECONDS).stack_status
    return status


@pytest.mark.slow
def test_the_next_action_is_accepted_as_soon_as_the_stack_reads_settled(hc: Any) -> None:
    for _ in range(ROUNDS):
        name = f"settled-{uuid.uuid4().hex[:8]}"
        stack_id = hc.stacks.create(stack_name=name, template=template(False))["stack"]["id"]
        assert settled(hc, stack_id) == "CREATE_COMPLETE"
        hc.resources.mark_unhealthy(stack_id, "r", True, "marked at once")
        hc.stacks.update(stack_id, template=template(True), disable_rollback=False)
        assert settled(hc, stack_id) == "ROLLBACK_COMPLETE"
        hc.actions.check(stack_id)
        assert settled(hc, stack_id) == "CHECK_COMPLETE"
        hc.actions.suspend(stack_id)
        assert settled(hc, stack_id) == "SUSPEND_COMPLETE"
        hc.stacks.delete(stack_id)
