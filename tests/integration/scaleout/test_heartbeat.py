"""The heartbeat period (docs/deployment.md, "Liveness and take-over"): each engine's and
each API process's row in the services list (python-heatclient's ``services.list()``,
what ``openstack orchestration service list`` shows) has its ``updated_at`` moved on
every ``[kiln_engine] heartbeat_interval`` seconds, not every ``periodic_interval`` (set
far apart here); both are listed up."""

from __future__ import annotations

import datetime as dt
import itertools
import statistics
from collections.abc import Callable

from tests.integration.scaleout.conftest import Cluster, wait_for
from tests.support.clients import heat_client

#: the beat asked for, and a periodic_interval far from it (and from its multiples up to
#: the sweep's min(periodic_interval, engine_dead_after / 2) = 2 s, so the two line up)
BEAT = 1.0
PERIODIC = 6
#: distinct beats observed per process
BEATS = 6


def test_service_rows_beat_every_heartbeat_interval(
        postgresql_url: str, cluster_factory: Callable[[str], Cluster]) -> None:
    cluster = cluster_factory(postgresql_url)
    cluster.extra = {"DEFAULT": {"periodic_interval": PERIODIC},
                     "kiln_engine": {"heartbeat_interval": BEAT}}
    cluster.engine()
    hc = heat_client(cluster.api().endpoint("demo"))
    seen: dict[str, set[dt.datetime]] = {}
    binaries: dict[str, str] = {}

    def enough_beats() -> bool:
        for s in hc.services.list():
            binaries[s.engine_id] = s.binary
            if s.updated_at is None:  # registered, not beaten yet
                continue
            seen.setdefault(s.engine_id, set()).add(dt.datetime.fromisoformat(s.updated_at))
        return len(seen) == 2 and all(len(beats) >= BEATS + 1 for beats in seen.values())

    wait_for(enough_beats, 60, f"{BEATS} beats of the engine and the API process")
    assert sorted(binaries.values()) == ["heat-engine", "kiln-api"], binaries
    assert [s.status for s in hc.services.list()] == ["up", "up"]
    for engine_id, beats in seen.items():
        times = sorted(beats)
        gaps = [(b - a).total_seconds() for a, b in itertools.pairwise(times)]
        # never more often than asked (a busy loop of UPDATEs once did that), and
        # about once per interval (the list is polled about twice as often)
        assert min(gaps) >= 0.8 * BEAT, (binaries[engine_id], gaps)
        assert 0.9 * BEAT <= statistics.median(gaps) <= 1.5 * BEAT, (binaries[engine_id],
                                                                    gaps)
