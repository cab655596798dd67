"""A stack's delegated credentials: kept per top-level stack, secrets encrypted at rest,
hidden from repr, and gone when deleted."""

from __future__ import annotations

import sqlalchemy as sa

from kiln.db import user_creds
from kiln.db.records import UserCredsRecord
from tests.unit.db.support import Tx, new_stack


def test_a_trust_is_kept_encrypted_and_read_back(tx: Tx) -> None:
    stack = new_stack(tx)
    creds = UserCredsRecord(stack_id=stack.id, method="trusts", trustor_user_id="u1",
                            project_id="p1", trust_id="0123456789abcdef0123456789abcdef",
                            username="alice")
    with tx() as s:
        user_creds.store_user_creds(s, creds)
    with tx() as s:
        assert user_creds.get_user_creds(s, stack.id) == creds
        raw = s.execute(sa.text("SELECT trust_id, password FROM user_creds "
                                "WHERE stack_id = :s"), {"s": stack.id}).one()
    assert raw[0].startswith("fernet1:") and creds.trust_id not in raw[0]
    assert raw[1] is None
    assert "0123456789abcdef" not in repr(creds)


def test_a_password_is_encrypted_too_and_deleting_forgets_everything(tx: Tx) -> None:
    stack = new_stack(tx)
    creds = UserCredsRecord(stack_id=stack.id, method="password", trustor_user_id="u1",
                            project_id="p1", username="alice", password="s3cret-pw")
    with tx() as s:
        user_creds.store_user_creds(s, creds)
        raw = s.execute(sa.text("SELECT password FROM user_creds")).scalar_one()
    assert "s3cret-pw" not in raw and "s3cret-pw" not in repr(creds)
    with tx() as s:
        assert user_creds.delete_user_creds(s, stack.id) is True
    with tx() as s:
        assert user_creds.get_user_creds(s, stack.id) is None
        assert user_creds.delete_user_creds(s, stack.id) is False
