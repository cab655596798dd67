"""Several processes of one kind, as Heat's operators configure them: ``[heat_api]
workers`` (``[heat_api_cfn]``, ``[heat_api_cloudwatch]`` likewise) and ``[DEFAULT]
num_engine_workers``.

One code path for every role (kiln.server): the parent binds the listening sockets, then
forks the worker processes, each of which runs the ordinary single-process server on the
inherited sockets. On Linux each child has a socket of its own on the same address
(SO_REUSEPORT), and the kernel spreads new connections evenly over them: with one shared
socket the first child to wake accepts every connection queued at that moment, so 20
keep-alive clients connecting together all landed on one process. A child's socket
stays with the parent, so connections queued on it while it restarts wait for its
replacement rather than being refused. The parent does
nothing else: it holds no database pool, event loop or thread, so nothing it made is
shared into a child, and it can fork a replacement for a child that dies at any time. It
forwards SIGTERM/SIGINT for a graceful stop of all, logs the one "Kiln is serving" line
once every child serves, and exits non-zero with the children's own error when they cannot
start.

A child reports to the parent over a pipe: ``R`` once it serves, ``F`` with its exit
status and error when it fails to start. Each child is in a process group of its own (a
terminal's Ctrl-C reaches the parent only, which stops the children once, in order) and
watches a pipe only the parent writes to, so a parent killed outright still stops its
children.

With one process (the default) none of this runs: ``kiln serve`` stays one process.
"""

from __future__ import annotations

import contextlib
import errno
import logging
import os
import select
import signal
import socket
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from types import FrameType
from typing import Any, NoReturn

from oslo_config import cfg

from kiln.conf_loader import ConfigError

LOG = logging.getLogger("kiln.workers")

#: the option that sets each role's process count: (group or None for DEFAULT, name)
OPTION: dict[str, tuple[str | None, str]] = {
    "all": ("heat_api", "workers"), "api": ("heat_api", "workers"),
    "api-cfn": ("heat_api_cfn", "workers"),
    "api-cloudwatch": ("heat_api_cloudwatch", "workers"),
    "engine": (None, "num_engine_workers")}
#: what one process of each role is called in messages
KIND = {"all": "Kiln", "api": "API", "api-cfn": "CloudFormation API",
        "api-cloudwatch": "CloudWatch API", "engine": "engine"}
#: Heat's num_engine_workers when unset: max(4, CPUs) (heat.cmd.engine)
HEAT_MIN_ENGINE_WORKERS = 4

#: consecutive failed starts (children dying before they serve) before the parent gives up
MAX_START_FAILURES = 5
#: first delay before restarting a child that died soon after its start, doubled each time
RESTART_DELAY = 0.5
RESTART_DELAY_MAX = 30.0
#: a child up this long before it died is restarted at once
STABLE_AFTER = 10.0
#: seconds the parent waits for its children beyond their own stop budget before killing
STOP_MARGIN = 20.0
#: exit statuses a child reports (kiln.cli's: configuration errors are 2)
EXIT_CONFIG, EXIT_RUNTIME = 2, 1


def _option(conf: cfg.ConfigOpts, group: str | None, name: str) -> Any:
    holder = conf if group is None else getattr(conf, group)
    return getattr(holder, name)


def transport_url(conf: cfg.ConfigOpts) -> str | None:
    """``[DEFAULT] transport_url`` when a config file sets it. The option exists only once
    a file sets a messaging option (kiln.oslo_notifier), and oslo.messaging's default
    (``rabbit://``) is not a broker the operator chose: Kiln without one dispatches in
    its own process."""
    try:
        value = conf.transport_url
        where = conf.get_location("transport_url")
    except (cfg.NoSuchOptError, AttributeError):
        return None
    if not value or where is None or where.location in (cfg.Locations.opt_default,
                                                        cfg.Locations.set_default):
        return None
    return str(value)


def process_count(conf: cfg.ConfigOpts, role: str) -> int:
    """How many processes ``role`` runs, by Heat's rules: ``workers = 0`` is one per CPU
    (Heat's processutils.get_worker_count); ``num_engine_workers`` unset (or 0) is Heat's
    max(4, CPUs) where Heat would fork engines, that is with a broker
    (``transport_url``), and one engine otherwise: without a broker an engine process
    receives no work, so more of them would only add load."""
    group, name = OPTION[role]
    value = _option(conf, group, name)
    cpus = os.cpu_count() or 1
    if role == "engine":
        if not value:
            return max(HEAT_MIN_ENGINE_WORKERS, cpus) if transport_url(conf) else 1
        return int(value)
    return cpus if value == 0 else int(value)


def check(conf: cfg.ConfigOpts, role: str, count: int) -> None:
    """Refuse several API processes without a broker: each would run the stack actions
    it accepts itself, so a request for a stack another process runs (a signal, a
    cancel, a delete) would be refused or lost."""
    if count <= 1 or role == "engine" or transport_url(conf):
        return
    group, name = OPTION[role]
    raise ConfigError(
        f"[{group}] {name} = {_option(conf, group, name)} ({count} processes) needs "
        "[DEFAULT] transport_url: without a message broker each API process runs the "
        "stack actions it accepts itself, so a request for a stack another process is "
        "running (a signal, a cancel, a delete) would be refused. Set [DEFAULT] "
        "transport_url (e.g. rabbit://USER:PASSWORD@HOST:5672/) and run `kiln engine` "
        f"for the stack actions, or set [{group}] {name} = 1")


# --- the child's side --------------------------------------------------------------------

@dataclass
class _Child:
    index: int
    sockets: dict[str, socket.socket]
    status: int  # the pipe's write end

    def send(self, line: str) -> None:
        data = (line.replace("\n", " ")[:3000] + "\n").encode("utf-8", "replace")
        with contextlib.suppress(OSError):
            os.write(self.status, data)  # one write under PIPE_BUF: never interleaved


_CHILD: _Child | None = None


def inherited(group: str) -> socket.socket | None:
    """In a worker process, the listening socket of ``group`` its parent bound."""
    return None if _CHILD is None else _CHILD.sockets.get(group)


def announce_ready() -> bool:
    """In a worker process, tell the parent this process serves (the parent logs that
    once for all of them) and return True; False in a single process, which says so
    itself."""
    if _CHILD is None:
        return False
    _CHILD.send(f"R {_CHILD.index}")
    return True


class _WorkerTag(logging.Filter):
    """Stamps each record with the worker's index and pid (JSON fields ``worker`` and
    ``pid``): with several processes writing one log, which one said what."""

    def __init__(self, index: int) -> None:
        super().__init__()
        self.index = index
        self.pid = os.getpid()

    def filter(self, record: logging.LogRecord) -> bool:
        record.worker = self.index
        record.pid = self.pid
        return True


def _watch_parent(lifeline: int) -> None:
    """Stop this worker (as SIGTERM would) when its parent is gone: the lifeline's only
    writer is the parent, so its end of file means the parent exited or was killed."""
    def watch() -> None:
        while True:
            try:
                if not os.read(lifeline, 1):
                    break
            except InterruptedError:
                continue
            except OSError:
                break
        os.kill(os.getpid(), signal.SIGTERM)

    threading.Thread(target=watch, name="kiln-worker-lifeline", daemon=True).start()


def _child_main(index: int, sockets: dict[str, socket.socket], status: int,
                lifeline: int, close: list[int], run: Callable[[], None]) -> NoReturn:
    global _CHILD
    code = EXIT_RUNTIME
    try:
        signal.set_wakeup_fd(-1)
        for sig in (signal.SIGTERM, signal.SIGCHLD):
            signal.signal(sig, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        for fd in close:
            with contextlib.suppress(OSError):
                os.close(fd)
        with contextlib.suppress(OSError):
            os.setpgid(0, 0)
        _CHILD = _Child(index, sockets, status)
        tag = _WorkerTag(index)
        for handler in logging.getLogger().handlers:
            handler.addFilter(tag)
        _watch_parent(lifeline)
        run()
        code = 0
    except ConfigError as exc:
        code = EXIT_CONFIG
        if _CHILD is not None:
            _CHILD.send(f"F {index} {code} {exc}")
    except BaseException as exc:  # reported to the parent, which decides what follows
        from kiln.server import StartupError
        if isinstance(exc, StartupError):
            message = str(exc)
        else:
            logging.getLogger("kiln").exception("kiln worker %d failed", index)
            message = "unexpected internal error (details in the log)"
        if _CHILD is not None:
            _CHILD.send(f"F {index} {code} {message}")
    finally:
        logging.shutdown()
        with contextlib.suppress(Exception):
            sys.stdout.flush()
            sys.stderr.flush()
        os._exit(code)


# --- the parent's side -------------------------------------------------------------------

@dataclass
class _Slot:
    index: int
    pid: int = 0
    started: float = 0.0
    ready: bool = False
    #: consecutive starts that failed before serving, and the next restart's delay
    failures: int = 0
    delay: float = RESTART_DELAY
    restart_at: float | None = None
    error: tuple[int, str] | None = None


@dataclass
class Supervisor:
    """Forks ``count`` children running ``run`` and keeps them running until told to
    stop (SIGTERM/SIGINT). ``on_ready`` is called once, when every child first serves."""

    kind: str
    count: int
    run: Callable[[], None]
    #: each slot's listening sockets by listener (the same ones for all without
    #: SO_REUSEPORT)
    sockets: list[dict[str, socket.socket]]
    on_ready: Callable[[list[int]], None]
    stop_budget: float | None
    slots: list[_Slot] = field(default_factory=list)
    _signals: list[int] = field(default_factory=list)

    def serve(self) -> None:
        """Run until every child has stopped; raises ConfigError or StartupError (kiln.cli
        reports them) when the children cannot start or did not stop cleanly."""
        self._status_r, self._status_w = os.pipe()
        self._life_r, self._life_w = os.pipe()
        self._wake_r, self._wake_w = os.pipe()
        for fd in (self._status_r, self._wake_r, self._wake_w):
            os.set_blocking(fd, False)
        self._buffer = b""
        previous = {sig: signal.getsignal(sig)
                    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGCHLD)}
        old_wakeup = signal.set_wakeup_fd(self._wake_w)
        for sig in previous:
            signal.signal(sig, self._on_signal)
        try:
            self._supervise()
        finally:
            signal.set_wakeup_fd(old_wakeup)
            for sig, handler in previous.items():
                signal.signal(sig, handler)
            for fd in (self._status_r, self._status_w, self._life_r, self._life_w,
                       self._wake_r, self._wake_w):
                with contextlib.suppress(OSError):
                    os.close(fd)

    def _on_signal(self, signum: int, frame: FrameType | None) -> None:
        if signum != signal.SIGCHLD:
            self._signals.append(signum)

    def _spawn(self, slot: _Slot) -> None:
        sys.stdout.flush()
        sys.stderr.flush()
        for handler in logging.getLogger().handlers:
            handler.flush()
        pid = os.fork()
        if pid == 0:
            mine = self.sockets[slot.index]
            others = [sock.fileno() for socks in self.sockets for sock in socks.values()
                      if sock not in mine.values() and sock.fileno() >= 0]
            _child_main(slot.index, mine, self._status_w, self._life_r,
                        [self._status_r, self._life_w, self._wake_r, self._wake_w, *others],
                        self.run)
        slot.pid, slot.started, slot.ready, slot.restart_at = pid, time.monotonic(), False, None
        slot.error = None
        LOG.info("started %s process %d (pid %d)", self.kind, slot.index, pid,
                 extra={"worker": slot.index, "worker_pid": pid})

    def _supervise(self) -> None:
        self.slots = [_Slot(i) for i in range(self.count)]
        for slot in self.slots:
            self._spawn(slot)
        all_ready_once = False
        stopping: float | None = None  # when the stop began
        give_up: tuple[int, str] | None = None
        unclean: list[str] = []
        while True:
            now = time.monotonic()
            waits = [s.restart_at - now for s in self.slots
                     if s.restart_at is not None and stopping is None]
            timeout = max(0.0, min([1.0, *waits]))
            with contextlib.suppress(InterruptedError):
                select.select([self._status_r, self._wake_r], [], [], timeout)
            with contextlib.suppress(OSError):
                while os.read(self._wake_r, 512):
                    pass
            signals, self._signals[:] = list(self._signals), []
            for signum in signals:
                if stopping is None:
                    LOG.info("received %s, stopping the %s processes",
                             signal.Signals(signum).name, self.kind)
                    stopping = time.monotonic()
                    self._begin_stop()
                else:  # a second signal: the children exit without waiting, as one would
                    LOG.warning("second %s: the %s processes exit without waiting",
                                signal.Signals(signum).name, self.kind)
                    self._kill(signal.SIGTERM)
            self._read_status()
            if not all_ready_once and all(s.ready for s in self.slots) and stopping is None:
                all_ready_once = True
                self.on_ready([s.pid for s in self.slots])
            for slot, pid, status in self._reap():
                self._read_status()
                described = _describe(status)
                if stopping is not None:
                    if status != 0:
                        unclean.append(f"{self.kind} process {slot.index} (pid {pid}) "
                                       f"{described} while stopping")
                    continue
                failed_at_start = not slot.ready
                error = slot.error or (EXIT_RUNTIME, f"{self.kind} process {slot.index} "
                                       f"(pid {pid}) {described} before it served")
                if failed_at_start and not all_ready_once:
                    give_up = error  # the first start failed: as one process would, stop
                elif failed_at_start:
                    slot.failures += 1
                    if slot.failures >= MAX_START_FAILURES:
                        give_up = (error[0], f"{self.kind} processes keep dying at start "
                                   f"({slot.failures} times in a row); the last: {error[1]}")
                if give_up is not None:
                    LOG.error("%s", give_up[1])
                    stopping = time.monotonic()
                    self._begin_stop()
                    continue
                lived = time.monotonic() - slot.started
                if lived >= STABLE_AFTER and not failed_at_start:
                    slot.delay = RESTART_DELAY
                    slot.restart_at = time.monotonic()
                else:
                    slot.restart_at = time.monotonic() + slot.delay
                    slot.delay = min(slot.delay * 2, RESTART_DELAY_MAX)
                LOG.warning("%s process %d (pid %d) %s; restarting it%s", self.kind,
                            slot.index, pid, described,
                            "" if slot.restart_at <= time.monotonic()
                            else f" in {slot.restart_at - time.monotonic():.1f} s",
                            extra={"worker": slot.index, "worker_pid": pid})
            if stopping is None:
                for slot in self.slots:
                    if slot.restart_at is not None and slot.restart_at <= time.monotonic():
                        self._spawn(slot)
            else:
                for slot in self.slots:
                    slot.restart_at = None
                if not any(s.pid for s in self.slots):
                    break
                if (self.stop_budget is not None
                        and time.monotonic() - stopping > self.stop_budget + STOP_MARGIN):
                    LOG.error("%s processes still running %.0f s after the stop: killing "
                              "them", self.kind, time.monotonic() - stopping)
                    self._kill(signal.SIGKILL)
        if give_up is not None:
            code, message = give_up
            if code == EXIT_CONFIG:
                raise ConfigError(message)
            from kiln.server import StartupError
            raise StartupError(message)
        if unclean:
            from kiln.server import StartupError
            raise StartupError("; ".join(unclean))

    def _begin_stop(self) -> None:
        for socks in self.sockets:
            for sock in socks.values():
                sock.close()  # no new connections queue where no child will accept them
        self._kill(signal.SIGTERM)

    def _kill(self, sig: int) -> None:
        for slot in self.slots:
            if slot.pid:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(slot.pid, sig)

    def _read_status(self) -> None:
        while True:
            try:
                data = os.read(self._status_r, 65536)
            except BlockingIOError:
                break
            except OSError as exc:
                if exc.errno == errno.EINTR:
                    continue
                break
            if not data:
                break
            self._buffer += data
        *lines, self._buffer = self._buffer.split(b"\n")
        for raw in lines:
            parts = raw.decode("utf-8", "replace").split(" ", 3)
            try:
                slot = self.slots[int(parts[1])]
            except (IndexError, ValueError):
                continue
            if parts[0] == "R":
                slot.ready = True
                slot.failures = 0
            elif parts[0] == "F" and len(parts) == 4:
                slot.error = (int(parts[2]), parts[3])

    def _reap(self) -> list[tuple[_Slot, int, int]]:
        """The children that exited since the last call: (slot, pid, exit code; minus
        the signal that killed it); their slots are left without a process."""
        dead = []
        for slot in self.slots:
            if not slot.pid:
                continue
            try:
                pid, status = os.waitpid(slot.pid, os.WNOHANG)
                code = os.waitstatus_to_exitcode(status) if pid else 0
            except ChildProcessError:  # reaped elsewhere: its status is lost
                pid, code = slot.pid, EXIT_RUNTIME
            if pid:
                dead.append((slot, pid, code))
                slot.pid = 0
        return dead


def _describe(code: int) -> str:
    if code < 0:
        with contextlib.suppress(ValueError):
            return f"was killed by {signal.Signals(-code).name}"
        return f"was killed by signal {-code}"
    return f"exited with status {code}"


def _spread(probe: socket.socket, count: int) -> list[socket.socket]:
    """``count`` listening sockets on ``probe``'s address, one per child: on Linux a
    SO_REUSEPORT group (the kernel balances connections over it), elsewhere ``probe``
    itself for all (other systems hand a reuse-port group's connections to one socket)."""
    if not sys.platform.startswith("linux") or not hasattr(socket, "SO_REUSEPORT"):
        return [probe] * count
    family, address = probe.family, probe.getsockname()
    probe.close()
    group: list[socket.socket] = []
    try:
        for _ in range(count):
            sock = socket.socket(family, socket.SOCK_STREAM)
            group.append(sock)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
            sock.bind(address)
            sock.set_inheritable(True)
    except OSError as exc:
        for sock in group:
            sock.close()
        from kiln.server import StartupError
        raise StartupError(f"cannot listen on {address[0]}:{address[1]} from "
                           f"{count} processes: {exc.strerror}") from None
    return group


def supervise(conf: cfg.ConfigOpts, role: str, *, started_at: float | None) -> bool:
    """Run ``role`` as several processes when its option asks for more than one; False
    (nothing done) for one, which the caller runs in-process as always."""
    count = process_count(conf, role)
    if count <= 1:
        return False
    check(conf, role, count)
    from kiln import encryption_key, server
    from kiln.conf_loader import database_url

    # done once here rather than racing in every child: the state directory, and the
    # encryption key every child must share (generated once when unset)
    server.prepare_database_dir(conf, database_url(conf))
    encryption_key.resolve(conf)
    encryption_key.log_notes()
    role_: server.Role = role  # type: ignore[assignment]
    per_slot: list[dict[str, socket.socket]] = [{} for _ in range(count)]
    try:
        for group in server.listeners(conf, role_):
            # bound once plainly first: a port another program (or another Kiln) holds
            # is the same clear error as for one process
            probe = server.bind_listener(conf, group, role_)
            for slot, sock in zip(per_slot, _spread(probe, count), strict=True):
                slot[group] = sock
        kind = KIND[role]

        def on_ready(pids: list[int]) -> None:
            if per_slot[0]:
                server._log_serving(conf, role_, list(per_slot[0].items()), started_at)
            else:
                server.LOG.info("kiln engine running: %d engine processes (pids %s)",
                                len(pids), ", ".join(map(str, pids)))
            LOG.info("%d %s processes serve (pids %s)", len(pids), kind,
                     ", ".join(map(str, pids)), extra={"pids": pids})

        timeout = conf.graceful_shutdown_timeout or None
        Supervisor(kind=kind, count=count,
                   run=lambda: server.run_in_process(conf, role_, started_at=started_at),
                   sockets=per_slot, on_ready=on_ready,
                   stop_budget=None if timeout is None
                   else 2 * timeout + server.STOP_GRACE).serve()
    finally:
        for socks in per_slot:
            for sock in socks.values():
                sock.close()
    LOG.info("kiln %s stopped", server.COMMAND[role_])
    return True
