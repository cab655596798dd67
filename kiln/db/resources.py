"""Resources and their private data.

Several rows may share a name in one stack while an update replaces a resource (the old
row's ``replaced_by`` points at the new one); ``get_resource_by_name`` returns the current
one. Ids come from an AUTOINCREMENT sequence and are never reused.
"""

from __future__ import annotations

import functools
import json
import sys
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, cast

import sqlalchemy as sa
from sqlalchemy.orm import Session
from sqlalchemy.orm.util import identity_key

from kiln.db import crypt, sqlite_fast
from kiln.db import signals as db_signals
from kiln.db.ids import ordered_uuid
from kiln.db.models import Resource, ResourceData, utcnow
from kiln.db.records import (
    NewResource,
    ResourceDataChange,
    ResourceRecord,
    ResourceValues,
)

_COLUMNS = [c.key for c in Resource.__table__.columns]
_FIELDS = [k for k in _COLUMNS if k != "rsrc_metadata"]
_PENDING = "kiln_pending_resource_updates"
_TABLE = cast(sa.Table, Resource.__table__)


def _values(values: Mapping[str, Any], sealed: crypt.SealMemo | None = None,
            ) -> dict[str, Any]:
    """Row values as stored; ``sealed`` memoises encrypted properties over many rows."""
    out = dict(values)
    if "metadata" in out:
        out["rsrc_metadata"] = out.pop("metadata")
    if "properties_data" in out:
        out["properties_data"] = crypt.seal_shared(out["properties_data"],
                                                   {} if sealed is None else sealed)
    out.setdefault("updated_at", utcnow())
    return out


class _Reader:
    """Turns one query's rows into records, sharing what repeats from row to row.

    The rows of a big stack repeat most of their values: the same stack ids, type names,
    states and reasons, and very often the same properties (a group's members, a
    template's repeated resources). Those become one object each instead of 10,000 equal
    copies. Each row's properties are still decrypted on their own (every token has its
    own IV); only decoding equal plaintext is shared, and the decoded values are
    read-only.
    """

    __slots__ = ("_documents", "_strings")

    def __init__(self) -> None:
        self._documents: dict[str, Any] = {}
        self._strings: dict[str, str] = {}

    def properties(self, stored: Any) -> Any:
        if not (isinstance(stored, dict) and len(stored) == 1
                and crypt.SEALED_KEY in stored):
            return stored
        sealed = stored[crypt.SEALED_KEY]
        if not crypt.is_encrypted(sealed):
            return crypt.unseal(stored)
        text = crypt.decrypt(sealed)
        found = self._documents.get(text)
        if found is None:
            found = self._documents[text] = json.loads(text)
        return found

    def record(self, row: Mapping[Any, Any], data: Mapping[str, str],
               signals: Mapping[str, Any] | None = None,
               signal_sizes: Mapping[str, int] | None = None) -> ResourceRecord:
        fields = {k: row[k] for k in _FIELDS}
        strings = self._strings
        for key in _SHARED:
            value = fields[key]
            if isinstance(value, str):
                fields[key] = strings.setdefault(value, value)
        fields["properties_data"] = self.properties(fields["properties_data"])
        return ResourceRecord(**fields, metadata=row["rsrc_metadata"], data=data,
                              signals={} if signals is None else signals,
                              signal_sizes={} if signal_sizes is None else signal_sizes)


#: columns whose values repeat across a stack's rows
_SHARED = ("stack_id", "root_stack_id", "type", "action", "status", "status_reason",
           "progress_action", "engine_id", "traversal_id")


def _record(row: Mapping[Any, Any], data: Mapping[str, str]) -> ResourceRecord:
    return _Reader().record(row, data)


def _orm_row(obj: Resource) -> dict[str, Any]:
    return {k: getattr(obj, k) for k in _COLUMNS}


def _select(s: Session, *where: sa.ColumnElement[bool], order_by: Any = None,
            limit: int | None = None) -> list[ResourceRecord]:
    """Reads go through Core: a thousand-resource stack loads without building (and then
    copying) a thousand ORM objects."""
    flush_resource_updates(s)
    stmt = sa.select(_TABLE).where(*where)
    stmt = stmt.order_by(*(order_by if order_by is not None else [_TABLE.c.id]))
    if limit is not None:
        stmt = stmt.limit(limit)
    # records are made as rows arrive (no list of all rows beside the records), and
    # their data maps are filled in afterwards
    reader = _Reader()
    records: list[ResourceRecord] = []
    data: dict[int, dict[str, str]] = {}
    signals: dict[int, dict[str, Any]] = {}
    sizes: dict[int, dict[str, int]] = {}
    for row in s.connection().execute(stmt).mappings():
        rid = row["id"]
        found: dict[str, str] = {}
        data[rid] = found
        signals[rid], sizes[rid] = {}, {}
        records.append(reader.record(row, found, signals[rid], sizes[rid]))
    _fill_data(s, data)
    db_signals.fill_signals(s, signals, sizes)
    return records


def _data_of(s: Session, resource_ids: Sequence[int]) -> dict[int, dict[str, str]]:
    out: dict[int, dict[str, str]] = {rid: {} for rid in resource_ids}
    _fill_data(s, out)
    return out


def _fill_data(s: Session, out: Mapping[int, dict[str, str]]) -> None:
    ids = list(out)
    for i in range(0, len(ids), 500):
        chunk = ids[i:i + 500]
        rows = s.execute(sa.select(ResourceData.resource_id, ResourceData.key,
                                   ResourceData.value, ResourceData.redact)
                         .where(ResourceData.resource_id.in_(chunk)))
        for rid, key, value, redact in rows:
            out[rid][sys.intern(key)] = crypt.decrypt(value) if redact else value


def create_resources(s: Session, rows: Sequence[NewResource]) -> list[ResourceRecord]:
    now = utcnow()
    objs = [Resource(uuid=r.uuid or ordered_uuid(), stack_id=r.stack_id,
                     root_stack_id=r.root_stack_id, name=r.name, type=r.type,
                     physical_resource_id=r.physical_resource_id, action=r.action,
                     status=r.status, status_reason=r.status_reason,
                     properties_data=crypt.seal(r.properties_data),
                     rsrc_metadata=r.metadata,
                     requires=None if r.requires is None else list(r.requires),
                     needed_by=None if r.needed_by is None else list(r.needed_by),
                     replaces=r.replaces, traversal_id=r.traversal_id, created_at=now)
            for r in rows]
    s.add_all(objs)
    s.flush()
    return [_record(_orm_row(o), {}) for o in objs]


#: up to this many new rows are read back by uuid rather than by stack
_READ_BACK_BY_UUID = 100
#: rows per INSERT executemany
_INSERT_SLICE = 500


def _insert_values(r: NewResource, now: Any) -> dict[str, Any]:
    return {"uuid": r.uuid or ordered_uuid(), "stack_id": r.stack_id,
            "root_stack_id": r.root_stack_id, "name": r.name, "type": r.type,
            "physical_resource_id": r.physical_resource_id, "action": r.action,
            "status": r.status, "status_reason": r.status_reason,
            "properties_data": crypt.seal(r.properties_data),
            "rsrc_metadata": r.metadata,
            "requires": None if r.requires is None else list(r.requires),
            "needed_by": None if r.needed_by is None else list(r.needed_by),
            "replaces": r.replaces, "traversal_id": r.traversal_id,
            "created_at": now}


_INSERT = sa.insert(_TABLE)


def insert_resources(s: Session, rows: Sequence[NewResource],
                     ) -> dict[str, tuple[int, str, Any]]:
    """The engine's hot-path insert: one Core executemany, ``{name: (id, uuid,
    created_at)}`` back instead of records (a 1,000-resource stack is stored in a few ms;
    :func:`create_resources` builds ORM objects at about a millisecond a row)."""
    if not rows:
        return {}
    now = utcnow()
    conn = s.connection()
    wanted: dict[str, str] = {}
    # in slices: the parameter dicts (and the driver's copies of them) of a 10,000-row
    # stack at once would be some 10 MB, alive together for a moment
    for i in range(0, len(rows), _INSERT_SLICE):
        values = [_insert_values(r, now) for r in rows[i:i + _INSERT_SLICE]]
        conn.execute(_INSERT, values)
        wanted.update((v["uuid"], v["name"]) for v in values)
        del values
    # a few rows are read back by uuid: reading the whole stack for a few rows of a
    # big one would cost as much as storing them all
    where = (_TABLE.c.uuid.in_(list(wanted)) if len(wanted) <= _READ_BACK_BY_UUID
             else _TABLE.c.stack_id == rows[0].stack_id)
    found = conn.execute(sa.select(_TABLE.c.id, _TABLE.c.uuid).where(where))
    return {wanted[u]: (rid, u, now) for rid, u in found if u in wanted}


def insert_replacement(s: Session, row: NewResource, old_id: int) -> tuple[int, str, Any]:
    """A replacement's row, and the old row marked replaced by it (deferred, merged into
    the batch's one executemany of row updates): ``(id, uuid, created_at)``.

    One single-row INSERT whose id comes back with it (SQLite's last row id, elsewhere
    SQLAlchemy's ``inserted_primary_key``): a replace-all update of N resources runs
    this N times, and the read-back by uuid and the immediate UPDATE it replaces were
    two thirds of it."""
    now = utcnow()
    values = _insert_values(row, now)
    rid = sqlite_fast.insert_one(s, _INSERT, values)
    if rid is None:
        key = s.connection().execute(_INSERT, values).inserted_primary_key
        assert key is not None
        rid = int(key[0])
    queue_resource_update(s, old_id, {"replaced_by": rid})
    return rid, values["uuid"], now


def insert_replacements(s: Session, items: Sequence[tuple[NewResource, int]],
                        ) -> list[tuple[int, str, Any]]:
    """:func:`insert_replacement` of many rows (a replace-all update asks for most of
    its replacements in one turn): one INSERT executemany and one read-back of the new
    ids by uuid per slice, instead of a statement per row; ``(id, uuid, created_at)``
    of each, in order. A single row keeps the one-INSERT path."""
    if len(items) <= 1:
        return [insert_replacement(s, row, old_id) for row, old_id in items]
    now = utcnow()
    conn = s.connection()
    out: list[tuple[int, str, Any]] = []
    for i in range(0, len(items), _INSERT_SLICE):
        chunk = items[i:i + _INSERT_SLICE]
        values = [_insert_values(row, now) for row, _ in chunk]
        if not sqlite_fast.execute(s, _INSERT, values):
            conn.execute(_INSERT, values)
        uuids = [v["uuid"] for v in values]
        ids = dict((u, rid) for rid, u in conn.execute(
            sa.select(_TABLE.c.id, _TABLE.c.uuid).where(_TABLE.c.uuid.in_(uuids))))
        for (_, old_id), u in zip(chunk, uuids, strict=True):
            rid = ids[u]
            queue_resource_update(s, old_id, {"replaced_by": rid})
            out.append((rid, u, now))
    return out


def get_resource(s: Session, resource_id: int) -> ResourceRecord | None:
    found = _select(s, _TABLE.c.id == resource_id)
    return found[0] if found else None


def get_resource_by_name(s: Session, stack_id: str, name: str) -> ResourceRecord | None:
    """The current row called ``name``: one not replaced if any, newest first."""
    c = _TABLE.c
    found = _select(s, c.stack_id == stack_id, c.name == name, limit=1,
                    order_by=[sa.case((c.replaced_by.is_(None), 0), else_=1), c.id.desc()])
    return found[0] if found else None


def list_resources(s: Session, stack_id: str) -> list[ResourceRecord]:
    return _select(s, _TABLE.c.stack_id == stack_id)


def list_tree_resources(s: Session, root_stack_id: str) -> list[ResourceRecord]:
    return _select(s, _TABLE.c.root_stack_id == root_stack_id)


def find_resources_by_physical_id(s: Session, physical_resource_id: str) -> list[ResourceRecord]:
    return _select(s, _TABLE.c.physical_resource_id == physical_resource_id)


def count_resources(s: Session, stack_id: str) -> int:
    """The stack's rows (replaced ones included), without reading them."""
    return int(s.execute(sa.select(sa.func.count(Resource.id))
                         .where(Resource.stack_id == stack_id)).scalar_one())


def count_tree_resources(s: Session, root_stack_id: str) -> int:
    return int(s.execute(sa.select(sa.func.count(Resource.id))
                         .where(Resource.root_stack_id == root_stack_id)).scalar_one())


_ANY = object()


@functools.lru_cache(maxsize=256)
def _update_stmt(keys: tuple[str, ...], engine_cond: str) -> sa.Update:
    """One compiled-once UPDATE per (columns set, condition) shape: the hot path runs the
    same few shapes thousands of times, and Core statements skip the ORM's per-call work."""
    cols = _TABLE.c
    stmt = sa.update(_TABLE).where(cols.id == sa.bindparam("_rid"))
    if engine_cond == "none":
        stmt = stmt.where(cols.engine_id.is_(None))
    elif engine_cond == "eq":
        stmt = stmt.where(cols.engine_id == sa.bindparam("_engine"))
    return stmt.values({k: sa.bindparam("v_" + k) for k in keys})


def _expire(s: Session, resource_ids: Iterable[int]) -> None:
    """Core statements bypass the identity map: drop copies this session holds."""
    if not s.identity_map:
        return
    for rid in resource_ids:
        obj = s.identity_map.get(identity_key(Resource, rid))
        if obj is not None:
            s.expire(obj)


def update_resource(s: Session, resource_id: int, values: ResourceValues, *,
                    expected_engine: Any = _ANY) -> bool:
    """``expected_engine``: update only if the row's ``engine_id`` is that (None = unowned),
    which is how an engine claims a resource atomically. Returns whether a row changed."""
    flush_resource_updates(s)
    row = _values(values)
    params: dict[str, Any] = {"_rid": resource_id}
    params.update({"v_" + k: v for k, v in row.items()})
    if expected_engine is _ANY:
        cond = "any"
    elif expected_engine is None:
        cond = "none"
    else:
        cond, params["_engine"] = "eq", expected_engine
    result = s.connection().execute(_update_stmt(tuple(sorted(row)), cond), params)
    _expire(s, (resource_id,))
    return bool(result.rowcount)


def update_resources(s: Session, updates: Sequence[tuple[int, ResourceValues]]) -> None:
    """Many unconditional updates at once (executemany, grouped by the columns set)."""
    flush_resource_updates(s)
    # a batch's rows mostly carry equal properties (a resource's own transitions, or
    # resources declared alike): each distinct document is encrypted once
    sealed: crypt.SealMemo = {}
    _execute_updates(s, [(rid, _values(values, sealed)) for rid, values in updates])


def _execute_updates(s: Session, updates: Sequence[tuple[int, dict[str, Any]]]) -> None:
    groups: dict[tuple[str, ...], list[dict[str, Any]]] = defaultdict(list)
    for rid, row in updates:
        groups[tuple(sorted(row))].append({"_rid": rid, **{"v_" + k: v for k, v in row.items()}})
    conn = s.connection()
    for keys, params in groups.items():
        stmt = _update_stmt(keys, "any")
        if not sqlite_fast.execute(s, stmt, params):
            conn.execute(stmt, params)
    _expire(s, (rid for rid, _ in updates))


def queue_resource_update(s: Session, resource_id: int, values: ResourceValues) -> None:
    """An unconditional update deferred to the session's next resource query or commit.

    Successive queued updates of one row are merged (later values win), and all rows are
    then written with one executemany - on PostgreSQL one pipelined round trip for a whole
    writer batch instead of one per status change."""
    pending: dict[int, dict[str, Any]] = s.info.setdefault(_PENDING, {})
    pending.setdefault(resource_id, {}).update(_values(values))


def flush_resource_updates(s: Session) -> None:
    pending: dict[int, dict[str, Any]] | None = s.info.pop(_PENDING, None)
    if pending:
        _execute_updates(s, list(pending.items()))


@sa.event.listens_for(Session, "before_commit")
def _before_commit(s: Session) -> None:
    flush_resource_updates(s)


@sa.event.listens_for(Session, "after_rollback")
def _after_rollback(s: Session) -> None:
    s.info.pop(_PENDING, None)


def delete_resource(s: Session, resource_id: int) -> None:
    delete_resources(s, [resource_id])


def delete_resources(s: Session, resource_ids: Sequence[int]) -> None:
    """The rows and their data. Core statements (one executemany each), on SQLite sent
    straight to the driver: an update replacing N resources deletes N old rows, and the
    ORM's bulk delete of one row cost several times the SQL."""
    flush_resource_updates(s)
    if not resource_ids:
        return
    params = [{"rid": rid} for rid in resource_ids]
    for stmt in (_DELETE_ROW_DATA, _DELETE_ROW):
        if not sqlite_fast.execute(s, stmt, params):
            s.connection().execute(stmt, params)
    if s.identity_map:   # as the ORM's delete did: no stale copy stays in the session
        for rid in resource_ids:
            obj = s.identity_map.get(identity_key(Resource, rid))
            if obj is not None:
                s.expunge(obj)


def set_resource_data(s: Session, resource_id: int, key: str, value: str, *,
                      redact: bool = False) -> None:
    stored = crypt.encrypt(value) if redact else value
    changed = s.execute(sa.update(ResourceData)
                        .where(ResourceData.resource_id == resource_id,
                               ResourceData.key == key)
                        .values(value=stored, redact=redact))
    if not changed.rowcount:  # type: ignore[attr-defined]
        s.execute(sa.insert(ResourceData).values(resource_id=resource_id, key=key,
                                                 value=stored, redact=redact))


_DATA = cast(sa.Table, ResourceData.__table__)
_UPDATE_DATA = (sa.update(_DATA)
                .where(_DATA.c.resource_id == sa.bindparam("rid"),
                       _DATA.c.key == sa.bindparam("k"))
                .values(value=sa.bindparam("v"), redact=sa.bindparam("r")))
_DELETE_ROW_DATA = sa.delete(_DATA).where(_DATA.c.resource_id == sa.bindparam("rid"))
_DELETE_ROW = sa.delete(_TABLE).where(_TABLE.c.id == sa.bindparam("rid"))
_DELETE_DATA = sa.delete(_DATA).where(_DATA.c.resource_id == sa.bindparam("rid"),
                                      _DATA.c.key == sa.bindparam("k"))


def write_resource_data(s: Session, changes: Iterable[ResourceDataChange]) -> None:
    """Data of many resources in at most three executemany statements (a change's
    ``secret`` keys encrypted). The caller knows which keys are stored already, so a new
    key is a plain insert, not an update that finds nothing followed by an insert.
    Changes are applied in order: a key added and then changed in the same call is
    inserted with its last value, one added and then removed is never written."""
    final: dict[tuple[int, str], tuple[str, str]] = {}   # (id, key) -> (op, value)
    secret: set[tuple[int, str]] = set()
    for c in changes:
        rid = c.resource_id
        secret.update((rid, key) for key in c.secret)
        for key, value in c.new.items():
            prev = final.get((rid, key))
            # a key removed earlier in this call is still stored until we write
            final[rid, key] = ("update" if prev and prev[0] == "delete" else "insert",
                               value)
        for key, value in c.changed.items():
            prev = final.get((rid, key))
            final[rid, key] = ("insert" if prev and prev[0] == "insert" else "update",
                               value)
        for key in c.gone:
            prev = final.get((rid, key))
            if prev is not None and prev[0] == "insert":
                del final[rid, key]
            else:
                final[rid, key] = ("delete", "")
    inserts: list[dict[str, Any]] = []
    updates: list[dict[str, Any]] = []
    deletes: list[dict[str, Any]] = []
    for (rid, key), (op, value) in final.items():
        redact = (rid, key) in secret
        if redact and op != "delete":
            value = crypt.encrypt(value)
        if op == "insert":
            inserts.append({"resource_id": rid, "key": key, "value": value, "redact": redact})
        elif op == "update":
            updates.append({"rid": rid, "k": key, "v": value, "r": redact})
        else:
            deletes.append({"rid": rid, "k": key})
    conn = s.connection()
    if deletes:
        conn.execute(_DELETE_DATA, deletes)
    if updates:
        conn.execute(_UPDATE_DATA, updates)
    if inserts:
        conn.execute(sa.insert(_DATA), inserts)


def get_resource_data(s: Session, resource_id: int) -> dict[str, str]:
    return _data_of(s, [resource_id]).get(resource_id, {})


def delete_resource_data(s: Session, resource_id: int, key: str) -> bool:
    result = s.execute(sa.delete(ResourceData).where(ResourceData.resource_id == resource_id,
                                                     ResourceData.key == key))
    return bool(result.rowcount)  # type: ignore[attr-defined]
