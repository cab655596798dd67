"""An engine killed mid-create, against a real Keystone: the restarted ``kiln serve``
takes the stack over and finishes the create through the stack's stored trust.

The create's last step is a nested stack whose member is a Keystone role, made by the
engine's clients with whatever identity the work acts with. The restarted process has
no request of the user's (nor their token) behind the recovered create, and no
``[kiln_clients]`` credentials of its own: only the trust can make the role.
"""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from tests.functional.agents.deploying import wait_for
from tests.functional.identity.test_stack_users import heat_as
from tests.functional.identity.test_trusts import long_template, trusts_of
from tests.support.fixtures import StartKiln
from tests.support.keystone import Account, KeystoneProcess
from tests.support.server import KilnProcess

WAIT_SECONDS = 20


def crash_and_take_over(keystone: KeystoneProcess, user: Account, first: KilnProcess,
                        start_kiln_factory: StartKiln, options: dict[str, dict[str, Any]],
                        stack_id: str) -> tuple[Any, Any]:
    """Kill ``first`` mid-create and start another Kiln on its state: the user's
    heatclient to the new process, and the stack once the taken-over create has ended."""
    first.proc.kill()
    first.proc.wait(60)
    second = start_kiln_factory(workdir=first.workdir, port=first.port, options=options)
    hc = heat_as(keystone, user, second)
    done = wait_for(lambda: hc.stacks.get(stack_id),
                    lambda s: not s.stack_status.endswith("IN_PROGRESS"),
                    "the recovered create", deadline=WAIT_SECONDS + 120)
    assert "taking over stack" in second.logs()
    return hc, done


@pytest.mark.slow
def test_a_create_recovered_after_a_crash_finishes_through_the_trust(
        keystone: KeystoneProcess, start_kiln_factory: StartKiln, tmp_path: Any) -> None:
    user = keystone.account(("member", "admin"))
    options: dict[str, dict[str, Any]] = {
        **keystone.kiln_options(),
        "DEFAULT": {"periodic_interval": 1},
        "kiln_engine": {"heartbeat_interval": 0.5, "engine_dead_after": 3}}
    first = start_kiln_factory(workdir=tmp_path / "kiln", options=options)
    hc = heat_as(keystone, user, first)
    role = f"recovered-{uuid.uuid4().hex[:8]}"
    made = hc.stacks.create(stack_name="crashed", template=long_template(role, WAIT_SECONDS))
    stack_id = made["stack"]["id"]
    wait_for(lambda: hc.resources.get(stack_id, "wait").resource_status,
             lambda status: status == "CREATE_IN_PROGRESS", "the waiting resource")
    [trust] = trusts_of(keystone, user.user_id)
    hc, done = crash_and_take_over(keystone, user, first, start_kiln_factory, options,
                                  stack_id)
    assert done.stack_status == "CREATE_COMPLETE", done.stack_status_reason
    roles = keystone.admin().get("/roles", params={"name": role}).json()["roles"]
    assert [r["name"] for r in roles] == [role]
    assert trusts_of(keystone, user.user_id) == [trust]

    hc.stacks.delete(stack_id)
    wait_for(lambda: trusts_of(keystone, user.user_id), lambda left: left == [],
             "the trust deleted with the stack")
    assert not keystone.admin().get("/roles", params={"name": role}).json()["roles"]
