"""A request forwarded to the engine holding its stack, when that engine stopped
answering while its heartbeat still reads fresh: answered 503 after about twice
``engine_life_check_timeout`` (the call, then a ping only because the reply is late),
not after ``rpc_response_timeout``."""

from __future__ import annotations

import signal
import time
from collections.abc import Callable

from tests.integration.scaleout.conftest import Cluster, client, create_paused, wait_status


def test_a_call_to_an_engine_that_does_not_answer_fails_fast(
    sqlite_url: str, cluster_factory: Callable[[str], Cluster]
) -> None:
    cluster = cluster_factory(sqlite_url)
    # a heartbeat that reads fresh for a minute after the engine's last one
    cluster.extra = {
        "DEFAULT": {"rpc_response_timeout": 60, "engine_life_check_timeout": 2},
        "kiln_engine": {"heartbeat_interval": 30, "engine_dead_after": 120},
    }
    engine = cluster.engine()
    with client(cluster.api()) as c:
        path = create_paused(c, "held")
        engine.proc.send_signal(signal.SIGSTOP)
        try:
            began = time.monotonic()
            r = c.post(f"{path}/resources/gate/signal", json={"unset_hook": "pre-create"})
            took = time.monotonic() - began
            assert r.status_code == 503, r.text
            assert "does not answer" in r.text, r.text
            assert took < 15, f"answered after {took:.1f} s"
        finally:
            engine.proc.send_signal(signal.SIGCONT)
        # resumed within rpc_response_timeout, the engine still runs the call it was
        # sent (Heat's would too): the hook is cleared and the create completes
        wait_status(c, "held", "CREATE_COMPLETE")
