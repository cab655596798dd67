"""The engine's one door to the database.

:class:`Store` is built from the :class:`~kiln.db.facade.Database` facade and holds one
room per concern; every transaction the engine's actions and runtime make is a method of
a room, named for what the engine means (``stacks.admit``, ``resources.add_replacement``,
``locks.lock_stack``), with the statements it sends written beside it. Nothing under
``kiln.engine.actions``, ``kiln.engine.runtime`` or ``kiln.engine.model`` imports
``kiln.db`` other than its plain records (:mod:`kiln.db.records`), nor anything under
``kiln.engine.service``; import-linter keeps it so (docs/contracts.md).

The rooms keep the facade's shape: a read runs on its reader pool; a write is queued for
its batching writer when called and returns the writer's future, so a transition and
whatever else the loop queued in the same turn still commit together. A method that was
one transaction before it moved here is one transaction still.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kiln.db.facade import DATABASE_ERRORS, Database
from kiln.db.models import utcnow
from kiln.engine.store.change_sets import ChangeSetStore
from kiln.engine.store.drift import DriftStore
from kiln.engine.store.engines import EngineRegistry
from kiln.engine.store.events import EventStore
from kiln.engine.store.identity import CredentialStore, KeypairStore, StackUserStore
from kiln.engine.store.locks import LockStore
from kiln.engine.store.recorder import Recorder
from kiln.engine.store.resources import ResourceStore
from kiln.engine.store.snapshots import SnapshotStore
from kiln.engine.store.software import SoftwareStore
from kiln.engine.store.stack_versions import StackVersionStore
from kiln.engine.store.stacks import StackStore
from kiln.resources.runtime import AlarmStore

if TYPE_CHECKING:
    from kiln.alarms.service import ActionRunner, AlarmService

__all__ = ["DATABASE_ERRORS", "Store", "utcnow"]


class Store:
    """The rooms: ``stacks``, ``resources``, ``events``, ``locks``, ``snapshots``,
    ``credentials``, ``stack_users``, ``keypairs``, ``software``, ``engines``;
    transitions go through a :meth:`recorder`; the alarm tables through :meth:`alarms`."""

    def __init__(self, db: Database) -> None:
        #: the facade itself: the rooms', the recorder's and the alarm service's (and
        #: tests', which read rows through it); no engine module above the store uses it
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
        self.change_sets = ChangeSetStore(db)
        self.versions = StackVersionStore(db)
        #: drift detections (kiln.engine.store.drift)
        self.drift = DriftStore(db)

    def recorder(self, engine_id: str) -> Recorder:
        """The writer of one engine's state transitions (:mod:`.recorder`)."""
        return Recorder(self.database, engine_id)

    def alarms(self, *, retention: float = 86400.0, max_datums: int = 1000,
               runner: ActionRunner | None = None) -> AlarmService:
        """The alarm tables' own door: an :class:`~kiln.alarms.service.AlarmService`
        on this database (metrics, alarms, their history, the watcher's lease). The alarm
        statements live in :mod:`kiln.alarms.store`, below the engine, because the
        CloudWatch API and the watcher use them as well as alarm resources; the engine
        hands the service on and sends none of them itself (docs/contracts.md §5).
        ``runner``: what runs an alarm's actions (the engine's signals)."""
        from kiln.alarms.service import AlarmService

        return AlarmService(self.database, retention=retention, max_datums=max_datums,
                            runner=runner)

    def stack_alarms(self, project_id: str, stack_id: str) -> AlarmStore:
        """The alarm store handed to one stack's alarm resources."""
        from kiln.alarms.stack_store import StackAlarms

        return StackAlarms(self.alarms(), project_id=project_id, stack_id=stack_id)
