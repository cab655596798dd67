"""Kiln's persistence layer: SQLAlchemy models, repositories, migrations, async facade.

How callers use it
------------------
Repository functions are plain synchronous functions whose first argument is a SQLAlchemy
``Session``; they never commit (the caller's unit of work does) and they return frozen
records from :mod:`kiln.db.records`, never ORM objects. The asyncio engine reaches them
through :class:`kiln.db.facade.Database`::

    db = await open_database(url)                  # creates the schema on an empty DB
    stack = await db.run(stacks.get_stack, stack_id)            # read, thread pool
    await db.write(resources.update_resource, rid, {"status": "COMPLETE"})
    await db.write(events.add_events, [NewEvent(...)])          # batched with others
    await db.close()

``db.write(fn, *args, **kwargs)`` queues ``fn(session, *args, **kwargs)`` to one writer
thread, which runs everything queued meanwhile in ONE transaction and resolves each future
once it is committed (a failing function is retried alone so it cannot sink its batch;
write functions must therefore touch nothing but the session). A batch that loses a
deadlock / serialization conflict on PostgreSQL or MariaDB is retried as a whole.
``db.write`` returns an ``asyncio.Future`` immediately, so several writes can be queued
before awaiting any.
``db.run`` runs a function in its own short transaction on a reader thread (commits too,
so small independent writes that need no batching may use it, e.g. taking a stack lock; it
is re-run if SQLite reports the database busy or a server picks it as a deadlock victim).
The cheapest status change is ``db.write(resources.queue_resource_update, ...)`` plus
``db.write(events.add_events, ...)``: both are deferred to the batch's commit, so a whole
batch costs one executemany and one multi-row INSERT (bench/db_bench.py).

Public API (import from the submodules; everything is re-exported here too)
---------------------------------------------------------------------------
engine / setup (``kiln.db.engine``, ``kiln.db.migrate``, ``kiln.db.facade``)::

    default_url(state_path: str | None = None) -> str   # sqlite file <state_path>/kiln.sqlite
    make_engine(url: str, *, pool_size: int = 5, max_overflow: int = 50) -> sa.Engine
        # SQLite: WAL, foreign_keys=ON, busy_timeout; psycopg / PyMySQL for the servers
    migrate.upgrade(url: str, revision: str = "head") -> None   # `kiln db upgrade`
    migrate.ensure_schema(engine: sa.Engine) -> None  # empty DB: create_all + stamp (fast)
    async open_database(url: str | None = None, *, create: bool = True) -> Database
    class Database:
        engine: sa.Engine
        async run(fn: Callable[Concatenate[Session, P], T], *a: P.args, **kw: P.kwargs) -> T
        write(fn: Callable[Concatenate[Session, P], T], *a, **kw) -> asyncio.Future[T]
        async close() -> None
        def session() -> ContextManager[Session]   # sync, one transaction (tests, CLI)

stacks (``kiln.db.stacks``)::

    create_raw_template(s, template: Mapping, environment: Mapping, files: Mapping,
                        hidden_params: Sequence[str] = ()) -> int
    get_raw_template(s, template_id: int) -> RawTemplateRecord        # raises EntityNotFound
    delete_raw_template(s, template_id: int) -> None
    create_stack(s, new: NewStack) -> StackRecord    # raises StackExists (same name+project)
    get_stack(s, stack_id: str, *, project_id: str | None = None,
              show_deleted: bool = False) -> StackRecord | None
    get_stack_by_name(s, project_id: str, name: str, *,
                      show_deleted: bool = False) -> StackRecord | None
    find_stack(s, project_id: str, name_or_id: str) -> StackRecord | None
    list_stacks(s, q: StackQuery) -> list[StackRecord]   # hidden_tags None: CONF's
    count_stacks(s, q: StackQuery) -> int          # same filters, no limit/marker
    count_project_stacks(s, project_id: str, *, include_nested: bool = False) -> int
        # live stacks; top-level only by default, as Heat's max_stacks_per_tenant counts
    list_child_stacks(s, owner_id: str) -> list[StackRecord]
    list_tree_stacks(s, root_stack_id: str) -> list[StackRecord]   # root + all nested
    update_stack(s, stack_id: str, values: StackValues, *,
                 expected_traversal: str | None = None,
                 engine_id: str | None = None) -> bool   # False if the condition failed
    set_stack_tags(s, stack_id: str, tags: Sequence[str]) -> None
    soft_delete_stack(s, stack_id: str) -> None  # deleted_at=now; resources and lock
                                                 # removed (set the status first)
    purge_deleted_stacks(s, older_than: timedelta, *, project_id: str | None = None) -> int
        # hard-delete long soft-deleted stacks with their events/tags/snapshots/templates
locks and engines (``kiln.db.locks``)::

    acquire_stack_lock(s, stack_id: str, engine_id: str) -> LockResult
    release_stack_lock(s, stack_id: str, engine_id: str) -> bool
    steal_stack_lock(s, stack_id: str, old_engine_id: str, new_engine_id: str) -> bool
    get_stack_lock(s, stack_id: str) -> str | None          # the holding engine
    stacks_locked_by(s, engine_ids: Sequence[str]) -> list[StackRecord]
    register_engine(s, engine_id: str, *, host: str, hostname: str, binary: str = "kiln-engine",
                    topic: str = "engine", report_interval: int = 5) -> ServiceRecord
    heartbeat(s, engine_id: str) -> None
    unregister_engine(s, engine_id: str) -> None      # soft delete on clean shutdown
    list_services(s) -> list[ServiceRecord]
    dead_engines(s, dead_after: float) -> list[str]   # heartbeat older than dead_after s
    stacks_held_by_dead_engines(s, dead_after: float) -> list[StackRecord]
        # locked by an engine that is dead or not registered at all (recovery sweep)

recovery sweep (``kiln.db.recovery``)::

    orphaned_stacks(s, dead_after: float, me: str) -> list[StackRecord]
        # held by dead engines, IN_PROGRESS and unheld, or held by ``me`` too long
    take_stack(s, rec: StackRecord, me: str) -> bool   # acquire or steal; False if lost
    fail_stored_stack(s, stack_id: str, reason: str) -> None
        # IN_PROGRESS resources and the stack FAILED (a stack that cannot be loaded)

resources (``kiln.db.resources``)::

    create_resources(s, rows: Sequence[NewResource]) -> list[ResourceRecord]
    get_resource(s, resource_id: int) -> ResourceRecord | None
    get_resource_by_name(s, stack_id: str, name: str) -> ResourceRecord | None
        # the current row of that name (not replaced), newest first
    list_resources(s, stack_id: str) -> list[ResourceRecord]          # all rows, by id
    list_tree_resources(s, root_stack_id: str) -> list[ResourceRecord]
    find_resources_by_physical_id(s, physical_resource_id: str) -> list[ResourceRecord]
    count_resources(s, stack_id: str) -> int                        # all rows, not read
    count_tree_resources(s, root_stack_id: str) -> int
    update_resource(s, resource_id: int, values: ResourceValues, *,
                    expected_engine: str | None = ...) -> bool
    update_resources(s, updates: Sequence[tuple[int, ResourceValues]]) -> None   # bulk
    queue_resource_update(s, resource_id: int, values: ResourceValues) -> None
        # unconditional update deferred to the session's next resource read / commit, merged
        # per row: the cheapest way to record a status change (one executemany per batch)
    flush_resource_updates(s) -> None
    delete_resource(s, resource_id: int) -> None      # hard delete; ids are never reused
    delete_resources(s, resource_ids: Sequence[int]) -> None          # many at once
    insert_replacement(s, row: NewResource, old_id: int) -> tuple[int, str, datetime]
        # the new row; the old one's replaced_by queued (as queue_resource_update)
    insert_replacements(s, items: Sequence[tuple[NewResource, int]]) -> list[tuple[...]]
        # many at once: one executemany and one read-back by uuid per 500
    set_resource_data(s, resource_id: int, key: str, value: str, *, redact: bool = False)
    get_resource_data(s, resource_id: int) -> dict[str, str]          # decrypted
    delete_resource_data(s, resource_id: int, key: str) -> bool

signals a resource keeps (``kiln.db.signals``)::

    keep_signals(s, resource_id: int, writes: Sequence[SignalWrite]) -> None
        # a row per signal id: what a signal adds is appended (a repeated id rewritten);
        # records carry them as ``signals`` and ``shown_metadata()`` merges them in
    get_signals(s, resource_id: int) -> dict[str, Any]
    count_signals(s, resource_id: int) -> tuple[int, int]   # (signals, bytes)

events (``kiln.db.events``)::

    add_events(s, rows: Sequence[NewEvent], *, max_events_per_stack: int = 0,
               purge_batch_size: int = 200,
               purge_check_probability: float | None = None) -> list[str]
        # uuids. INSERT deferred to the next event query / commit of the session, so a
        # writer batch inserts all its events at once; the cap is checked like Heat does,
        # on average every purge_batch_size/2 calls (probability 1.0 = every call)
    flush_events(s) -> None                      # insert this session's queued events now
    cap_events(db: Database, keep: int, batch_size: int) -> None
        # the writer keeps every stack at ``keep`` events as it writes them (checked
        # every batch_size/2 events of a stack), not only when an action ends
    list_events(s, q: EventQuery) -> list[EventRecord]
    count_events(s, stack_id: str) -> int
    get_event(s, stack_id: str, event_uuid: str) -> EventRecord | None
    purge_events(s, stack_id: str, keep: int, batch_size: int) -> int

snapshots (``kiln.db.snapshots``)::

    create_snapshot(s, stack_id: str, project_id: str, name: str | None, *,
                    action: str = "SNAPSHOT", status: str = "IN_PROGRESS",
                    status_reason: str = "", data: Any = None,
                    id: str | None = None) -> SnapshotRecord
    get_snapshot(s, snapshot_id: str) -> SnapshotRecord | None
    list_snapshots(s, stack_id: str) -> list[SnapshotRecord]          # oldest first
    count_snapshots(s, stack_id: str) -> int
    update_snapshot(s, snapshot_id: str, values: SnapshotValues) -> bool
    delete_snapshot(s, snapshot_id: str) -> bool

software (``kiln.db.software``)::

    create_software_config(s, project_id: str, *, name: str | None, group: str | None,
                           config: Any, id: str | None = None) -> SoftwareConfigRecord
    get_software_config(s, config_id: str) -> SoftwareConfigRecord | None
    list_software_configs(s, project_id: str | None, *, limit: int | None = None,
                          marker: str | None = None) -> list[SoftwareConfigRecord]
    delete_software_config(s, config_id: str) -> bool   # raises Conflict if deployed
    create_software_deployment(s, project_id: str, *, config_id: str, server_id: str,
                               action: str, status: str, status_reason: str = "",
                               input_values: Any = None, output_values: Any = None,
                               stack_user_project_id: str | None = None,
                               id: str | None = None) -> SoftwareDeploymentRecord
    get_software_deployment(s, deployment_id: str) -> SoftwareDeploymentRecord | None
    list_software_deployments(s, project_id: str | None, *,
                              server_id: str | None = None) -> list[SoftwareDeploymentRecord]
    update_software_deployment(s, deployment_id: str,
                               values: SoftwareDeploymentValues) -> SoftwareDeploymentRecord | None
    delete_software_deployment(s, deployment_id: str) -> bool

Secrets (``kiln.db.crypt``): ``redact`` resource data, EC2 secrets and user creds always;
the columns holding copies of secrets (stack outputs, snapshot data, resource metadata,
software configs and deployment values, alarm rules and history: ``crypt.SealedJson`` /
``SealedText``) always; and - when ``encrypt_parameters_and_properties`` is set (Kiln's
default) - hidden parameter values, resource properties data and event resource
properties. Fernet, with a key derived from ``CONF.auth_encryption_key``; records always
carry plaintext. ``rekey.reencrypt_all`` moves them all to a new key.
"""

from __future__ import annotations

from kiln.db import events, locks, recovery, resources, snapshots, software, stacks
from kiln.db.engine import default_url, make_engine
from kiln.db.facade import Database, open_database
from kiln.db.records import (
    EventQuery,
    EventRecord,
    LockResult,
    NewEvent,
    NewResource,
    NewStack,
    RawTemplateRecord,
    ResourceRecord,
    ResourceValues,
    ServiceRecord,
    SnapshotRecord,
    SnapshotValues,
    SoftwareConfigRecord,
    SoftwareDeploymentRecord,
    SoftwareDeploymentValues,
    StackQuery,
    StackRecord,
    StackValues,
)

__all__ = [
    "Database",
    "EventQuery",
    "EventRecord",
    "LockResult",
    "NewEvent",
    "NewResource",
    "NewStack",
    "RawTemplateRecord",
    "ResourceRecord",
    "ResourceValues",
    "ServiceRecord",
    "SnapshotRecord",
    "SnapshotValues",
    "SoftwareConfigRecord",
    "SoftwareDeploymentRecord",
    "SoftwareDeploymentValues",
    "StackQuery",
    "StackRecord",
    "StackValues",
    "default_url",
    "events",
    "locks",
    "make_engine",
    "open_database",
    "recovery",
    "resources",
    "snapshots",
    "software",
    "stacks",
]
