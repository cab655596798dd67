"""A stack with no trust, against a real Keystone: work no request is behind fails,
naming the missing trust, rather than acting with Kiln's own credentials.

A stack created through the CloudFormation API (boto3, signed with the user's Keystone
EC2 credential) gets no trust: Keystone refuses trust creation to an EC2-derived token.
Kiln here also has ``[kiln_clients]`` credentials of an admin (its service user). When a
restarted engine takes the stack's create over, nobody's request is behind the work: the
nested Keystone role must not be made with those credentials (Heat 27's stored context
for a stack without a trust has none at all), so the create fails and says why.
"""

from __future__ import annotations

import json
import uuid
from typing import Any

import pytest

from tests.functional.agents.deploying import wait_for
from tests.functional.identity.test_ec2_keystone import boto, ec2_credential
from tests.functional.identity.test_stack_users import heat_as
from tests.functional.identity.test_trust_recovery import crash_and_take_over
from tests.functional.identity.test_trusts import long_template, trusts_of
from tests.support.fixtures import StartKiln
from tests.support.keystone import KeystoneProcess

WAIT_SECONDS = 20


@pytest.mark.slow
def test_a_recovered_create_of_a_stack_without_a_trust_fails_naming_it(
        keystone: KeystoneProcess, start_kiln_factory: StartKiln, tmp_path: Any) -> None:
    user = keystone.account(("member", "admin"))  # OS::Keystone::* is admin-only
    service = keystone.service_account()
    options: dict[str, dict[str, Any]] = {
        **keystone.kiln_options(),
        # Kiln's own credentials, an admin's: never to be used for a user's stack
        "kiln_clients": {"auth_url": keystone.url, "username": service.username,
                         "password": service.password, "project_name": service.project},
        "DEFAULT": {"periodic_interval": 1},
        "kiln_engine": {"heartbeat_interval": 0.5, "engine_dead_after": 3}}
    first = start_kiln_factory(workdir=tmp_path / "kiln", options=options)
    role = f"untrusted-{uuid.uuid4().hex[:8]}"
    cfn = boto(first, "cloudformation", ec2_credential(keystone, user))
    made = cfn.create_stack(StackName="untrusted",
                            TemplateBody=json.dumps(long_template(role, WAIT_SECONDS)))
    stack_id = made["StackId"].rsplit("/", 1)[-1]
    hc = heat_as(keystone, user, first)
    wait_for(lambda: hc.resources.get(stack_id, "wait").resource_status,
             lambda status: status == "CREATE_IN_PROGRESS", "the waiting resource")
    assert trusts_of(keystone, user.user_id) == []
    hc, done = crash_and_take_over(keystone, user, first, start_kiln_factory, options,
                                  stack_id)
    assert done.stack_status == "CREATE_FAILED", done.stack_status_reason
    assert "AuthorizationFailure" in done.stack_status_reason
    assert "the stack has no trust" in done.stack_status_reason
    assert not keystone.admin().get("/roles", params={"name": role}).json()["roles"]

    hc.stacks.delete(stack_id)
    wait_for(lambda: [s.id for s in hc.stacks.list()], lambda ids: stack_id not in ids,
             "the stack deleted")
