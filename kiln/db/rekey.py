"""``kiln db update-params``: every secret at rest re-encrypted as the configuration says.

Heat's ``heat-manage update_params encrypt [previous_encryption_key]`` decrypts hidden
parameters and resource properties with the previous key and encrypts them with the
configured one. Kiln's command does that for everything it encrypts: each stored token
is decrypted with the configured key, a ``previous`` key or Heat's sample key (what an
older Kiln used by default), and written again with the configured key. Plaintext an
older Kiln left in a column that is now encrypted is encrypted on the way; hidden
parameters and properties follow ``encrypt_parameters_and_properties`` (set: encrypted,
as Heat's ``encrypt``; unset: decrypted, as its ``decrypt``).

It runs in one transaction: a token no key opens stops it with nothing changed, naming
the column. Every Kiln process on the database must be stopped first (as Heat asks of its
engines), then started with the new key.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from typing import Any, cast

import sqlalchemy as sa
from sqlalchemy.orm import Session

from kiln.conf import CONF
from kiln.db import crypt
from kiln.db.models import (
    Base,
    Ec2Keypair,
    Event,
    RawTemplate,
    Resource,
    ResourceData,
    UserCreds,
)

#: (table, column) holding one token (or NULL) in a text column
_TOKEN_COLUMNS: tuple[tuple[type[Base], str], ...] = (
    (Ec2Keypair, "secret"), (UserCreds, "trust_id"), (UserCreds, "password"))
#: (table, column) holding a JSON document sealed when encrypt_parameters_and_properties
_OPTIONAL_SEALED: tuple[tuple[type[Base], str], ...] = (
    (Resource, "properties_data"), (Event, "resource_properties"))


class RekeyFailed(Exception):
    """A stored secret could not be decrypted with any key given; nothing was changed."""


def reencrypt_all(s: Session, previous: tuple[str, ...] = ()) -> Counter[str]:
    """Re-encrypt every secret in the session's database; counts rows written by
    ``table.column``. The caller commits (or rolls back on RekeyFailed)."""
    crypt.use_previous_keys(previous)
    try:
        done: Counter[str] = Counter()
        for table in Base.metadata.sorted_tables:
            for column in table.columns:
                if isinstance(column.type, crypt.SealedJson | crypt.SealedText):
                    done[f"{table.name}.{column.name}"] += _rewrite(s, table, column.name,
                                                                    lambda v: v)
        for model, name in _TOKEN_COLUMNS:
            done[f"{model.__tablename__}.{name}"] += _rewrite(
                s, _table(model), name, lambda v: None if v is None else crypt.reencrypt(v))
        done["resource_data.value"] += _rewrite(
            s, _table(ResourceData), "value", crypt.reencrypt,
            where=_table(ResourceData).c.redact.is_(True))
        for model, name in _OPTIONAL_SEALED:
            done[f"{model.__tablename__}.{name}"] += _rewrite(s, _table(model), name,
                                                              _properties)
        done["raw_template.environment"] += _rewrite(s, _table(RawTemplate), "environment",
                                                     _environment)
        return +done
    finally:
        crypt.use_previous_keys(())


def _table(model: type[Base]) -> sa.Table:
    return cast(sa.Table, model.__table__)


def _properties(stored: Any) -> Any:
    """Sealed as the write path seals properties (or plain, the option unset)."""
    return crypt.seal(crypt.unseal(stored))


def _environment(stored: Mapping[str, Any]) -> Any:
    env = dict(stored)
    names = list(env.get("encrypted_param_names") or [])
    if not names:
        return stored
    params = dict(env.get("parameters") or {})
    for name in names:
        if name in params:
            value = crypt.decrypt_value(params[name])
            params[name] = (crypt.encrypt_value(value)
                            if CONF.encrypt_parameters_and_properties else value)
    env["parameters"] = params
    if not CONF.encrypt_parameters_and_properties:
        env.pop("encrypted_param_names")
    return env


#: rows read and written at a time
_BATCH = 500


def _rewrite(s: Session, table: sa.Table, name: str, convert: Any,
             where: sa.ColumnElement[bool] | None = None) -> int:
    """Read ``table.name`` a batch at a time (through the column's type, so sealed
    columns come back plain) and write back ``convert(value)`` (sealed again with the
    configured key on the way in)."""
    (pk,) = table.primary_key.columns
    column = table.c[name]
    stmt = sa.select(pk, column).where(column.is_not(None)).order_by(pk)
    if where is not None:
        stmt = stmt.where(where)
    update = (sa.update(table).where(pk == sa.bindparam("_pk"))
              .values({name: sa.bindparam("_value", type_=column.type)}))
    conn = s.connection()
    written, last = 0, None
    while True:
        page = stmt if last is None else stmt.where(pk > last)
        try:
            rows = conn.execute(page.limit(_BATCH)).all()
            batch = [{"_pk": key, "_value": convert(value)} for key, value in rows]
        except crypt.DecryptionFailed as exc:
            raise RekeyFailed(f"{table.name}.{name}: {exc}; pass the key it was encrypted "
                              "with as --previous-encryption-key") from None
        if not rows:
            return written
        conn.execute(update, batch)
        written += len(batch)
        last = rows[-1][0]
