"""Process wiring: database, EngineService and the HTTP server, started and stopped in order.

One function runs each process kind (``all`` for ``kiln serve``, ``api``, ``engine``). The
order matters for a clean stop: on SIGTERM the listener closes first (no new requests),
in-flight requests are allowed to finish, then the engine is told to finish or checkpoint
its work, and only then is the database closed, so nothing is left half-written.

uvicorn's own signal handling re-raises the signal after a graceful stop, which would turn
a clean SIGTERM into exit status 143; Kiln handles the signals itself instead.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import gc
import logging
import os
import signal
import socket
import time
from collections.abc import Generator
from typing import TYPE_CHECKING, Any, Literal

import uvicorn
from oslo_config import cfg

from kiln import workers
from kiln.conf_loader import ConfigError, database_url, state_path
from kiln.stop_progress import report_stop_progress

if TYPE_CHECKING:
    from kiln.auth.passwords import StoredPasswords
    from kiln.auth.trusts import Trusts
    from kiln.db.records import UserCredsRecord
    from kiln.engine.service import RequestContext

LOG = logging.getLogger("kiln.server")

Role = Literal["all", "api", "api-cfn", "api-cloudwatch", "engine"]
#: The command that runs each role, as operators know it from the logs.
COMMAND: dict[str, str] = {"all": "serve", "api": "api", "api-cfn": "api-cfn",
                           "api-cloudwatch": "api-cloudwatch", "engine": "engine"}
#: Which HTTP APIs each role serves: the native API on [heat_api], the CloudFormation
#: query API on [heat_api_cfn], the CloudWatch API on [heat_api_cloudwatch].
LISTENERS: dict[str, tuple[str, ...]] = {
    "all": ("heat_api", "heat_api_cfn", "heat_api_cloudwatch"), "api": ("heat_api",),
    "api-cfn": ("heat_api_cfn",), "api-cloudwatch": ("heat_api_cloudwatch",),
    "engine": ()}
#: The roles that run the alarm watcher (kiln.alarms.watcher).
WATCHERS = ("all", "engine")
#: How each listener is named in messages.
API_NAMES = {"heat_api": "the native API", "heat_api_cfn": "the CloudFormation API",
             "heat_api_cloudwatch": "the CloudWatch API"}
#: ``kiln serve``'s optional listeners, each with the [kiln_api] option that turns it off
OPTIONAL = {"heat_api_cfn": "serve_cfn", "heat_api_cloudwatch": "serve_cloudwatch"}
#: ``kiln serve``'s flags (kiln.cli) that move each listener and turn an optional one off
SERVE_FLAGS = {"heat_api": ("--port", ""), "heat_api_cfn": ("--cfn-port", "--no-cfn"),
               "heat_api_cloudwatch": ("--cloudwatch-port", "--no-cloudwatch")}


class StartupError(Exception):
    """The process cannot start for an operational reason (port taken, database down)."""


class _Server(uvicorn.Server):
    """uvicorn's server with signal handling left to Kiln (see module docstring), and an
    event set once it has started or failed to, so that Kiln says it is serving only
    when every listener is."""

    def __init__(self, config: uvicorn.Config) -> None:
        super().__init__(config)
        self.ready = asyncio.Event()

    @contextlib.contextmanager
    def capture_signals(self) -> Generator[None, None, None]:
        yield

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        try:
            await super().startup(sockets)
        finally:
            self.ready.set()

    async def serve(self, sockets: list[socket.socket] | None = None) -> None:
        try:
            await super().serve(sockets)
        finally:
            self.ready.set()


def listeners(conf: cfg.ConfigOpts, role: Role) -> tuple[str, ...]:
    """The APIs this process serves: ``kiln serve``'s optional ones only when enabled."""
    return tuple(group for group in LISTENERS[role]
                 if role != "all" or group not in OPTIONAL
                 or getattr(conf.kiln_api, OPTIONAL[group]))


def bind_listener(conf: cfg.ConfigOpts, group: str, role: Role) -> socket.socket:
    """:func:`bind_socket` for one API, a failure saying which option (in ``kiln serve``,
    which flag) moves the listener, and for an optional one which turns it off."""
    options = getattr(conf, group)
    try:
        return bind_socket(options.bind_host, options.bind_port)
    except StartupError as exc:
        where = f"[{group}] bind_host, bind_port"
        if role != "all":
            raise StartupError(f"{exc}; that is {API_NAMES[group]}'s address: move it with "
                               f"{where}") from None
        move, off = SERVE_FLAGS[group]
        hint = f"move it with {move} PORT ({where})"
        if off:
            hint += f" or turn it off with {off} ([kiln_api] {OPTIONAL[group]} = false)"
        raise StartupError(f"{exc}; that is {API_NAMES[group]}'s address: {hint}") from None


def bind_socket(host: str, port: int) -> socket.socket:
    """Bind the API's listening socket up front so a taken port is a clear startup error."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM,
                                   flags=socket.AI_PASSIVE)
    except socket.gaierror as exc:
        raise StartupError(f"cannot resolve bind_host {host!r}: {exc.strerror}") from None
    family, socktype, proto, _, addr = infos[0]
    sock = socket.socket(family, socktype, proto)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind(addr)
    except OSError as exc:
        sock.close()
        reason = "address already in use" if exc.errno == errno.EADDRINUSE else exc.strerror
        raise StartupError(f"cannot listen on {host}:{port}: {reason}") from None
    sock.set_inheritable(True)
    return sock


def prepare_database_dir(conf: cfg.ConfigOpts, url: str) -> None:
    """Create state_path and the SQLite file's directory, so a fresh machine just works."""
    try:
        os.makedirs(state_path(conf), exist_ok=True)
        if url.startswith("sqlite:///") and url != "sqlite:///:memory:":
            os.makedirs(os.path.dirname(url[len("sqlite:///"):]) or ".", exist_ok=True)
    except OSError as exc:
        raise ConfigError(f"cannot create state directory: {exc.strerror}: "
                          f"{exc.filename}") from None


def build_service(conf: cfg.ConfigOpts, role: Role) -> Any:
    """The EngineService for this process (docs/contracts.md §6).

    Every role gets the same in-process engine. Without ``transport_url`` each runs the
    actions it accepts itself; with it, :func:`build_messaging` makes the API roles hand
    them to the ``kiln engine`` processes (kiln.rpc.wiring).
    """
    from kiln.engine.service import EngineService
    from kiln.oslo_notifier import build_notifier

    return EngineService(conf=conf, db_url=database_url(conf),
                         delegation=build_delegation(conf), notifier=build_notifier(conf))


def build_messaging(conf: cfg.ConfigOpts, role: Role, service: Any) -> Any:
    """With ``[DEFAULT] transport_url``: the process's part on the broker (kiln.rpc.wiring),
    attached to ``service`` before it starts; None (nothing imported) without."""
    if "transport_url" not in conf or not conf.transport_url:
        return None
    from kiln.rpc.wiring import build

    messaging = build(conf, role)
    if messaging is not None:
        messaging.attach(service)
    return messaging


def build_delegation(conf: cfg.ConfigOpts,
                     ) -> TrustDelegation | PasswordDelegation | NoTrustee | None:
    """The engine's deferred authentication in keystone mode: Keystone trusts
    (kiln.auth.trusts) with ``deferred_auth_method = trusts`` and a ``[trustee]`` (none
    without: :class:`NoTrustee`), the owner's stored password (kiln.auth.passwords) with
    ``password``; None otherwise."""
    from kiln.conf_identity import flavor

    if flavor(conf) != "keystone":
        return None
    if conf.deferred_auth_method == "password":
        from kiln.auth.passwords import StoredPasswords

        return PasswordDelegation(StoredPasswords(conf))
    if not conf.trustee.auth_type:
        LOG.warning("deferred_auth_method = trusts but [trustee] has no auth_type: stacks "
                    "get no trust, and work no user request is behind (signals, scaling, "
                    "recovery) cannot call OpenStack for them")
        return NoTrustee()
    from kiln.auth.trusts import Trusts

    return TrustDelegation(Trusts(conf))


class TrustDelegation:
    """The engine's Delegation (kiln.engine.model.delegation) over Keystone's trusts
    (kiln.auth.trusts.Trusts): the identity layer speaks plain values, the engine its
    RequestContext and stored credentials; this is where the two meet."""

    method = "trusts"

    def __init__(self, trusts: Trusts) -> None:
        self.trusts = trusts
        self.reauthenticate: bool = trusts.reauthenticate

    async def delegate(self, ctx: RequestContext, stack_id: str) -> UserCredsRecord | None:
        from kiln.db.records import UserCredsRecord
        from kiln.errors import AuthorizationFailure

        if not ctx.auth_token:
            raise AuthorizationFailure("A trust can only be made with the caller's token.")
        trust_id = await self.trusts.create(token=ctx.auth_token, user_id=ctx.user_id,
                                            project_id=ctx.project_id, roles=ctx.roles)
        if trust_id is None:
            return None
        return UserCredsRecord(stack_id=stack_id, method="trusts",
                               trustor_user_id=ctx.user_id, project_id=ctx.project_id,
                               trust_id=trust_id, username=ctx.username)

    async def act_as(self, creds: UserCredsRecord, stack_name: str) -> RequestContext:
        from kiln.engine.service import RequestContext
        from kiln.errors import AuthorizationFailure

        if creds.method != "trusts" or not creds.trust_id:
            raise AuthorizationFailure(f"Stack {stack_name} has no trust Kiln can act "
                                       f"through (deferred_auth_method {creds.method}).")
        roles = await self.trusts.use(creds.trust_id, creds.trustor_user_id, stack_name)
        return RequestContext(project_id=creds.project_id, user_id=creds.trustor_user_id,
                              username=creds.username or "", roles=roles, is_admin=False,
                              client_auth=self.trusts.client_auth(creds.trust_id))

    async def revoke(self, creds: UserCredsRecord, ctx: RequestContext | None) -> None:
        if creds.trust_id:
            await self.trusts.delete(
                creds.trust_id, trustor_user_id=creds.trustor_user_id,
                caller_user_id=ctx.user_id if ctx is not None else None,
                caller_token=ctx.auth_token if ctx is not None else None,
                stack_id=creds.stack_id)


class NoTrustee:
    """Keystone mode with ``deferred_auth_method = trusts`` but no ``[trustee]`` to give
    trusts to: stacks get none, and the engine's work no request is behind then has no
    identity to call OpenStack with (kiln.engine.runtime.acting), rather than Kiln's own
    credentials (Heat 27 cannot create such a stack at all: its trust creation fails)."""

    method = "trusts"
    reauthenticate = False

    async def delegate(self, ctx: RequestContext, stack_id: str) -> UserCredsRecord | None:
        return None

    async def act_as(self, creds: UserCredsRecord, stack_name: str) -> RequestContext:
        from kiln.errors import AuthorizationFailure

        raise AuthorizationFailure(f"Kiln cannot use the trust of stack {stack_name}: "
                                   "[trustee] is not configured.")

    async def revoke(self, creds: UserCredsRecord, ctx: RequestContext | None) -> None:
        return None


class PasswordDelegation:
    """The engine's Delegation over stored passwords (kiln.auth.passwords): Heat's
    ``deferred_auth_method = password``. Nothing lives in Keystone, so revoking is only
    forgetting (the engine deletes the stored row)."""

    method = "password"
    reauthenticate = False  # Heat's reauthentication_auth_method knows only trusts

    def __init__(self, passwords: StoredPasswords) -> None:
        self.passwords = passwords

    async def delegate(self, ctx: RequestContext, stack_id: str) -> UserCredsRecord | None:
        from kiln.db.records import UserCredsRecord

        if not ctx.auth_key:  # a stack needing none (the engine checked) keeps none
            return None
        await self.passwords.login(user_id=ctx.user_id, password=ctx.auth_key,
                                   project_id=ctx.project_id,
                                   purpose="to keep for the new stack (X-Auth-Key)")
        return UserCredsRecord(stack_id=stack_id, method="password",
                               trustor_user_id=ctx.user_id, project_id=ctx.project_id,
                               username=ctx.auth_user or ctx.username,
                               password=ctx.auth_key)

    async def act_as(self, creds: UserCredsRecord, stack_name: str) -> RequestContext:
        from kiln.engine.service import RequestContext
        from kiln.errors import AuthorizationFailure

        if creds.method != "password" or not creds.password:
            raise AuthorizationFailure(f"Stack {stack_name} has no stored password Kiln "
                                       f"can act with (it has {creds.method}).")
        token, roles = await self.passwords.login(
            user_id=creds.trustor_user_id, password=creds.password,
            project_id=creds.project_id, purpose=f"to act for stack {stack_name}")
        return RequestContext(project_id=creds.project_id, user_id=creds.trustor_user_id,
                              username=creds.username or "", roles=roles, is_admin=False,
                              auth_token=token,
                              client_auth=self.passwords.client_auth(
                                  creds.trustor_user_id, creds.password, creds.project_id))

    async def revoke(self, creds: UserCredsRecord, ctx: RequestContext | None) -> None:
        return None


def build_alarms(conf: cfg.ConfigOpts, service: Any, role: Role) -> Any:
    """The alarm side of the process (kiln.engine.service.alarm_process): the CloudWatch
    API's service and, in ``kiln serve`` and ``kiln engine``, the watcher. Built once the
    engine has started, on its store; it imports no API."""
    from kiln.engine.service.alarm_process import AlarmProcess
    return AlarmProcess(conf, service, watch=role in WATCHERS)


async def start_service(service: Any, db_url: str) -> None:
    """Start the engine (it opens the database), mapping database problems to clear errors."""
    from sqlalchemy.exc import ArgumentError, DatabaseError, OperationalError
    try:
        await service.start()
    except ArgumentError as exc:
        raise ConfigError(f"invalid [database] connection: {exc}") from None
    except ModuleNotFoundError as exc:
        raise ConfigError(
            f"[database] connection needs the Python package {exc.name!r}; install it "
            "(e.g. pip install 'kiln[postgresql]' or 'kiln[mysql]')") from None
    except OperationalError as exc:
        raise StartupError(f"cannot open the database: {exc.orig}") from None
    except DatabaseError as exc:
        # SQLite's answer to a file that is not (or no longer) a database: a corrupt or
        # truncated file, or another file at the configured path
        raise StartupError(f"cannot open the database {_database_name(db_url)}: "
                           f"{exc.orig}") from None


def _database_name(db_url: str) -> str:
    """The SQLite file at ``db_url`` (the URL without credentials otherwise)."""
    from sqlalchemy.engine import make_url
    url = make_url(db_url)
    if url.get_backend_name() == "sqlite" and url.database:
        return f"file {os.path.abspath(url.database)}"
    return url.render_as_string(hide_password=True)


#: Seconds the engine gets beyond graceful_shutdown_timeout to checkpoint and close the
#: database: it drains running actions within graceful_shutdown_timeout itself.
STOP_GRACE = 10.0


async def stop_service(service: Any,
                       timeout: float | None) -> None:  # the configured shutdown budget  # noqa: ASYNC109
    """Let the engine finish or checkpoint its work; bounded so a stop cannot hang forever."""
    bound = None if timeout is None else timeout + STOP_GRACE
    try:
        await asyncio.wait_for(service.stop(), bound)
    except TimeoutError:
        LOG.error("engine did not finish or checkpoint its work within %ss", bound)


def _install_signal_handlers(stop: asyncio.Event) -> None:
    loop = asyncio.get_running_loop()
    hits = {"count": 0}

    def on_signal(name: str) -> None:
        hits["count"] += 1
        if hits["count"] > 1:
            LOG.warning("second %s: exiting without waiting", name)
            os._exit(1)
        LOG.info("received %s, stopping", name)
        stop.set()

    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, on_signal, sig.name)


def freeze_startup_objects() -> None:
    """Exclude everything that exists once the process is up (modules, classes,
    functions, plugin registries: ~90,000 objects) from every later garbage collection.
    They live as long as the process, yet each full collection would walk them all: with
    500 stacks present that pass took over 100 ms, stalling every request in flight
    (bench/api_bench.py's p99). A full pass now walks only what requests and stacks
    made since.

    The youngest generation's threshold goes from 700 to 7,000 allocations: a large
    create makes some 20 tracked objects per resource that live until the action ends,
    and at 700 the collector ran so often that a 100,000-resource create spent a growing
    share in it (12.4x the 10,000 case in server CPU; 9.9x with 7,000; bench/README.md,
    "Garbage collection at 100,000 resources"). The older generations keep their
    defaults."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(7000, 10, 10)


def _make_http_server(app: Any, conf: cfg.ConfigOpts) -> _Server:
    timeout = conf.graceful_shutdown_timeout or None
    config = uvicorn.Config(
        app, lifespan="auto", log_config=None, access_log=False, server_header=False, ws="none",
        timeout_graceful_shutdown=timeout, proxy_headers=False)
    return _Server(config)


async def run(conf: cfg.ConfigOpts, role: Role, *, started_at: float | None = None,
              stop: asyncio.Event | None = None) -> None:
    """Run one Kiln process until SIGTERM/SIGINT, then stop in order (module docstring).

    An embedding caller (a test) may pass its own ``stop`` event instead of signals.
    """
    if stop is None:
        stop = asyncio.Event()
        _install_signal_handlers(stop)
    prepare_database_dir(conf, database_url(conf))
    from kiln import encryption_key
    encryption_key.resolve(conf)
    socks: list[tuple[str, socket.socket]] = []
    try:
        for group in listeners(conf, role):
            socks.append((group, workers.inherited(group) or bind_listener(conf, group, role)))
        service = build_service(conf, role)
        messaging = build_messaging(conf, role, service)
        await start_service(service, database_url(conf))
        if messaging is not None:
            await messaging.start(service)
    except BaseException:
        for _, sock in socks:
            sock.close()
        raise
    _warn_of_unserved_urls(conf, role)
    encryption_key.log_notes()  # once started: a failed start's one line stays the first
    alarms = build_alarms(conf, service, role)
    alarms.start()
    freeze_startup_objects()
    timeout = conf.graceful_shutdown_timeout or None
    servers: list[_Server] = []
    progress = asyncio.create_task(report_stop_progress(stop, servers, service, timeout))
    try:
        if not socks:
            if not workers.announce_ready():
                LOG.info("kiln engine running")
            await stop.wait()
        else:
            await _serve_http(conf, role, service, socks, stop, started_at, alarms, servers)
    finally:
        await alarms.stop()
        if messaging is not None:
            await messaging.stop()  # no more calls arrive while the engine stops
        await stop_service(service, timeout)
        progress.cancel()
        for _, sock in socks:
            sock.close()
    LOG.info("kiln %s stopped", COMMAND[role])


def _warn_of_unserved_urls(conf: cfg.ConfigOpts, role: Role) -> None:
    """``kiln serve --no-cfn`` still hands servers URLs on the CFN API (metadata, wait
    conditions, signals): say so once, unless the options point them elsewhere."""
    if role != "all" or conf.kiln_api.serve_cfn:
        return
    unset = [name for name in ("heat_metadata_server_url", "heat_waitcondition_server_url")
             if not getattr(conf, name)]
    if unset:
        LOG.warning("the CloudFormation API is off ([kiln_api] serve_cfn = false): the "
                    "metadata, wait condition and signal URLs servers are given point at "
                    "[heat_api_cfn] where nothing listens, unless %s name a CloudFormation "
                    "API served elsewhere (kiln api-cfn)", " and ".join(unset))


def _app_for(group: str, service: Any, conf: cfg.ConfigOpts, alarms: Any) -> Any:
    if group == "heat_api_cloudwatch":
        from kiln.api.cloudwatch.app import cloudwatch_app
        return cloudwatch_app(alarms.cloudwatch, service, conf)
    if group == "heat_api_cfn":
        from kiln.api.cfn.app import create_cfn_app
        return create_cfn_app(service, conf)
    from kiln.api.app import create_app
    return create_app(service, conf)


#: How each listener is named in the "Kiln is serving" line.
SHORT_NAMES = {"heat_api": "API", "heat_api_cfn": "CFN", "heat_api_cloudwatch": "CloudWatch"}


def _url(sock: socket.socket, group: str) -> str:
    host, port = sock.getsockname()[:2]
    host = f"[{host}]" if ":" in host else host
    return f"http://{host}:{port}" + ("/v1/" if group == "heat_api_cfn" else "")


def _log_serving(conf: cfg.ConfigOpts, role: Role, socks: list[tuple[str, socket.socket]],
                 started_at: float | None) -> None:
    """The one line saying where everything is: a newcomer's first question."""
    urls = {group: _url(sock, group) for group, sock in socks}
    parts: list[str] = []
    for group, url in urls.items():
        parts.append(f"{SHORT_NAMES[group]} {url}")
        if group == "heat_api" and conf.kiln_api.dashboard:
            parts.append(f"dashboard {url}/")
    off = [f"{SHORT_NAMES[group]} off" for group in LISTENERS[role] if group not in urls]
    LOG.info("Kiln is serving: %s%s", ", ".join(parts), "; " + ", ".join(off) if off else "",
             extra={"command": COMMAND[role], "listeners": urls,
                    "startup_seconds": None if started_at is None
                    else round(time.monotonic() - started_at, 3)})


async def _serve_http(conf: cfg.ConfigOpts, role: Role, service: Any,
                      socks: list[tuple[str, socket.socket]], stop: asyncio.Event,
                      started_at: float | None, alarms: Any, servers: list[_Server]) -> None:
    from kiln.logging import RequestIdMiddleware
    serving: list[asyncio.Task[None]] = []
    apps: list[Any] = []
    for group, sock in socks:
        app = _app_for(group, service, conf, alarms)
        apps.append(app)
        http = _make_http_server(RequestIdMiddleware(app), conf)
        servers.append(http)
        serving.append(asyncio.create_task(http.serve(sockets=[sock])))
    for http in servers:
        await http.ready.wait()
    if all(http.started for http in servers) and not workers.announce_ready():
        _log_serving(conf, role, socks, started_at)
    stopping = asyncio.create_task(stop.wait())
    done, _ = await asyncio.wait({*serving, stopping}, return_when=asyncio.FIRST_COMPLETED)
    if stopping not in done:
        stopping.cancel()
        for http in servers:
            http.should_exit = True
        for outcome in await asyncio.gather(*serving, return_exceptions=True):
            if isinstance(outcome, BaseException):
                raise outcome  # an unexpected failure of an HTTP server
        raise StartupError("the HTTP server stopped unexpectedly")
    for app in apps:
        streams = getattr(app.state, "event_streams", None)
        if streams is not None:
            streams.close()  # open event streams end now rather than at the timeout
    for http in servers:
        http.should_exit = True  # closes the listeners, waits for in-flight requests
    await asyncio.gather(*serving)


#: glibc's mallopt parameter for the number of malloc arenas
_M_ARENA_MAX = -8


def limit_malloc_arenas() -> bool:
    """Let every thread share glibc's one malloc arena, unless ``MALLOC_ARENA_MAX`` is
    set (then glibc already follows it).

    glibc gives each thread that allocates concurrently (the database writer, the reader
    pool, sqlite inside them) an arena of its own, and an arena keeps what was freed in
    it. On a 10,000-resource update that held 6-10 MB more than one shared arena, at the
    same speed (bench/README.md). Called before the server starts any thread; a C
    library without ``mallopt`` (not glibc) is left alone. True if the limit was set."""
    if "MALLOC_ARENA_MAX" in os.environ:
        return False
    try:
        import ctypes

        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return False
    return bool(mallopt(_M_ARENA_MAX, 1))


def run_blocking(conf: cfg.ConfigOpts, role: Role, *, started_at: float | None = None) -> None:
    """Run the process, or the several its options ask for (kiln.workers)."""
    limit_malloc_arenas()
    if not workers.supervise(conf, role, started_at=started_at):
        run_in_process(conf, role, started_at=started_at)


def run_in_process(conf: cfg.ConfigOpts, role: Role, *,
                   started_at: float | None = None) -> None:
    """Run ``run`` on uvloop when available (faster sockets), else the default loop."""
    loop_factory: Any = None
    with contextlib.suppress(ImportError):
        import uvloop
        loop_factory = uvloop.new_event_loop
    with asyncio.Runner(loop_factory=loop_factory) as runner:
        runner.run(run(conf, role, started_at=started_at))
