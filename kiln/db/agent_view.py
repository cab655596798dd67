"""One resource as a server's agent polls it, in as few statements as it takes.

Every server polls its metadata every few seconds (os-collect-config, cfn-hup): at a
cloud's scale hundreds of reads a second, each naming a stack (by id or name) and one
resource. The general reads serve that badly: ``get_stack`` also reads the stack's
tags, and ``get_resource_by_name`` decrypts the resource's properties and every secret
in its data, none of which an agent is shown. This module reads only the columns an
agent's answer needs, with statements built once (keying and compiling a fresh
statement costs more than running it on SQLite), and, when the caller is a keypair
issued to another resource of the stack, that resource's type (whether it may read this
one depends on it). The lookup rules are ``ServiceCore.find``'s.
"""

from __future__ import annotations

import datetime as dt
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, cast

import sqlalchemy as sa
from sqlalchemy.orm import Session

from kiln.db.models import Resource, Stack
from kiln.db.records import StackRecord, merged_metadata
from kiln.db.signals import OF_RESOURCE
from kiln.db.sqlite_fast import Rows, SessionRows
from kiln.db.stacks import stack_record

_RES = cast(sa.Table, Resource.__table__)
_STACK = cast(sa.Table, Stack.__table__)


@dataclass(frozen=True, slots=True)
class AgentRow:
    """The columns of a resource an agent is shown."""

    name: str
    type: str
    physical_resource_id: str | None
    action: str
    status: str
    status_reason: str
    metadata: Any
    created_at: dt.datetime
    updated_at: dt.datetime | None
    #: the signals the resource keeps (:mod:`kiln.db.signals`), shown in its metadata
    signals: Mapping[str, Any] = field(default_factory=dict)

    def shown_metadata(self) -> Any:
        return merged_metadata(self.metadata, self.signals)


@dataclass(frozen=True, slots=True)
class AgentView:
    """What one poll read: the stack (None if not found; its record carries no tags),
    the resource (None if the stack has no such resource) and, when asked for, the type
    of the resource owning the caller's keypair (None if absent)."""

    stack: StackRecord | None
    resource: AgentRow | None = None
    owner_type: str | None = None


@lru_cache(maxsize=4)
def _stack_by_id(scoped: bool) -> sa.Select[Any]:
    stmt = sa.select(_STACK).where(_STACK.c.id == sa.bindparam("key"),
                                   _STACK.c.deleted_at.is_(None))
    if scoped:
        stmt = stmt.where(sa.or_(_STACK.c.project_id == sa.bindparam("scope"),
                                 _STACK.c.stack_user_project_id == sa.bindparam("scope")))
    return stmt.limit(1)


_STACK_BY_NAME = (
    sa.select(_STACK)
    .where(sa.or_(_STACK.c.project_id == sa.bindparam("project"),
                  _STACK.c.stack_user_project_id == sa.bindparam("project")),
           _STACK.c.name == sa.bindparam("key"), _STACK.c.deleted_at.is_(None))
    .order_by(_STACK.c.created_at, _STACK.c.id).limit(1))

_AGENT_COLUMNS = ("id", "name", "type", "physical_resource_id", "action", "status",
                  "status_reason", "rsrc_metadata", "created_at", "updated_at")

#: the current row of that name: one not replaced if any, newest first (as
#: ``get_resource_by_name``)
_RESOURCE = (
    sa.select(*(_RES.c[k] for k in _AGENT_COLUMNS))
    .where(_RES.c.stack_id == sa.bindparam("stack_id"), _RES.c.name == sa.bindparam("name"))
    .order_by(sa.case((_RES.c.replaced_by.is_(None), 0), else_=1), _RES.c.id.desc())
    .limit(1))

_OWNER_TYPE = (
    sa.select(_RES.c.type)
    .where(_RES.c.stack_id == sa.bindparam("stack_id"), _RES.c.name == sa.bindparam("name"))
    .order_by(sa.case((_RES.c.replaced_by.is_(None), 0), else_=1), _RES.c.id.desc())
    .limit(1))


def _uuid_like(key: str) -> bool:
    try:
        uuid.UUID(key)
    except ValueError:
        return False
    return True


def read_agent_view(s: Session, *, key: str, scope: str | None, project_id: str,
                    resource_name: str, owner: str | None = None) -> AgentView:
    """The stack ``key`` (an id, within ``scope`` unless None, else a name of
    ``project_id``), its resource ``resource_name`` and, if ``owner`` is another
    resource's name, that resource's type."""
    return agent_view_rows(SessionRows(s), key=key, scope=scope, project_id=project_id,
                           resource_name=resource_name, owner=owner)


def agent_view_rows(rows: Rows, *, key: str, scope: str | None, project_id: str,
                    resource_name: str, owner: str | None = None) -> AgentView:
    """:func:`read_agent_view` through :class:`kiln.db.sqlite_fast.Rows`
    (``Database.read_now`` runs it inline on SQLite)."""
    by_id = {"key": key} if scope is None else {"key": key, "scope": scope}
    by_name = {"key": key, "project": project_id}
    # an id first, as _find; but a key that is no UUID (what the cfn collector sends: the
    # stack's name) is tried as a name first, which saves a statement on every poll
    order = ((_stack_by_id(scope is not None), by_id), (_STACK_BY_NAME, by_name))
    if not _uuid_like(key):
        order = order[::-1]
    row = None
    for stmt, params in order:
        row = rows.first(stmt, params)
        if row is not None:
            break
    if row is None:
        return AgentView(None)
    stack = stack_record(row)
    found = rows.first(_RESOURCE, {"stack_id": stack.id, "name": resource_name})
    resource = None if found is None else AgentRow(
        name=found["name"], type=found["type"],
        physical_resource_id=found["physical_resource_id"], action=found["action"],
        status=found["status"], status_reason=found["status_reason"],
        metadata=found["rsrc_metadata"], created_at=found["created_at"],
        updated_at=found["updated_at"],
        signals={r["key"]: r["entry"]
                 for r in rows.all(OF_RESOURCE, {"resource_id": found["id"]})})
    owner_type = None
    if owner is not None and owner != resource_name:
        owned = rows.first(_OWNER_TYPE, {"stack_id": stack.id, "name": owner})
        owner_type = None if owned is None else owned["type"]
    return AgentView(stack, resource, owner_type)
