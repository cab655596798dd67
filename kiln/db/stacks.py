"""Stacks, their raw templates and tags.

Names are unique per project among live (not soft-deleted) stacks, nested ones included,
as in Heat. A soft-deleted stack keeps its row (``show_deleted`` lists it) but loses its
resources and lock.
"""

from __future__ import annotations

import datetime as dt
import uuid as uuidlib
from collections import defaultdict
from collections.abc import Mapping, Sequence
from functools import lru_cache
from typing import Any

import sqlalchemy as sa
from sqlalchemy.orm import Session

from kiln import errors
from kiln.conf import CONF
from kiln.db import _query, crypt, keypairs
from kiln.db.models import (
    ChangeCounter,
    Ec2Keypair,
    RawTemplate,
    Resource,
    Stack,
    StackTag,
    utcnow,
)
from kiln.db.records import (
    NewStack,
    RawTemplateRecord,
    StackQuery,
    StackRecord,
    StackValues,
)

#: Heat's sort key names (GET /stacks ?sort_keys=) → columns.
SORT_KEYS = {
    "stack_name": Stack.name,
    "stack_status": Stack.status,
    "creation_time": Stack.created_at,
    "updated_time": Stack.updated_at,
}
#: Heat's filter names (GET /stacks ?tenant=) that differ from Kiln's column names.
FILTER_ALIASES = {"tenant": "project_id"}
_STACK_FIELDS = [c.key for c in Stack.__table__.columns]


# -- raw templates --------------------------------------------------------------------------

def create_raw_template(s: Session, template: Mapping[str, Any], environment: Mapping[str, Any],
                        files: Mapping[str, str], hidden_params: Sequence[str] = ()) -> int:
    row = RawTemplate(template=dict(template), environment=_encrypt_env(environment,
                                                                        hidden_params),
                      files=dict(files))
    s.add(row)
    s.flush()
    return row.id


def get_raw_template(s: Session, template_id: int) -> RawTemplateRecord:
    row = s.get(RawTemplate, template_id)
    if row is None:
        raise errors.EntityNotFound(f"The Raw Template ({template_id}) could not be found.")
    return RawTemplateRecord(id=row.id, template=row.template,
                             environment=decrypt_env(row.environment), files=row.files)


def delete_raw_template(s: Session, template_id: int) -> None:
    s.execute(sa.delete(RawTemplate).where(RawTemplate.id == template_id))


def _encrypt_env(environment: Mapping[str, Any], hidden: Sequence[str]) -> dict[str, Any]:
    env = dict(environment)
    params = dict(env.get("parameters") or {})
    names = [n for n in hidden if n in params]
    if CONF.encrypt_parameters_and_properties and names:
        for name in names:
            params[name] = crypt.encrypt_value(params[name])
        env["parameters"] = params
        env["encrypted_param_names"] = sorted(set(env.get("encrypted_param_names") or [])
                                              | set(names))
    return env


def decrypt_env(stored: Mapping[str, Any]) -> dict[str, Any]:
    env = dict(stored)
    names = env.get("encrypted_param_names") or []
    if names:
        params = dict(env.get("parameters") or {})
        for name in names:
            if name in params:
                params[name] = crypt.decrypt_value(params[name])
        env["parameters"] = params
    return env


# -- change counter -------------------------------------------------------------------------

_BUMP = (sa.update(ChangeCounter).where(ChangeCounter.name == "stacks")
         .values(value=ChangeCounter.value + 1))
_GENERATION = sa.select(ChangeCounter.value).where(ChangeCounter.name == "stacks")


def _changed(s: Session) -> None:
    """Bump the ``stacks`` counter in the caller's transaction. Every function here that
    writes a stack or tag row calls it before its first write, so what a listing shows
    cannot change without the counter changing (and, on the servers, every such
    transaction takes the counter's row lock first, in the same order)."""
    s.execute(_BUMP)


def stacks_generation(s: Session) -> int | None:
    """The ``stacks`` change counter; None on a database without it (then nothing may be
    cached)."""
    value = s.connection().execute(_GENERATION).scalar()
    return None if value is None else int(value)


# -- stacks ---------------------------------------------------------------------------------

def stack_record(row: Mapping[Any, Any], tags: Sequence[str] = ()) -> StackRecord:
    """The record of a ``stack`` row read through Core (its tags are the caller's)."""
    return StackRecord(**{k: row[k] for k in _STACK_FIELDS}, tags=tuple(tags))


_record = stack_record


def _select(s: Session, stmt: sa.Select[Any]) -> list[StackRecord]:
    """Run a ``select(Stack)`` as Core rows (no ORM objects) and attach the tags."""
    rows = list(s.connection().execute(stmt).mappings())
    tags = _tags_of(s, [r["id"] for r in rows])
    return [_record(r, tags.get(r["id"], ())) for r in rows]


def _first(s: Session, stmt: sa.Select[Any]) -> StackRecord | None:
    found = _select(s, stmt.limit(1))
    return found[0] if found else None


def _tags_of(s: Session, stack_ids: Sequence[str]) -> dict[str, list[str]]:
    out: dict[str, list[str]] = defaultdict(list)
    for chunk in _chunks(stack_ids, 500):
        rows = s.execute(sa.select(StackTag.stack_id, StackTag.tag)
                         .where(StackTag.stack_id.in_(chunk))
                         .order_by(StackTag.stack_id, StackTag.position, StackTag.id))
        for sid, tag in rows:
            out[sid].append(tag)
    return out


def _chunks(items: Sequence[str], size: int) -> list[Sequence[str]]:
    return [items[i:i + size] for i in range(0, len(items), size)]


def _live_by_name(project_id: str, name: str) -> sa.Select[Any]:
    return (sa.select(Stack).where(Stack.project_id == project_id, Stack.name == name,
                                   Stack.deleted_at.is_(None)))


def create_stack(s: Session, new: NewStack) -> StackRecord:
    if s.execute(_live_by_name(new.project_id, new.name).limit(1)).first() is not None:
        raise errors.StackExists(f"The Stack ({new.name}) already exists.")
    stack_id = new.id or str(uuidlib.uuid4())
    _changed(s)
    raw_id = create_raw_template(s, new.template, new.environment, new.files, new.hidden_params)
    root = new.root_stack_id
    if root is None and new.owner_id is not None:
        owner_root = s.execute(sa.select(Stack.root_stack_id)
                               .where(Stack.id == new.owner_id)).scalar()
        root = owner_root or new.owner_id
    now = utcnow()
    row = Stack(id=stack_id, name=new.name, project_id=new.project_id, user_id=new.user_id,
                username=new.username, owner_id=new.owner_id, root_stack_id=root or stack_id,
                nested_depth=new.nested_depth, parent_resource_name=new.parent_resource_name,
                action=new.action, status=new.status, status_reason=new.status_reason,
                raw_template_id=raw_id, timeout=new.timeout,
                disable_rollback=new.disable_rollback, converge=False,
                stack_user_project_id=new.stack_user_project_id,
                current_traversal=new.current_traversal, engine_id=new.engine_id,
                lock_time=now if new.engine_id else None, created_at=now)
    s.add(row)
    s.flush()
    # Another process may have inserted the same name concurrently; the older one wins.
    rivals = s.execute(_live_by_name(new.project_id, new.name)
                       .where(Stack.id != stack_id)
                       .where(Stack.created_at <= now)).first()
    if rivals is not None:
        raise errors.StackExists(f"The Stack ({new.name}) already exists.")
    _write_tags(s, stack_id, new.tags)
    return _record({k: getattr(row, k) for k in _STACK_FIELDS}, new.tags)


@lru_cache(maxsize=4)
def _by_id(scoped: bool, show_deleted: bool) -> sa.Select[Any]:
    """``get_stack``'s statement, built once: every stack show, action and lock goes
    through it, and building and keying a fresh statement cost more than running it."""
    stmt = sa.select(Stack).where(Stack.id == sa.bindparam("stack_id"))
    if scoped:
        stmt = stmt.where(sa.or_(Stack.project_id == sa.bindparam("project_id"),
                                 Stack.stack_user_project_id == sa.bindparam("project_id")))
    if not show_deleted:
        stmt = stmt.where(Stack.deleted_at.is_(None))
    return stmt.limit(1)


_TAGS_OF_ONE = (sa.select(StackTag.tag).where(StackTag.stack_id == sa.bindparam("stack_id"))
                .order_by(StackTag.position, StackTag.id))


def get_stack(s: Session, stack_id: str, *, project_id: str | None = None,
              show_deleted: bool = False) -> StackRecord | None:
    conn = s.connection()
    params = {"stack_id": stack_id}
    if project_id is not None:
        params["project_id"] = project_id
    row = conn.execute(_by_id(project_id is not None, show_deleted), params).mappings().first()
    if row is None:
        return None
    return _record(row, conn.execute(_TAGS_OF_ONE, {"stack_id": stack_id}).scalars().all())


def get_stack_by_name(s: Session, project_id: str, name: str, *,
                      show_deleted: bool = False) -> StackRecord | None:
    """As Heat: the project's own stacks or those of its stack-user project; the earliest
    if several match (with ``show_deleted``, a live one before any deleted one)."""
    stmt = sa.select(Stack).where(sa.or_(Stack.project_id == project_id,
                                         Stack.stack_user_project_id == project_id),
                                  Stack.name == name)
    if not show_deleted:
        stmt = stmt.where(Stack.deleted_at.is_(None))
    stmt = stmt.order_by(sa.case((Stack.deleted_at.is_(None), 0), else_=1),
                         Stack.created_at, Stack.id)
    return _first(s, stmt)


def find_stack(s: Session, project_id: str, name_or_id: str) -> StackRecord | None:
    """Heat's identify_stack: a live stack of the project by id, else by name."""
    return (get_stack(s, name_or_id, project_id=project_id)
            or get_stack_by_name(s, project_id, name_or_id))


def _base_query(q: StackQuery, what: Any) -> sa.Select[Any]:
    stmt = sa.select(what)
    if not q.show_deleted:
        stmt = stmt.where(Stack.deleted_at.is_(None))
    if not q.show_nested:
        stmt = stmt.where(Stack.owner_id.is_(None))
    if q.project_id is not None:
        stmt = stmt.where(Stack.project_id == q.project_id)
    stmt = _query.exact_filters(stmt, Stack, {FILTER_ALIASES.get(k, k): v
                                              for k, v in q.filters.items()})
    if q.name_contains:
        stmt = stmt.where(Stack.name.icontains(q.name_contains, autoescape=True))

    def has(tag_values: Sequence[str]) -> sa.ColumnElement[bool]:
        return sa.exists().where(StackTag.stack_id == Stack.id, StackTag.tag.in_(tag_values))

    for tag in q.tags:
        stmt = stmt.where(has([tag]))
    if q.tags_any:
        stmt = stmt.where(has(q.tags_any))
    if q.not_tags:
        stmt = stmt.where(sa.not_(sa.and_(*[has([t]) for t in q.not_tags])))
    if q.not_tags_any:
        stmt = stmt.where(sa.not_(has(q.not_tags_any)))
    hidden = CONF.hidden_stack_tags if q.hidden_tags is None else q.hidden_tags
    if hidden and not q.show_hidden:
        stmt = stmt.where(sa.not_(has(list(hidden))))
    return stmt


def list_stacks(s: Session, q: StackQuery) -> list[StackRecord]:
    """Heat's GET /stacks: unknown sort keys are ignored; with no sort key the newest
    come first; ``id`` breaks ties so pages never overlap or skip."""
    keys, desc = _query.sort_order(q.sort_keys, q.sort_dir, SORT_KEYS, Stack.created_at,
                                   Stack.id)
    marker = s.get(Stack, q.marker) if q.marker else None
    return _select(s, _query.page(_base_query(q, Stack), keys, desc, marker, q.limit))


#: The columns GET /stacks shows, in the order ``list_stack_summaries`` returns them.
SUMMARY_COLUMNS = (Stack.id, Stack.name, Stack.project_id, Stack.username, Stack.owner_id,
                   Stack.action, Stack.status, Stack.status_reason,
                   Stack.stack_user_project_id, Stack.created_at, Stack.updated_at,
                   Stack.deleted_at)


def list_stack_summaries(s: Session, q: StackQuery) -> list[tuple[Any, ...]]:
    """``list_stacks`` for the list view: one plain tuple per stack (``SUMMARY_COLUMNS``
    then its tags), without the columns a listing never shows (outputs, JSON-decoded per
    row otherwise) and without building a full record per row."""
    keys, desc = _query.sort_order(q.sort_keys, q.sort_dir, SORT_KEYS, Stack.created_at,
                                   Stack.id)
    marker = s.get(Stack, q.marker) if q.marker else None
    stmt = _query.page(_base_query(q, Stack.id), keys, desc, marker, q.limit)
    conn = s.connection()
    rows = conn.execute(stmt.with_only_columns(*SUMMARY_COLUMNS)).all()
    if not rows:
        return []
    # The tags of exactly those stacks, found by the same query (a derived table, which
    # MySQL accepts with LIMIT) rather than by binding hundreds of ids.
    chosen = stmt.subquery()
    tags: dict[str, list[str]] = defaultdict(list)
    for sid, tag in conn.execute(sa.select(StackTag.stack_id, StackTag.tag)
                                 .where(StackTag.stack_id.in_(sa.select(chosen.c.id)))
                                 .order_by(StackTag.stack_id, StackTag.position,
                                           StackTag.id)):
        tags[sid].append(tag)
    if not tags:
        return [(*r, ()) for r in rows]
    return [(*r, tuple(tags.get(r[0], ()))) for r in rows]


def count_stacks(s: Session, q: StackQuery) -> int:
    stmt = _base_query(q, sa.func.count(Stack.id))
    return int(s.execute(stmt).scalar_one())


def count_project_stacks(s: Session, project_id: str, *, include_nested: bool = False) -> int:
    """Live stacks of a project. Heat's ``max_stacks_per_tenant`` check counts top-level
    stacks only (the default here); ``include_nested`` counts every live stack."""
    stmt = sa.select(sa.func.count(Stack.id)).where(Stack.project_id == project_id,
                                                    Stack.deleted_at.is_(None))
    if not include_nested:
        stmt = stmt.where(Stack.owner_id.is_(None))
    return int(s.execute(stmt).scalar_one())


def list_child_stacks(s: Session, owner_id: str) -> list[StackRecord]:
    return _select(s, sa.select(Stack).where(Stack.owner_id == owner_id,
                                             Stack.deleted_at.is_(None))
                   .order_by(Stack.created_at, Stack.id))


def list_tree_stacks(s: Session, root_stack_id: str) -> list[StackRecord]:
    return _select(s, sa.select(Stack).where(Stack.root_stack_id == root_stack_id,
                                             Stack.deleted_at.is_(None))
                   .order_by(Stack.nested_depth, Stack.created_at, Stack.id))


def update_stack(s: Session, stack_id: str, values: StackValues, *,
                 expected_traversal: str | None = None,
                 engine_id: str | None = None) -> bool:
    """Conditional update of a live stack. ``expected_traversal``: only if that traversal is
    still current (a newer operation supersedes an older one); ``engine_id``: only if this
    engine holds the lock. Returns whether the row was updated; raises EntityNotFound if
    the stack does not exist at all."""
    stmt = sa.update(Stack).where(Stack.id == stack_id, Stack.deleted_at.is_(None))
    if expected_traversal is not None:
        stmt = stmt.where(Stack.current_traversal == expected_traversal)
    if engine_id is not None:
        stmt = stmt.where(Stack.engine_id == engine_id)
    _changed(s)
    updated = s.execute(stmt.values(**values)).rowcount  # type: ignore[attr-defined]
    if not updated and s.get(Stack, stack_id) is None:
        raise errors.EntityNotFound(f"The Stack ({stack_id}) could not be found.")
    return bool(updated)


def set_stack_tags(s: Session, stack_id: str, tags: Sequence[str]) -> None:
    _changed(s)
    s.execute(sa.delete(StackTag).where(StackTag.stack_id == stack_id))
    _write_tags(s, stack_id, tags)


def _write_tags(s: Session, stack_id: str, tags: Sequence[str]) -> None:
    if tags:
        s.execute(sa.insert(StackTag), [{"stack_id": stack_id, "tag": t, "position": i}
                                        for i, t in enumerate(tags)])


def soft_delete_stack(s: Session, stack_id: str) -> None:
    """The stack row stays (``show_deleted``); its resources, lock and the EC2 keypairs
    issued for its resources do not (a signal URL of a deleted stack stops working)."""
    if s.get(Stack, stack_id) is None:
        raise errors.EntityNotFound(f"The Stack ({stack_id}) could not be found.")
    _changed(s)
    s.execute(sa.delete(Resource).where(Resource.stack_id == stack_id))
    keypairs.note_revoked(s)
    s.execute(sa.delete(Ec2Keypair).where(Ec2Keypair.stack_id == stack_id))
    s.execute(sa.update(Stack).where(Stack.id == stack_id)
              .values(deleted_at=utcnow(), engine_id=None, lock_time=None))


def purge_deleted_stacks(s: Session, older_than: dt.timedelta, *,
                         project_id: str | None = None) -> int:
    """Hard-delete stacks soft-deleted longer ago than ``older_than`` (Heat's
    ``heat-manage purge_deleted``): their events, tags and snapshots go with them (foreign
    keys cascade), then the raw templates no stack uses any more. Returns stacks purged."""
    cutoff = utcnow() - older_than
    stmt = sa.select(Stack.id, Stack.raw_template_id, Stack.prev_raw_template_id).where(
        Stack.deleted_at.is_not(None), Stack.deleted_at < cutoff)
    if project_id is not None:
        stmt = stmt.where(Stack.project_id == project_id)
    rows = s.execute(stmt).all()
    if not rows:
        return 0
    ids = [r[0] for r in rows]
    templates = {t for r in rows for t in r[1:] if t is not None}
    _changed(s)
    for chunk in _chunks(ids, 500):
        s.execute(sa.delete(Resource).where(Resource.stack_id.in_(chunk)))
        s.execute(sa.delete(Stack).where(Stack.id.in_(chunk)))
    still_used = {t for (t,) in s.execute(sa.select(Stack.raw_template_id))} | {
        t for (t,) in s.execute(sa.select(Stack.prev_raw_template_id)) if t is not None}
    orphans = sorted(templates - still_used)
    for i in range(0, len(orphans), 500):
        s.execute(sa.delete(RawTemplate).where(RawTemplate.id.in_(orphans[i:i + 500])))
    return len(ids)
