"""An update by another user of the project moves the stack's trust to them, as Heat 27's
``check_refresh_cred`` does, against a real Keystone with two real users.

Alice creates a scaling stack (a trust from Alice to Kiln's service user); Bob, a member
of the same project, updates it: Kiln makes a trust from Bob with Bob's token, stores it
in place of Alice's, and deletes Alice's. The stack's deferred work (a signal scaling the
group) then acts for Bob, so it keeps working once Alice's account is gone. An update by
the trustor whose trust was deleted behind Kiln's back renews it the same way.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.functional.agents.deploying import wait_for
from tests.functional.identity.conftest import settle, size
from tests.functional.identity.test_stack_users import heat_as
from tests.functional.identity.test_trusts import SCALING, trusts_of
from tests.support.keystone import Account, KeystoneProcess
from tests.support.server import KilnProcess


def the_trust(keystone: KeystoneProcess, user: Account) -> dict[str, Any]:
    [listed] = trusts_of(keystone, user.user_id)
    trust = keystone.admin().get(f"/OS-TRUST/trusts/{listed['id']}").json()["trust"]
    assert trust["trustee_user_id"] == keystone.service_account().user_id
    assert (trust["project_id"], trust["impersonation"]) == (user.project_id, True)
    return dict(trust)


@pytest.mark.slow
def test_an_update_by_another_user_moves_the_trust_to_them(
        keystone: KeystoneProcess, ks_kiln: KilnProcess) -> None:
    keystone.role_id("heat_stack_user")  # the scaling policy's stack user has it
    alice = keystone.account(("member",), prefix="alice")
    bob = keystone.account(("member",), project=alice.project, prefix="bob")
    as_alice, as_bob = heat_as(keystone, alice, ks_kiln), heat_as(keystone, bob, ks_kiln)
    stack_id = as_alice.stacks.create(stack_name="shared", template=SCALING)["stack"]["id"]
    assert settle(as_alice, stack_id, "the create").stack_status == "CREATE_COMPLETE"
    alices = the_trust(keystone, alice)
    assert trusts_of(keystone, bob.user_id) == []

    as_bob.stacks.update(stack_id, existing=True)
    updated = settle(as_bob, stack_id, "Bob's update")
    assert updated.stack_status == "UPDATE_COMPLETE", updated.stack_status_reason
    assert trusts_of(keystone, alice.user_id) == []
    bobs = the_trust(keystone, bob)
    assert bobs["id"] != alices["id"]

    # Alice leaves; the stack's deferred work acts for Bob through his trust
    keystone.delete_user(alice.user_id)
    as_bob.resources.signal(stack_id, "up")
    wait_for(lambda: size(as_bob, stack_id), lambda n: n == 2, "the scaling")

    # a trust deleted behind Kiln's back: Bob's next update makes him a new one
    gone = keystone.admin().delete(f"/OS-TRUST/trusts/{bobs['id']}")
    assert gone.status_code == 204, gone.text
    as_bob.stacks.update(stack_id, existing=True)
    renewed = settle(as_bob, stack_id, "the update renewing the trust")
    assert renewed.stack_status == "UPDATE_COMPLETE", renewed.stack_status_reason
    assert the_trust(keystone, bob)["id"] != bobs["id"]
    as_bob.resources.signal(stack_id, "up")
    wait_for(lambda: size(as_bob, stack_id), lambda n: n == 3, "the second scaling")

    as_bob.stacks.delete(stack_id)
    settle_gone = wait_for(lambda: trusts_of(keystone, bob.user_id), lambda t: t == [],
                           "the trust deleted with the stack")
    assert settle_gone == []
