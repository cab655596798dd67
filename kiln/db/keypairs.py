"""EC2 keypairs Kiln issued (table ``ec2_keypair``); secrets encrypted at rest.

A keypair is created with a fresh random access key and secret, read back by access key
on every signed request (the caller caches), and deleted with the resource it was issued
for, or with its whole stack. Callers that cache keypairs watch :func:`revocations`: it
grows once a transaction of this process that deleted keypairs has committed, so a cache
emptied when it moves cannot keep a keypair this process deleted (other processes' caches
learn of it when their entries expire).
"""

from __future__ import annotations

import itertools
import secrets

import sqlalchemy as sa
from sqlalchemy.orm import Session

from kiln.db import crypt
from kiln.db.models import Ec2Keypair
from kiln.db.records import KeypairRecord


def new_access_key() -> str:
    """20 upper-case hex characters, AWS's access key length."""
    return secrets.token_hex(10).upper()


def new_secret() -> str:
    """40 characters, AWS's secret length, URL-safe so it survives any config file."""
    return secrets.token_urlsafe(30)


def create_keypair(s: Session, *, project_id: str, user_id: str,
                   stack_id: str | None = None, resource_name: str | None = None,
                   access_key: str | None = None, secret: str | None = None
                   ) -> KeypairRecord:
    row = Ec2Keypair(access_key=access_key or new_access_key(),
                     secret=crypt.encrypt(secret or new_secret()), project_id=project_id,
                     user_id=user_id, stack_id=stack_id, resource_name=resource_name)
    s.add(row)
    s.flush()
    return _record(row)


_REVOKED = "kiln_keypairs_revoked"
_revocations = itertools.count(1)
_generation = 0


def revocations() -> int:
    """How many committed transactions of this process have deleted keypairs."""
    return _generation


def note_revoked(s: Session) -> None:
    """Mark the session's transaction as deleting keypairs (counted once it commits)."""
    s.info[_REVOKED] = True


@sa.event.listens_for(Session, "after_commit")
def _after_commit(s: Session) -> None:
    global _generation
    if s.info.pop(_REVOKED, False):
        _generation = next(_revocations)


@sa.event.listens_for(Session, "after_rollback")
def _after_rollback(s: Session) -> None:
    s.info.pop(_REVOKED, None)


def get_keypair(s: Session, access_key: str) -> KeypairRecord | None:
    row = s.get(Ec2Keypair, access_key)
    return _record(row) if row is not None else None


def list_keypairs(s: Session, *, stack_id: str,
                  resource_name: str | None = None) -> list[KeypairRecord]:
    q = sa.select(Ec2Keypair).where(Ec2Keypair.stack_id == stack_id)
    if resource_name is not None:
        q = q.where(Ec2Keypair.resource_name == resource_name)
    return [_record(r) for r in s.scalars(q.order_by(Ec2Keypair.created_at))]


def issued_keypairs(s: Session, *, project_id: str | None = None) -> list[dict[str, str | None]]:
    """What an operator may see of the issued keypairs: everything but the secret, which
    is never decrypted for a listing. Oldest first."""
    q = sa.select(Ec2Keypair.access_key, Ec2Keypair.project_id, Ec2Keypair.user_id,
                  Ec2Keypair.stack_id, Ec2Keypair.resource_name, Ec2Keypair.created_at)
    if project_id is not None:
        q = q.where(Ec2Keypair.project_id == project_id)
    return [{"access": row.access_key, "project_id": row.project_id, "user_id": row.user_id,
             "stack_id": row.stack_id, "resource_name": row.resource_name,
             "created_at": row.created_at.isoformat()}
            for row in s.execute(q.order_by(Ec2Keypair.created_at, Ec2Keypair.access_key))]


def delete_keypair(s: Session, access_key: str) -> bool:
    note_revoked(s)
    result = s.execute(sa.delete(Ec2Keypair).where(Ec2Keypair.access_key == access_key))
    return bool(result.rowcount)  # type: ignore[attr-defined]


def delete_keypairs(s: Session, *, stack_id: str, resource_name: str | None = None) -> int:
    note_revoked(s)
    q = sa.delete(Ec2Keypair).where(Ec2Keypair.stack_id == stack_id)
    if resource_name is not None:
        q = q.where(Ec2Keypair.resource_name == resource_name)
    return int(s.execute(q).rowcount)  # type: ignore[attr-defined]


def _record(row: Ec2Keypair) -> KeypairRecord:
    return KeypairRecord(access_key=row.access_key, secret=crypt.decrypt(row.secret),
                         project_id=row.project_id, user_id=row.user_id,
                         stack_id=row.stack_id, resource_name=row.resource_name)
