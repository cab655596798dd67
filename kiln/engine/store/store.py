"""The engine's one door to the database.

:class:`Store` is built from the :class:`~kiln.db.facade.Database` facade and holds one
room per concern; every transaction the engine's actions and runtime make is a method of
a room, named for what the engine means (``stacks.admit``, ``resources.add_replacement``,
``locks.lock_stack``), with the statements it sends written beside it. Nothing under
``kiln.engine.actions``, ``kiln.engine.runtime`` or ``kiln.engine.model`` imports
``kiln.db`` other than its plain records (:mod:`kiln.db.records`), and nothing under
``kiln.engine.service`` but the four modules its contract still excuses; import-linter
keeps it so (docs/contracts.md).

The rooms keep the facade's shape: a read runs on its reader pool; a write is queued for
its batching writer when called and returns the writer's future, so a transition and
whatever else the loop queued in the same turn still commit together. A method that was
one transaction before it moved here is one transaction still.
"""

from __future__ import annotations

from kiln.db.facade import DATABASE_ERRORS, Database
from kiln.db.models import utcnow
from kiln.engine.store.engines import EngineRegistry
from kiln.engine.store.events import EventStore
from kiln.engine.store.identity import CredentialStore, KeypairStore, StackUserStore
from kiln.engine.store.locks import LockStore
from kiln.engine.store.recorder import Recorder
from kiln.engine.store.resources import ResourceStore
from kiln.engine.store.snapshots import SnapshotStore
from kiln.engine.store.software import SoftwareStore
from kiln.engine.store.stacks import StackStore
from kiln.resources.runtime import AlarmStore

__all__ = ["DATABASE_ERRORS", "Store", "utcnow"]


class Store:
    """The rooms: ``stacks``, ``resources``, ``events``, ``locks``, ``snapshots``,
    ``credentials``, ``stack_users``, ``keypairs``, ``software``, ``engines``;
    transitions go through a :meth:`recorder`."""

    def __init__(self, db: Database) -> None:
        #: the facade itself, for the four service modules whose calls have not moved
        #: behind the store yet (issue 23) and the alarm service; actions and runtime
        #: never use it
        self.database = db
        self.stacks = StackStore(db)
        self.resources = ResourceStore(db)
        self.events = EventStore(db)
        self.locks = LockStore(db)
        self.snapshots = SnapshotStore(db)
        self.credentials = CredentialStore(db)
        self.software = SoftwareStore(db)
        self.stack_users = StackUserStore(db)
        self.keypairs = KeypairStore(db)
        self.engines = EngineRegistry(db)

    def recorder(self, engine_id: str) -> Recorder:
        """The writer of one engine's state transitions (:mod:`.recorder`)."""
        return Recorder(self.database, engine_id)

    def stack_alarms(self, project_id: str, stack_id: str) -> AlarmStore:
        """The alarm store handed to one stack's alarm resources."""
        from kiln.alarms.stack_store import StackAlarms

        return StackAlarms(self.database, project_id=project_id, stack_id=stack_id)
