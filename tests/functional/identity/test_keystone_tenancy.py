"""The tenancy walk of tests/functional/api/test_api_tenancy.py with real tokens: the
project comes from a Keystone token, and a member of another project reaches none of
alice's objects by any route (each answers as for an object that does not exist)."""

from __future__ import annotations

import httpx

from tests.functional.api.test_api_tenancy import (
    SMALL,
    alice_state,
    created,
    make_objects,
    walk_every_route,
)
from tests.functional.identity.conftest import token_client
from tests.support.keystone import Account, KeystoneProcess
from tests.support.server import KilnProcess


def test_a_member_of_another_project_reaches_nothing_by_any_route(
        member_http: httpx.Client, member: Account, other_http: httpx.Client,
        other: Account) -> None:
    objects = make_objects(member_http, member.project_id)
    before = alice_state(member_http, objects, member.project_id)
    assert walk_every_route(other_http, other.project_id, objects) > 60
    assert alice_state(member_http, objects, member.project_id) == before


def test_an_admin_lists_every_project_only_when_asked(
        ks_kiln: KilnProcess, keystone: KeystoneProcess, member_http: httpx.Client,
        member: Account, other: Account) -> None:
    created(member_http, member.project_id, "listed", SMALL)
    admin = keystone.account(("admin",), prefix="admin")
    with token_client(ks_kiln, admin) as http:
        own = http.get(f"/v1/{admin.project_id}/stacks").json()["stacks"]
        assert [s["stack_name"] for s in own] == []
        every = http.get(f"/v1/{admin.project_id}/stacks",
                         params={"global_tenant": "true"}).json()["stacks"]
        found = {(s["stack_name"], s["project"]) for s in every}
        assert ("listed", member.project_id) in found
    with token_client(ks_kiln, other) as http:
        refused = http.get(f"/v1/{other.project_id}/stacks", params={"global_tenant": "true"})
        assert refused.status_code == 403
        assert refused.json()["error"]["message"] == (
            "You are not authorized to use stacks:global_index.")
