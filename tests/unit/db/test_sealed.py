"""Columns holding copies of secrets are encrypted at rest, read back plain, still read
what an older Kiln wrote (plaintext, Heat's sample key), and ``reencrypt_all`` moves
every secret to a new key (``kiln db update-params``)."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
import sqlalchemy as sa

from kiln.conf import CONF
from kiln.db import crypt, keypairs, rekey, resources, snapshots, software, stacks
from kiln.db.models import Base
from kiln.db.records import NewResource, NewStack
from tests.unit.db.support import Tx, new_stack

SECRET = "s3cr3t-Value-9f8e7d"


@pytest.fixture
def key_a() -> Iterator[str]:
    CONF.set_override("auth_encryption_key", "key-A-" + "a" * 26)
    yield "key-A-" + "a" * 26
    CONF.clear_override("auth_encryption_key")


def _raw_values(engine: sa.Engine) -> list[tuple[str, str, str]]:
    """Every non-NULL value of every column of every table, as the database holds it."""
    found = []
    with engine.connect() as conn:
        for table in Base.metadata.sorted_tables:
            quote = engine.dialect.identifier_preparer.quote
            cols = ", ".join(quote(c.name) for c in table.columns)
            for row in conn.execute(sa.text(f"SELECT {cols} FROM {quote(table.name)}")):
                for column, value in zip(table.columns, row, strict=True):
                    if value is not None:
                        found.append((table.name, column.name, str(value)))
    return found


def _store_secrets(tx: Tx) -> tuple[str, str]:
    st = new_stack(tx, environment={"parameters": {"pw": SECRET}}, hidden_params=["pw"])
    with tx() as s:
        stacks.update_stack(s, st.id, {"outputs": [{"output_key": "pw",
                                                    "output_value": SECRET}]})
        snap = snapshots.create_snapshot(s, st.id, "p1", "snap",
                                         data={"outputs": {"pw": SECRET}})
        (res,) = resources.create_resources(s, [NewResource(
            stack_id=st.id, root_stack_id=st.id, name="srv", type="T", action="INIT",
            status="COMPLETE", metadata={"password": SECRET},
            properties_data={"p": SECRET})])
        resources.set_resource_data(s, res.id, "value", SECRET, redact=True)
        cfg = software.create_software_config(s, "p1", name="c", group="script",
                                              config={"inputs": [{"value": SECRET}]})
        software.create_software_deployment(s, "p1", config_id=cfg.id, server_id="x",
                                            action="CREATE", status="COMPLETE",
                                            input_values={"pw": SECRET},
                                            output_values={"out": SECRET})
        keypairs.create_keypair(s, project_id="p1", user_id="u", secret=SECRET + "-ec2")
    return st.id, snap.id


def test_no_column_holds_a_secret_in_plain_text(tx: Tx, engine: sa.Engine) -> None:
    stack_id, snap_id = _store_secrets(tx)
    leaks = [(t, c) for t, c, v in _raw_values(engine) if SECRET in v]
    assert leaks == []
    with tx() as s:
        st = stacks.get_stack(s, stack_id)
        assert st is not None and st.outputs[0]["output_value"] == SECRET
        snap = snapshots.get_snapshot(s, snap_id)
        assert snap is not None and snap.data == {"outputs": {"pw": SECRET}}
        (res,) = resources.list_resources(s, stack_id)
        assert res.metadata == {"password": SECRET} and res.data == {"value": SECRET}
        (dep,) = software.list_software_deployments(s, "p1")
        assert dep.input_values == {"pw": SECRET}
        assert dep.output_values == {"out": SECRET}
        cfg = software.get_software_config(s, dep.config_id)
        assert cfg is not None and cfg.config == {"inputs": [{"value": SECRET}]}


def test_plaintext_rows_of_an_older_kiln_still_read(tx: Tx, engine: sa.Engine) -> None:
    st = new_stack(tx)
    outputs = [{"output_key": "o", "output_value": SECRET}]
    with engine.begin() as conn:   # as an older Kiln wrote it: plain JSON
        conn.execute(sa.text("UPDATE stack SET outputs = :o WHERE id = :i"),
                     {"o": json.dumps(outputs), "i": st.id})
    with tx() as s:
        got = stacks.get_stack(s, st.id)
        assert got is not None and got.outputs == outputs


def test_tokens_made_with_heats_sample_key_still_read(tx: Tx, key_a: str) -> None:
    st = new_stack(tx)
    CONF.set_override("auth_encryption_key", crypt.LEGACY_DEFAULT_KEY)
    with tx() as s:
        stacks.update_stack(s, st.id, {"outputs": [{"output_value": SECRET}]})
    CONF.set_override("auth_encryption_key", key_a)
    with tx() as s:
        got = stacks.get_stack(s, st.id)
        assert got is not None and got.outputs == [{"output_value": SECRET}]


def test_reencrypt_all_moves_every_secret_to_the_configured_key(
        tx: Tx, engine: sa.Engine, key_a: str) -> None:
    stack_id, _ = _store_secrets(tx)
    tokens_before = _tokens(engine)
    assert tokens_before
    CONF.set_override("auth_encryption_key", "key-B-" + "b" * 26)
    with tx() as s, pytest.raises(crypt.DecryptionFailed):
        stacks.get_stack(s, stack_id)       # key B alone cannot read what key A wrote
    with tx() as s:
        with pytest.raises(rekey.RekeyFailed, match="previous-encryption-key"):
            rekey.reencrypt_all(s)          # nor can the command without key A
        s.rollback()
    with tx() as s:
        done = rekey.reencrypt_all(s, (key_a,))
    assert done["stack.outputs"] == 1 and done["ec2_keypair.secret"] == 1
    assert done["resource_data.value"] == 1 and done["raw_template.environment"] == 1
    after = _tokens(engine)
    assert len(after) == len(tokens_before)
    b = crypt._fernet("key-B-" + "b" * 26)
    for token in after:                      # every token is now key B's
        b.decrypt(token[len(crypt.PREFIX):].encode())
    assert not any(SECRET in v for _, _, v in _raw_values(engine))
    with tx() as s:
        st = stacks.get_stack(s, stack_id)
        assert st is not None and st.outputs[0]["output_value"] == SECRET
        raw = stacks.get_raw_template(s, st.raw_template_id)
        assert raw.environment["parameters"]["pw"] == SECRET


def _tokens(engine: sa.Engine) -> list[str]:
    out = []
    for _, _, value in _raw_values(engine):
        start = value.find(crypt.PREFIX)
        while start != -1:
            end = start + len(crypt.PREFIX)
            while end < len(value) and (value[end].isalnum() or value[end] in "-_="):
                end += 1
            out.append(value[start:end])
            start = value.find(crypt.PREFIX, end)
    return out


def test_a_new_stack_row_with_no_outputs_stays_null(tx: Tx, engine: sa.Engine) -> None:
    with tx() as s:
        st = stacks.create_stack(s, NewStack(name="n", project_id="p", template={}))
    with engine.connect() as conn:
        stored = conn.execute(sa.text("SELECT outputs FROM stack WHERE id = :i"),
                              {"i": st.id}).scalar()
    assert stored is None


def test_reencrypt_all_moves_what_heats_sample_key_encrypted(
        tx: Tx, engine: sa.Engine, key_a: str) -> None:
    # an older Kiln with no key configured encrypted with Heat's sample key
    CONF.set_override("auth_encryption_key", crypt.LEGACY_DEFAULT_KEY)
    _store_secrets(tx)
    CONF.set_override("auth_encryption_key", key_a)
    with tx() as s:
        done = rekey.reencrypt_all(s)       # no --previous-encryption-key needed
    assert done["ec2_keypair.secret"] == 1
    a = crypt._fernet(key_a)
    for token in _tokens(engine):
        a.decrypt(token[len(crypt.PREFIX):].encode())


def test_a_document_shaped_like_a_sealed_one_reads_back_as_written(tx: Tx) -> None:
    st = new_stack(tx)
    shaped = {crypt.SEALED_KEY: "fernet1:not-a-token"}   # a user's metadata, say
    with tx() as s:
        snap = snapshots.create_snapshot(s, st.id, "p1", "x", data=shaped)
    with tx() as s:
        got = snapshots.get_snapshot(s, snap.id)
        assert got is not None and got.data == shaped
