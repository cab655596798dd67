"""The few columns an agent's poll reads: the stack found as ``_find`` finds it (an id
within the caller's scope, else a name of the project; deleted stacks never), the
current row of the resource (not a replaced one) and the owner's type when asked."""

from __future__ import annotations

import asyncio
import datetime as dt
import sqlite3
from typing import Any

import sqlalchemy as sa

from kiln.db import agent_view, resources, stacks
from kiln.db.agent_view import AgentView
from kiln.db.facade import Database
from kiln.db.records import NewResource
from tests.unit.db.support import Tx, new_stack


def _read(tx: Tx, key: str, *, scope: str | None = "p1", project: str = "p1",
          resource: str = "server", owner: str | None = None) -> agent_view.AgentView:
    with tx() as s:
        return agent_view.read_agent_view(s, key=key, scope=scope, project_id=project,
                                          resource_name=resource, owner=owner)


def test_by_name_or_id_within_the_project(tx: Tx) -> None:
    st = new_stack(tx, "web")
    with tx() as s:
        (old,) = resources.create_resources(s, [NewResource(
            st.id, st.id, "server", "OS::Heat::DeployedServer", metadata={"v": 1},
            properties_data={"secret": "never read"})])
        (new,) = resources.create_resources(s, [NewResource(
            st.id, st.id, "server", "OS::Heat::DeployedServer", metadata={"v": 2},
            replaces=old.id)])
        resources.update_resource(s, old.id, {"replaced_by": new.id})
        resources.create_resources(s, [NewResource(st.id, st.id, "key",
                                                   "AWS::IAM::AccessKey")])
    for key in ("web", st.id):
        view = _read(tx, key)
        assert view.stack is not None and view.stack.id == st.id
        assert view.resource is not None and view.resource.metadata == {"v": 2}
        assert view.owner_type is None
    assert _read(tx, st.id, scope=None, project="other").stack is not None   # admin
    assert _read(tx, st.id, scope="other", project="other").stack is None
    assert _read(tx, "web", project="other").stack is None
    missing = _read(tx, "web", resource="nothing")
    assert missing.stack is not None and missing.resource is None
    assert _read(tx, "web", owner="key").owner_type == "AWS::IAM::AccessKey"
    assert _read(tx, "web", owner="server").owner_type is None     # itself: not asked
    with tx() as s:
        stacks.soft_delete_stack(s, st.id)
    assert _read(tx, "web").stack is None
    assert _read(tx, st.id).stack is None


async def test_inline_read_equals_the_session_read(tx: Tx, db: Database) -> None:
    """On SQLite ``Database.read_now`` runs the read on the driver's connection, its
    values converted by the columns' own processors: the same view, to the last field
    (datetimes, JSON metadata, the stack's record), as through a Session."""
    st = new_stack(tx, "web")
    with tx() as s:
        resources.create_resources(s, [
            NewResource(st.id, st.id, "server", "OS::Heat::DeployedServer",
                        metadata={"deployments": [{"name": "d", "inputs": [1, "x"]}]}),
            NewResource(st.id, st.id, "key", "AWS::IAM::AccessKey")])
    for key, scope, owner in (("web", "p1", None), (st.id, "p1", "key"), (st.id, None, None),
                              ("web", "other", None), ("missing", "p1", None)):
        kwargs: dict[str, Any] = {"key": key, "scope": scope, "project_id": scope or "p1",
                                  "resource_name": "server", "owner": owner}
        inline_view = await db.read_now(agent_view.agent_view_rows, **kwargs)
        assert inline_view == _read(tx, key, scope=scope, project=scope or "p1", owner=owner)
    view = await db.read_now(agent_view.agent_view_rows, **kwargs | {"key": "web"})
    assert view.resource is not None and isinstance(view.resource.created_at, dt.datetime)


async def test_inline_read_waits_for_no_lock(engine: sa.Engine, tx: Tx, db: Database) -> None:
    """A read that would wait for a lock goes to the reader pool (which waits as every
    read does) instead of blocking the event loop: here the file is locked exclusively,
    so the inline read misses at once and the pooled one waits until it is released."""
    st = new_stack(tx, "web")
    expected = AgentView(_read(tx, "web").stack)
    engine.dispose()   # the pool's idle connections would keep the lock below from us
    locker = sqlite3.connect(str(engine.url.database), isolation_level=None)
    locker.execute("PRAGMA locking_mode=EXCLUSIVE")
    locker.execute("BEGIN EXCLUSIVE")
    reading = asyncio.ensure_future(db.read_now(
        agent_view.agent_view_rows, key=st.id, scope="p1", project_id="p1",
        resource_name="server"))
    await asyncio.sleep(0)   # the inline attempt runs now, and misses
    assert not reading.done()
    locker.execute("COMMIT")
    locker.close()
    assert await asyncio.wait_for(reading, 60) == expected
    # and reads go on once the lock is gone
    assert await db.read_now(agent_view.agent_view_rows, key="web", scope="p1",
                             project_id="p1", resource_name="server") == expected
