"""The owner's delegated credentials of each top-level stack (table ``user_creds``).

Written once at create, read when Kiln acts for the owner without a request of theirs,
deleted with the stack. The trust id and password are encrypted at rest (``crypt``)
and never leave this module but in a :class:`UserCredsRecord`.
"""

from __future__ import annotations

from sqlalchemy.orm import Session

from kiln.db import crypt
from kiln.db.models import UserCreds
from kiln.db.records import UserCredsRecord


def _sealed(value: str | None) -> str | None:
    return crypt.encrypt(value) if value is not None else None


def store_user_creds(s: Session, creds: UserCredsRecord) -> None:
    s.merge(UserCreds(stack_id=creds.stack_id, method=creds.method,
                      trust_id=_sealed(creds.trust_id),
                      trustor_user_id=creds.trustor_user_id, project_id=creds.project_id,
                      username=creds.username, password=_sealed(creds.password)))
    s.flush()


def get_user_creds(s: Session, stack_id: str) -> UserCredsRecord | None:
    row = s.get(UserCreds, stack_id)
    if row is None:
        return None
    return UserCredsRecord(
        stack_id=row.stack_id, method=row.method, trustor_user_id=row.trustor_user_id,
        project_id=row.project_id,
        trust_id=crypt.decrypt(row.trust_id) if row.trust_id is not None else None,
        username=row.username,
        password=crypt.decrypt(row.password) if row.password is not None else None)


def delete_user_creds(s: Session, stack_id: str) -> bool:
    row = s.get(UserCreds, stack_id)
    if row is None:
        return False
    s.delete(row)
    s.flush()
    return True
