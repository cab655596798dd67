"""What every part of EngineService shares: the service's core (configuration, the
database, the Engine once started, the plugins' identities and software configs) and the
one stack lookup by identity. Each part (:mod:`.reads`, :mod:`.stack_changes`, ...) is
built with the core and the other parts it calls; none reaches the façade."""

from __future__ import annotations

import asyncio
from typing import Any

from kiln.conf import CONF
from kiln.db.records import StackRecord
from kiln.engine.actions.identity import Identities, keystone_admin
from kiln.engine.actions.nested import NestedOps
from kiln.engine.actions.software import SoftwareConfigs
from kiln.engine.model.context import RequestContext
from kiln.engine.model.delegation import Delegation
from kiln.engine.model.dispatch import Dispatch
from kiln.engine.model.live_stack import PluginLookup
from kiln.engine.model.settings import EngineConf
from kiln.engine.runtime.engine import Engine
from kiln.engine.runtime.plugin_loader import find_plugin
from kiln.engine.service.interface import Identity
from kiln.engine.store import Database, Store, open_database
from kiln.errors import EntityNotFound
from kiln.notifications import NULL, Notifier


class ResourceNotFound(EntityNotFound):
    """Heat's error type for a resource name the stack does not have."""

    @classmethod
    def in_stack(cls, resource_name: str, stack_name: str) -> ResourceNotFound:
        return cls(f"The Resource ({resource_name}) could not be found in Stack {stack_name}.")


class ServiceCore:
    """The state every part of the service shares: configuration, the plugin lookup,
    the database and (from :meth:`start`) the Engine, built with everything it needs,
    and the identities plugins are given (keypairs, stack users), which the Engine's
    plugin services share. Parts hold the core, not the façade, so no call climbs
    back up through :class:`~kiln.engine.service.engine_service.EngineService`."""

    def __init__(self, conf: EngineConf | None = None, *, db: Database | None = None,
                 db_url: str | None = None, engine_id: str | None = None,
                 plugins: PluginLookup = find_plugin,
                 delegation: Delegation | None = None,
                 notifier: Notifier = NULL) -> None:
        self.conf: EngineConf = conf if conf is not None else CONF
        #: how this process reaches the other engines (kiln.rpc), set before :meth:`start`
        #: by the process wiring; None: ``kiln serve``'s all-in-one, nothing to reach
        self.dispatch: Dispatch | None = None
        #: Heat's notifications (kiln.notifications); the service closes it on stop
        self.notifier = notifier
        self.plugins = plugins
        #: deferred authentication (keystone mode's trusts); None: noauth
        self.delegation = delegation
        self._db = db
        self._db_url = db_url
        self._engine_id = engine_id
        self._engine: Engine | None = None
        self._identities: Identities | None = None
        self._software: SoftwareConfigs | None = None
        self._stack_user_admin: Any = False

    @property
    def engine(self) -> Engine:
        if self._engine is None:
            raise RuntimeError("EngineService.start() has not been called")
        return self._engine

    @property
    def started_engine(self) -> Engine | None:
        """The Engine, or None before :meth:`start` (validation may come first)."""
        return self._engine

    @property
    def stack_user_admin(self) -> Any:
        """The Keystone side (StackUserAdmin) in keystone mode, else None."""
        if self._stack_user_admin is False:
            self._stack_user_admin = keystone_admin(self.conf)
        return self._stack_user_admin

    @property
    def identities(self) -> Identities:
        """EC2 keypairs and stack users (:mod:`kiln.engine.actions.identity`)."""
        if self._identities is None:
            raise RuntimeError("EngineService.start() has not been called")
        return self._identities

    @property
    def software(self) -> SoftwareConfigs:
        """Software configs and deployments (:mod:`kiln.engine.actions.software`)."""
        if self._software is None:
            raise RuntimeError("EngineService.start() has not been called")
        return self._software

    @property
    def store(self) -> Store:
        """The engine's one door to the database (:mod:`kiln.engine.store`)."""
        return self.engine.store

    async def start(self) -> None:
        if self._db is None:
            self._db = await open_database(self._db_url)
        store = Store(self._db)
        # max_events_per_stack holds while events are written, not only after actions
        store.events.cap(int(self.conf.max_events_per_stack),
                         int(self.conf.event_purge_batch_size))
        self._identities = Identities(store, self.stack_user_admin)
        self._software = SoftwareConfigs(store)
        # the plugins' services: the parts above, and the engine (built next) for
        # child stacks, reached when a plugin first calls it
        self._engine = Engine(store, self.conf,
                              services=NestedOps(lambda: self.engine, self._identities,
                                                 self._software),
                              plugins=self.plugins, engine_id=self._engine_id,
                              delegation=self.delegation, notifier=self.notifier)

    async def stop(self) -> None:
        if self._engine is not None:
            await self._engine.stop()
        if self.notifier.enabled:
            await asyncio.to_thread(self.notifier.close)
        if self._db is not None:
            await self._db.close()

    # -- lookups --------------------------------------------------------------------------
    async def find(self, ctx: RequestContext, stack_identity: Identity | str, *,
                   show_deleted: bool = False) -> StackRecord:
        """The stack an identity (or a bare name/id) names, within the caller's project
        (admins see every project's stacks by id, as Heat allows)."""
        named: str | None = None
        if isinstance(stack_identity, str):
            key = stack_identity
        else:
            given = stack_identity.get("stack_name")
            named = str(given) if given else None
            key = str(stack_identity.get("stack_id") or named or "")
        project = None if ctx.is_admin else ctx.project_id
        rec = await self.store.stacks.find(key, project_id=project,
                                           name_project_id=ctx.project_id,
                                           show_deleted=show_deleted)
        # as Heat: an identity whose name is not the stack's does not name it, and the
        # error names the stack as the caller did (the name in the URL, not the id)
        if rec is None or (named is not None and rec.name != named):
            raise EntityNotFound(f"The Stack ({named or key}) could not be found.")
        return rec
