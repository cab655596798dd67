"""The one way Kiln calls OpenStack: :class:`CloudClients`.

openstacksdk is synchronous, the engine is asyncio. Each call runs on a bounded thread
pool shared by the process (``[kiln_clients] max_workers``), so 200 servers being
polled cost the event loop nothing; no thread ever sleeps waiting for a cloud object:
plugins poll with the engine's two-step contract instead. A transient failure (see
:mod:`kiln.clients.errors`) is retried ``client_retry_limit`` times with a doubling pause
awaited on the event loop. Connections are made lazily, one per set of credentials, and
kept for the process's life (keystoneauth renews their tokens).
"""

from __future__ import annotations

import asyncio
import logging
import random
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

from kiln.clients.errors import cloud_errors, is_not_found, is_transient
from kiln.clients.settings import CLIENT_SERVICE_TYPES, CloudSettings

LOG = logging.getLogger(__name__)

T = TypeVar("T")

_EXECUTOR: ThreadPoolExecutor | None = None
_EXECUTOR_LOCK = threading.Lock()


def network_extension(alias: str) -> str:
    """How a Neutron extension is named among the catalog's service types."""
    return f"network-extension:{alias}"


class CloudNotConfigured(RuntimeError):
    """No credentials for a cloud were configured (see kiln.clients.settings)."""


def _executor(workers: int) -> ThreadPoolExecutor:
    global _EXECUTOR
    with _EXECUTOR_LOCK:
        if _EXECUTOR is None:
            _EXECUTOR = ThreadPoolExecutor(max_workers=workers,
                                           thread_name_prefix="kiln-cloud")
        return _EXECUTOR


def _connect(settings: CloudSettings) -> Any:
    """An openstacksdk Connection for *settings* (network I/O happens later, lazily)."""
    import openstack.config
    import openstack.connection

    if not settings.configured:
        raise CloudNotConfigured("no OpenStack cloud is configured ([kiln_clients])")
    loader = openstack.config.OpenStackConfig(
        config_files=[settings.clouds_file] if settings.clouds_file else None,
        load_envvars=False)
    region = loader.get_one(**settings.connection_kwargs())
    return openstack.connection.Connection(config=region, strict_proxies=False)


class CloudClients:
    """Calls into one cloud with one set of credentials, retried, off the event loop."""

    def __init__(self, settings: CloudSettings,
                 connect: Callable[[CloudSettings], Any] = _connect) -> None:
        self.settings = settings
        self._connect = connect
        self._conn: Any = None
        self._lock = threading.Lock()
        self._catalog: frozenset[str] | None = None
        self._catalog_at = 0.0

    @property
    def configured(self) -> bool:
        return self.settings.configured

    def connection(self) -> Any:
        """The openstacksdk Connection (made on first use; call from a worker thread)."""
        with self._lock:
            if self._conn is None:
                self._conn = self._connect(self.settings)
            return self._conn

    async def call(self, fn: Callable[[Any], T], *, what: str = "") -> T:
        """``fn(connection)`` on the worker pool; transient errors are retried with
        backoff, anything else (and the last transient one) propagates."""
        loop = asyncio.get_running_loop()
        pool = _executor(self.settings.max_workers)
        attempt = 0
        delay = self.settings.retry_initial_delay
        while True:
            try:
                return await loop.run_in_executor(pool, lambda: fn(self.connection()))
            except CloudNotConfigured:
                raise
            except Exception as exc:
                if attempt >= self.settings.retry_limit or not is_transient(exc):
                    raise
                attempt += 1
                LOG.info("retrying %s after transient error (%s), try %d of %d",
                         what or "cloud call", exc, attempt, self.settings.retry_limit)
                await asyncio.sleep(delay * (1 + random.random() / 4))
                delay *= 2

    async def delete(self, fn: Callable[[Any], Any], *, what: str = "") -> bool:
        """Run a delete call; an object already gone counts as deleted (False)."""
        try:
            await self.call(fn, what=what)
        except Exception as exc:
            if is_not_found(exc):
                return False
            raise
        return True

    async def find(self, fn: Callable[[Any], T], *, what: str = "") -> T | None:
        """Run a get call; a missing object gives None."""
        try:
            return await self.call(fn, what=what)
        except Exception as exc:
            if is_not_found(exc):
                return None
            raise

    # -- the catalog -------------------------------------------------------------------
    def _read_catalog(self, conn: Any) -> frozenset[str]:
        """The catalog's service types, plus ``network-extension:<alias>`` for each
        extension Neutron has (Heat checks a type's required extension the same way)."""
        access = conn.session.auth.get_access(conn.session)
        types = frozenset(entry.get("type", "") for entry in
                          (access.service_catalog.catalog or []))
        if "network" not in types:
            return types
        return types | self._read_extensions(conn)

    def _read_extensions(self, conn: Any) -> frozenset[str]:
        """``network-extension:<alias>`` for each extension Neutron has (none when
        Neutron cannot be asked now: the catalog stands, extension types wait)."""
        from kiln.clients import rest

        try:
            answer = rest.request(conn, "network", "GET", "/extensions") or {}
        except cloud_errors() as exc:
            LOG.warning("cannot read Neutron's extensions: %s", exc)
            return frozenset()
        return frozenset(network_extension(e.get("alias", ""))
                         for e in answer.get("extensions", []))

    async def network_extensions(self) -> frozenset[str]:
        """Neutron's extensions as ``network-extension:<alias>`` types, asked with
        these credentials and kept ``catalog_cache_seconds`` for every identity of the
        process (a cloud's extensions are the same whoever asks; a request's token
        brings its own catalog, but not them: Heat asks Neutron too)."""
        if not self.configured:
            return frozenset()
        key = self.settings.auth.get("auth_url", "") or (self.settings.cloud or "")
        now = time.monotonic()
        with _SHARED_LOCK:
            kept = _EXTENSIONS.get(key)
        if kept is not None and now - kept[0] < self.settings.catalog_cache_seconds:
            return kept[1]
        try:
            found = await self.call(self._read_extensions, what="Neutron's extensions")
        except cloud_errors() as exc:
            LOG.warning("cannot read Neutron's extensions: %s", exc)
            return kept[1] if kept is not None else frozenset()
        if found:
            with _SHARED_LOCK:
                _EXTENSIONS[key] = (now, found)
        return found

    async def service_types(self) -> frozenset[str]:
        """The service types in the catalog (cached ``catalog_cache_seconds``); empty
        when no cloud is configured or its Keystone cannot be reached."""
        if not self.configured:
            return frozenset()
        now = time.monotonic()
        if self._catalog is not None and now - self._catalog_at < \
                self.settings.catalog_cache_seconds:
            return self._catalog
        try:
            types = await self.call(self._read_catalog, what="service catalog")
        except cloud_errors() as exc:  # no catalog now: the last one, or none
            LOG.warning("cannot read the service catalog: %s", exc)
            return self._catalog or frozenset()
        self._catalog = types | self.settings.overridden_types()
        self._catalog_at = now
        return self._catalog

    async def has_client(self, client: str) -> bool:
        """Whether the catalog offers any service type of Heat's client *client*."""
        types = await self.service_types()
        return any(t in types for t in CLIENT_SERVICE_TYPES.get(client, ()))


_SHARED: dict[tuple[Any, ...], CloudClients] = {}
_SHARED_LOCK = threading.Lock()
#: Keystone URL -> (when read, Neutron's extensions as catalog types)
_EXTENSIONS: dict[str, tuple[float, frozenset[str]]] = {}


def shared_clients(settings: CloudSettings) -> CloudClients:
    """One CloudClients per distinct settings, for the process's life."""
    key = settings.key()
    with _SHARED_LOCK:
        clients = _SHARED.get(key)
        if clients is None:
            clients = _SHARED[key] = CloudClients(settings)
        return clients


#: how many identities' clients (users' tokens, stacks' trusts) are kept at once
ACTING_CLIENTS = 256
_ACTING: OrderedDict[tuple[Any, ...], CloudClients] = OrderedDict()


def acting_clients(settings: CloudSettings) -> CloudClients:
    """The clients of one acting identity (a user's token, a stack's trust): reused while
    it is in use, the least recently used of :data:`ACTING_CLIENTS` dropped, so the
    tokens and trusts of stacks long gone are not kept by the process."""
    key = settings.key()
    with _SHARED_LOCK:
        clients = _ACTING.get(key)
        if clients is None:
            clients = _ACTING[key] = CloudClients(settings)
            while len(_ACTING) > ACTING_CLIENTS:
                _ACTING.popitem(last=False)
        else:
            _ACTING.move_to_end(key)
        return clients


def clients_from_conf(conf: Any) -> CloudClients:
    """The single-user Kiln's clients: credentials and settings from *conf*."""
    return shared_clients(CloudSettings.from_conf(conf))
