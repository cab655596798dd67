"""``deferred_auth_method = password`` (Heat's stored passwords) against a real Keystone,
with heatclient sending the caller's password as Heat's users do (``include_pass``).

- A stack that needs deferred authentication (a scaling policy, a nested group) is
  refused without X-Auth-User / X-Auth-Key with Heat's 400; one that needs none is not.
- A wrong X-Auth-Key is refused at create (Kiln logs in with it first).
- With the right one the password is kept encrypted with the stack; a signal, with no
  request of the owner's behind its scaling, acts by logging in with it; once the
  owner's password changes in Keystone the next signal fails saying so.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.functional.agents.deploying import wait_for
from tests.functional.identity.conftest import size
from tests.functional.identity.test_stack_users import heat_as
from tests.functional.identity.test_trusts import SCALING, trusts_of
from tests.support.keystone import Account, KeystoneProcess
from tests.support.server import KilnProcess, start_kiln

PLAIN = {"heat_template_version": "2018-08-31",
         "resources": {"a": {"type": "OS::Heat::None"}}}


@pytest.fixture(scope="module")
def password_kiln(keystone: KeystoneProcess,
                  tmp_path_factory: pytest.TempPathFactory) -> Iterator[KilnProcess]:
    options = keystone.kiln_options()
    options["DEFAULT"] = {"deferred_auth_method": "password", "debug": True}
    proc = start_kiln(tmp_path_factory.mktemp("kiln-password"), options=options)
    yield proc
    proc.stop()


def with_password(kiln: KilnProcess, account: Account, password: str) -> Any:
    """heatclient as a Heat user sends their password along: include_pass."""
    from heatclient import client as heat

    return heat.Client("1", endpoint=kiln.endpoint(account.project_id),
                       token=account.token().id, username=account.username,
                       password=password, include_pass=True)


def create(kiln: KilnProcess, account: Account, name: str, template: dict[str, Any],
           **headers: str) -> httpx.Response:
    return httpx.post(f"{kiln.endpoint(account.project_id)}/stacks", timeout=60.0,
                      headers={"X-Auth-Token": account.token().id, **headers},
                      json={"stack_name": name, "template": template})


@pytest.mark.slow
def test_stored_passwords_act_for_the_owner(
        keystone: KeystoneProcess, password_kiln: KilnProcess) -> None:
    keystone.role_id("heat_stack_user")  # the scaling policy's stack user has it
    owner = keystone.account(("member",), prefix="carol")

    refused = create(password_kiln, owner, "bare", SCALING)
    assert refused.status_code == 400, refused.text
    assert refused.json()["error"]["message"] == \
        "Missing required credential: X-Auth-User"
    refused = create(password_kiln, owner, "bare", SCALING, **{"X-Auth-User": owner.username})
    assert refused.status_code == 400, refused.text
    assert refused.json()["error"]["message"] == "Missing required credential: X-Auth-Key"
    assert create(password_kiln, owner, "plain", PLAIN).status_code == 201
    wrong = create(password_kiln, owner, "wrong", SCALING,
                   **{"X-Auth-User": owner.username, "X-Auth-Key": "not-the-password"})
    assert wrong.status_code == 403, wrong.text
    assert "Keystone refused the password of user" in wrong.json()["error"]["message"]

    hc = with_password(password_kiln, owner, owner.password)
    stack_id = hc.stacks.create(stack_name="scaled", template=SCALING)["stack"]["id"]
    made = wait_for(lambda: hc.stacks.get(stack_id),
                    lambda s: not s.stack_status.endswith("IN_PROGRESS"), "the create")
    assert made.stack_status == "CREATE_COMPLETE", made.stack_status_reason
    assert trusts_of(keystone, owner.user_id) == []  # a password, not a trust

    # a signal (token only): its scaling logs in with the stored password
    session = heat_as(keystone, owner, password_kiln)
    session.resources.signal(stack_id, "up")
    wait_for(lambda: size(session, stack_id), lambda n: n == 2, "the scaling")

    # the owner's password changes: Kiln can no longer act for them, and says so
    changed = keystone.admin().patch(f"/users/{owner.user_id}",
                                     json={"user": {"password": "a-new-password-1"}})
    assert changed.status_code == 200, changed.text
    owner_now = Account(keystone, owner.username, "a-new-password-1", owner.project,
                        owner.project_id, owner.user_id, owner.roles)
    # Keystone revokes the user's tokens issued up to the change's second: a token made
    # in that same second is refused too, so wait for one Kiln accepts
    stacks = f"{password_kiln.endpoint(owner.project_id)}/stacks"
    wait_for(lambda: httpx.get(stacks, headers={"X-Auth-Token": owner_now.token().id},
                               timeout=30.0).status_code,
             lambda status: status == 200, "a token of the new password")
    after = heat_as(keystone, owner_now, password_kiln)
    from heatclient import exc

    with pytest.raises(exc.HTTPForbidden) as caught:
        after.resources.signal(stack_id, "up")
    assert f"Keystone refused the password of user {owner.user_id}" in str(caught.value)
    assert size(after, stack_id) == 2

    # the password is nowhere in Kiln's logs (at DEBUG) or its database file
    logs = password_kiln.stderr_path.read_text()
    assert "DEBUG" in logs and owner.password not in logs
    for path in Path(password_kiln.workdir).rglob("*.sqlite*"):
        assert owner.password.encode() not in path.read_bytes(), path
    after.stacks.delete(stack_id)
