"""Kiln deployed as Heat is: ``kiln api`` and ``kiln engine`` processes on one database,
talking over the machine's RabbitMQ (issue 24).

``cluster``: a factory starting real processes of one deployment (one database, its own
``control_exchange`` and ``[kiln_engine] rpc_topic``, so parallel tests and anyone else on
the shared broker never receive each other's messages; the broker's queues auto-delete).
Liveness settings are short so that a killed engine is seen dead within seconds. The
shared RabbitMQ is never stopped: a test of the broker's absence points one process's
``transport_url`` at a closed port.
"""

from __future__ import annotations

import contextlib
import json
import socket
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import httpx
import pytest

from tests.support import databases
from tests.support.fixtures import StartKiln
from tests.support.ports import free_port
from tests.support.rabbitmq import TRANSPORT_URL
from tests.support.server import KilnProcess, merge_sections
from tests.support.services import unavailable

#: the engines' liveness in these tests: beat every 0.5 s, dead after 4 s, so the sweep
#: (min(periodic_interval, engine_dead_after / 2)) runs every 2 s
HEARTBEAT = 0.5
DEAD_AFTER = 4.0
PERIODIC = 2
#: engine_dead_after for tests of routing rather than liveness: 4 s lets an engine starved
#: of CPU on a loaded machine be taken for dead and its stack taken over mid-test (seen),
#: which changes which engine holds it
STEADY = 30.0


def _broker_up() -> bool:
    try:
        with socket.create_connection(("127.0.0.1", 5672), timeout=2):
            return True
    except OSError:
        return False


@dataclass
class Cluster:
    """One deployment's processes: every one started with the same database, exchange
    and topic."""

    start_kiln: StartKiln
    db_url: str
    exchange: str = field(default_factory=lambda: f"kiln-test-{uuid.uuid4().hex[:10]}")
    processes: list[KilnProcess] = field(default_factory=list)
    #: options every process started from now on gets too (e.g. the URLs servers are
    #: handed, once the listener they name is up)
    extra: dict[str, dict[str, Any]] = field(default_factory=dict)

    def options(self, transport_url: str = TRANSPORT_URL) -> dict[str, dict[str, Any]]:
        return merge_sections({
            "DEFAULT": {"transport_url": transport_url, "control_exchange": self.exchange,
                        "periodic_interval": PERIODIC, "rpc_response_timeout": 30,
                        "graceful_shutdown_timeout": 2,
                        # one process per `kiln engine` (Heat's default forks max(4,
                        # CPUs)): the tests count and kill engine processes
                        "num_engine_workers": 1},
            "kiln_engine": {"rpc_topic": self.exchange, "heartbeat_interval": HEARTBEAT,
                            "engine_dead_after": DEAD_AFTER},
            "oslo_messaging_rabbit": {"amqp_auto_delete": "true"},
            "database": {"connection": self.db_url},
        }, self.extra)

    def start(self, command: str, **kwargs: Any) -> KilnProcess:
        transport_url = kwargs.pop("transport_url", TRANSPORT_URL)
        proc = self.start_kiln(command=command, options=self.options(transport_url),
                               **kwargs)
        self.processes.append(proc)
        return proc

    def api(self, **kwargs: Any) -> KilnProcess:
        return self.start("api", **kwargs)

    def engine(self, **kwargs: Any) -> KilnProcess:
        return self.start("engine", **kwargs)


@pytest.fixture
def rabbit() -> None:
    if not _broker_up():
        unavailable("RabbitMQ is not reachable at 127.0.0.1:5672")


@pytest.fixture(params=[
    pytest.param("postgresql", marks=pytest.mark.postgresql),
    pytest.param("mysql", marks=pytest.mark.mysql),
])
def server_db(request: pytest.FixtureRequest) -> Iterator[str]:
    """The two databases operators run (the crash tests take both)."""
    if request.param == "postgresql":
        with databases.postgresql_database() as url:
            yield url
    else:
        with databases.mysql_database() as url:
            yield url


@pytest.fixture
def cluster_factory(rabbit: None, start_kiln_factory: StartKiln) -> Callable[[str], Cluster]:
    def make(db_url: str) -> Cluster:
        return Cluster(start_kiln_factory, db_url)
    return make


def closed_port_url() -> str:
    """A transport_url where no broker listens (nothing is stopped for it)."""
    return f"rabbit://guest:guest@127.0.0.1:{free_port()}/"


def wait_for(predicate: Callable[[], Any], timeout: float = 60.0, what: str = "") -> Any:
    """Poll an observable state until ``predicate`` returns something truthy."""
    deadline = time.monotonic() + timeout
    delay = 0.05
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout}s waiting for {what or predicate}")
        time.sleep(delay)  # polling an observable state, bounded by the deadline
        delay = min(delay * 1.5, 0.5)


def client(proc: KilnProcess) -> httpx.Client:
    """An HTTP client on the native API of ``proc`` (project demo)."""
    return httpx.Client(base_url=proc.endpoint("demo"), timeout=60, follow_redirects=True)


def stack_status(client: httpx.Client, name: str) -> str:
    r = client.get(f"/stacks/{name}")
    if r.status_code == 404:
        return "GONE"
    r.raise_for_status()
    stack = r.json()["stack"]
    return f"{stack['stack_status']}"


def wait_status(client: httpx.Client, name: str, *wanted: str,
                timeout: float = 60.0) -> str:
    """Wait until the stack leaves IN_PROGRESS; assert it ends in one of ``wanted``."""
    final = wait_for(lambda: (lambda s: s if not s.endswith("IN_PROGRESS") else None)(
        stack_status(client, name)), timeout, f"stack {name} to settle")
    assert final in wanted, f"stack {name} ended {final}, wanted {wanted}"
    return str(final)


#: a stack whose create pauses at its one resource's pre-create hook
HOOKED = {"heat_template_version": "2018-08-31",
          "resources": {"gate": {"type": "OS::Heat::None"}}}
HOOKED_ENV = {"resource_registry": {"resources": {"gate": {"hooks": "pre-create"}}}}


def create_paused(c: httpx.Client, name: str) -> str:
    """Create a :data:`HOOKED` stack and wait until its create pauses at the hook (run by
    an engine); its path (``/stacks/<name>/<id>``)."""
    r = c.post("/stacks", json={"stack_name": name, "template": HOOKED,
                                "environment": HOOKED_ENV})
    assert r.status_code == 201, r.text
    path = f"/stacks/{name}/{r.json()['stack']['id']}"
    wait_for(lambda: any("paused until Hook pre-create" in str(e["resource_status_reason"])
                         for e in c.get(f"{path}/events").json()["events"]),
             what="the pre-create hook to pause the create")
    return path


class BrokerTap:
    """Copies of what the deployment publishes, seen on the machine's RabbitMQ (kombu):
    a queue of the test's own (exclusive, deleted with its connection) bound to the
    topic exchange ``exchange`` with each of ``keys`` (``#``: everything) and to each
    fanout exchange of ``fanouts``. A binding copies messages: it takes none from the
    queues the deployment's processes consume. ``seen`` holds (exchange, routing key,
    RPC method or notification event type) of each message."""

    def __init__(self, exchange: str, keys: list[str], fanouts: tuple[str, ...] = ()) -> None:
        import kombu

        from tests.support.rabbitmq import URL

        self.seen: list[tuple[str, str, str]] = []
        self._conn = kombu.Connection(URL, connect_timeout=5)
        # as oslo.messaging declares them under the tests' amqp_auto_delete = true
        topic = kombu.Exchange(exchange, type="topic", durable=False, auto_delete=True)
        bindings = [kombu.binding(topic, routing_key=key) for key in keys]
        bindings += [kombu.binding(self._fanout(name)) for name in fanouts]
        queue = kombu.Queue(f"kiln-tap-{uuid.uuid4().hex[:12]}", bindings=bindings,
                            exclusive=True, auto_delete=True)
        self._consumer = kombu.Consumer(self._conn, queues=[queue],
                                        callbacks=[self._received], accept=["json"])
        self._consumer.consume()

    def _fanout(self, name: str) -> Any:
        """Fanout exchange ``name``: bound as it is when it exists (a real Heat on the
        broker declared it its own way), else declared as oslo.messaging would here."""
        import kombu

        channel = self._conn.channel()
        try:
            channel.exchange_declare(name, "fanout", passive=True)
            exists = True
        except Exception:  # noqa: BLE001 - NOT_FOUND (it closes this channel)
            exists = False
        with contextlib.suppress(Exception):
            channel.close()
        if exists:
            return kombu.Exchange(name, type="fanout", passive=True)
        return kombu.Exchange(name, type="fanout", durable=False, auto_delete=True)

    def _received(self, body: Any, message: Any) -> None:
        envelope = json.loads(body) if isinstance(body, str | bytes) else body
        inner = json.loads(envelope["oslo.message"]) if "oslo.message" in envelope \
            else envelope
        what = str(inner.get("method") or inner.get("event_type") or "?")
        info = message.delivery_info
        self.seen.append((str(info.get("exchange")), str(info["routing_key"]), what))
        message.ack()

    def drain(self, seconds: float = 1.0) -> list[tuple[str, str, str]]:
        """Take what arrives within ``seconds`` (a message sent before this call was
        routed to the tap when it was sent: RabbitMQ routes on publish)."""
        deadline = time.monotonic() + seconds
        while (left := deadline - time.monotonic()) > 0:
            with contextlib.suppress(TimeoutError, socket.timeout):
                self._conn.drain_events(timeout=min(left, 0.5))
        return self.seen

    def close(self) -> None:
        self._conn.release()
