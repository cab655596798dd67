"""Kiln-issued EC2 keypairs: random, encrypted at rest, found by access key, and gone
with their resource or their stack."""

from __future__ import annotations

import sqlalchemy as sa

from kiln.db import keypairs, stacks
from tests.unit.db.support import Tx, new_stack


def test_issued_keypair_is_found_and_its_secret_is_encrypted_at_rest(tx: Tx) -> None:
    with tx() as s:
        made = keypairs.create_keypair(s, project_id="p1", user_id="u1")
        other = keypairs.create_keypair(s, project_id="p1", user_id="u1")
    assert len(made.access_key) == 20 and len(made.secret) == 40
    assert made.access_key != other.access_key and made.secret != other.secret
    with tx() as s:
        found = keypairs.get_keypair(s, made.access_key)
        raw = s.execute(sa.text("SELECT secret FROM ec2_keypair WHERE access_key = :a"),
                        {"a": made.access_key}).scalar_one()
    assert found == made
    assert made.secret not in raw and raw.startswith("fernet1:")


def test_unknown_access_key_is_none(tx: Tx) -> None:
    with tx() as s:
        assert keypairs.get_keypair(s, "NOPE") is None


def test_keypairs_go_with_their_resource_and_with_their_stack(tx: Tx) -> None:
    stack = new_stack(tx)
    with tx() as s:
        server = keypairs.create_keypair(s, project_id="p1", user_id="u", stack_id=stack.id,
                                         resource_name="server")
        handle = keypairs.create_keypair(s, project_id="p1", user_id="u", stack_id=stack.id,
                                         resource_name="handle")
        operator = keypairs.create_keypair(s, project_id="p1", user_id="u")
    with tx() as s:
        assert keypairs.delete_keypairs(s, stack_id=stack.id, resource_name="server") == 1
        assert [k.access_key for k in keypairs.list_keypairs(s, stack_id=stack.id)] == [
            handle.access_key]
        assert keypairs.get_keypair(s, server.access_key) is None
    with tx() as s:
        stacks.soft_delete_stack(s, stack.id)
    with tx() as s:
        assert keypairs.get_keypair(s, handle.access_key) is None
        assert keypairs.get_keypair(s, operator.access_key) == operator
        assert keypairs.delete_keypair(s, operator.access_key)
        assert not keypairs.delete_keypair(s, operator.access_key)


def test_revocations_count_committed_deletes_only(tx: Tx) -> None:
    """What keypair caches watch: it moves once a transaction that deleted keypairs has
    committed (a cache emptied earlier could re-read the row before the commit)."""
    stack = new_stack(tx)
    with tx() as s:
        made = keypairs.create_keypair(s, project_id="p1", user_id="u", stack_id=stack.id,
                                       resource_name="server")
    start = keypairs.revocations()
    with tx() as s:
        keypairs.get_keypair(s, made.access_key)
    assert keypairs.revocations() == start                 # reads revoke nothing
    with tx() as s:
        keypairs.delete_keypair(s, made.access_key)
        assert keypairs.revocations() == start             # not before the commit
    after_one = keypairs.revocations()
    assert after_one > start
    with tx() as s:
        stacks.soft_delete_stack(s, stack.id)
    assert keypairs.revocations() > after_one
