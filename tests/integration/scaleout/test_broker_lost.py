"""Requests an API process must forward to the engine holding a stack, when that API
process cannot reach the broker (found by the multi-process probe, issue 24).

Before, oslo.messaging made the forwarded call's reply queue on first use with a
connection retried forever, in a thread of the default executor: the request was never
answered (over ten minutes), and each such request took one of that executor's few
threads (min(32, CPUs + 4)), which template parsing on create and update shares, so a
handful of them stopped the API process admitting work. Now such a request is answered
503 within about twice ``engine_life_check_timeout``, reads and creates are still
answered, and the same request through a process that reaches the broker goes through.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import httpx

from tests.integration.scaleout.conftest import (
    Cluster,
    client,
    closed_port_url,
    create_paused,
    wait_status,
)

#: more concurrent forwarded requests than the default executor has threads on this
#: machine (min(32, CPUs + 4))
REQUESTS = 8


def test_forwarded_requests_without_the_broker_are_answered(
        postgresql_url: str, cluster_factory: Callable[[str], Cluster]) -> None:
    cluster = cluster_factory(postgresql_url)
    cluster.extra = {"DEFAULT": {"engine_life_check_timeout": 2}}
    cluster.engine()
    one = cluster.api()
    cut_off = cluster.api(transport_url=closed_port_url())
    with client(one) as c1, client(cut_off) as c2:
        path = create_paused(c1, "held")

        def clear(_: int) -> tuple[int, float, str]:
            began = time.monotonic()
            with httpx.Client(base_url=cut_off.endpoint("demo"), timeout=40) as c:
                try:
                    r = c.post(f"{path}/resources/gate/signal",
                               json={"unset_hook": "pre-create"})
                except httpx.TimeoutException:
                    return 0, time.monotonic() - began, "no answer"
            return r.status_code, time.monotonic() - began, r.text

        with ThreadPoolExecutor(REQUESTS) as pool:
            answers = list(pool.map(clear, range(REQUESTS)))
        for status, took, text in answers:
            assert status == 503, f"{status} after {took:.1f} s: {text}"
            assert took < 20, f"answered after {took:.1f} s"

        # the process still reads and admits work (queued in the database for the sweep)
        assert c2.get(path).json()["stack"]["stack_status"] == "CREATE_IN_PROGRESS"
        r = c2.post("/stacks", json={"stack_name": "later", "template": {
            "heat_template_version": "2018-08-31",
            "resources": {"n": {"type": "OS::Heat::None"}}}}, timeout=20)
        assert r.status_code == 201, r.text
        wait_status(c2, "later", "CREATE_COMPLETE")

        # no clear was applied; through the process that reaches the broker it is
        r = c1.post(f"{path}/resources/gate/signal", json={"unset_hook": "pre-create"})
        assert r.status_code == 200, r.text
        wait_status(c1, "held", "CREATE_COMPLETE")
