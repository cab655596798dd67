"""The watcher: evaluates every alarm on schedule and fires the actions of those whose
state changed (the seed's periodic watch-rule task, for all stacks at once).

Exactly one process evaluates when several share a database: each round starts by
taking or renewing the ``watcher`` lease (:func:`kiln.alarms.store.take_lease`); a
process that does not hold it skips the round, and takes over within ``lease_ttl``
seconds of the holder's death. The holder keeps the recent data in memory as
10-second buckets per metric, reading only the points stored since its last round (by
id), so a round costs one small query plus arithmetic: 10,000 alarms per minute use a
few percent of a core (bench/alarm_bench.py). A new holder (after a restart or a
takeover) first reads back the last day's worth its alarms need. Old points are purged
on the way (``metric_retention``); alarm state lives in the database, so evaluation
resumes where it was after a restart.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
import uuid
from collections.abc import Callable
from typing import Any

from kiln.alarms import rules, store
from kiln.alarms.rules import Aggregate
from kiln.alarms.service import AlarmService
from kiln.alarms.store import AlarmRecord
from kiln.db.facade import DATABASE_ERRORS

LOG = logging.getLogger(__name__)
LEASE = "watcher"
MetricKey = tuple[str, str, str, str]   # project, namespace, name, dimensions key
#: the namespace slot of the series kept per alarm name (no real namespace has it)
BY_NAME = "\x00alarm"
ALARM_NAME = '"AlarmName"'
#: points folded into buckets between two returns to the event loop: a round reads every
#: point stored since the last one (10,000 at 1,000 points/s: ~20 ms of CPU on the 2-CPU
#: bench machine), which in one go held up every PutMetricData request arriving meanwhile
READ_SLICE = 1000



class Watcher:
    def __init__(self, alarms: AlarmService, *, interval: float = 10.0,
                 lease_ttl: float = 30.0, history_retention: float = 1209600.0,
                 holder: str | None = None, clock: Callable[[], float] = time.time) -> None:
        self.alarms = alarms
        self.db = alarms.db
        self.interval = interval
        self.lease_ttl = lease_ttl
        self.history_retention = history_retention
        self.holder = holder or uuid.uuid4().hex
        self.clock = clock
        self.holding = False
        self._buckets: dict[MetricKey, dict[int, Aggregate]] = {}
        self._last_id = 0
        self._task: asyncio.Task[None] | None = None
        self._rounds = 0
        #: rounds evaluated by this process (tests wait on it)
        self.evaluated = 0

    # -- lifecycle --------------------------------------------------------------------
    def start(self) -> None:
        self._task = asyncio.get_running_loop().create_task(self._run(), name="kiln-watcher")

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None
        if self.holding:
            try:
                await self.db.write(store.release_lease, LEASE, self.holder)
            except DATABASE_ERRORS:  # the lease then expires by itself
                LOG.debug("watcher lease not released", exc_info=True)
            self.holding = False

    async def _run(self) -> None:
        while True:
            try:
                await self.round()
            except asyncio.CancelledError:
                raise
            except Exception:  # one failed round (the database away, a bug)
                # must not end evaluation for the rest of the process: logged, retried
                LOG.exception("alarm evaluation round failed")
            await asyncio.sleep(self.interval)

    # -- one round ----------------------------------------------------------------------
    async def round(self) -> int:
        """Evaluate what is due if this process holds the lease; the alarms evaluated."""
        now = self.clock()
        held = await self.db.run(store.take_lease, LEASE, self.holder, now, self.lease_ttl)
        if not held:
            if self.holding:
                LOG.info("watcher lease lost to another engine")
            self.holding = False
            return 0
        if not self.holding:
            self._buckets.clear()
            self._last_id = 0
            self.holding = True
        await self.alarms.flush()   # this process's own buffered points
        alarms: list[AlarmRecord] = await self.db.run(store.list_alarms)
        window = max((a.rule.period * a.rule.evaluation_periods for a in alarms), default=0)
        await self._read(now - window - rules.BUCKET)
        due = [a for a in alarms if now - a.last_evaluated >= a.rule.period]
        changed: list[tuple[AlarmRecord, rules.Verdict]] = []
        for alarm in due:
            verdict = rules.evaluate(alarm.rule, self._series(alarm), now)
            if verdict.state != alarm.state:
                changed.append((alarm, verdict))
        unchanged = [a.id for a in due if a.id not in {c[0].id for c in changed}]
        if unchanged:
            await self.db.write(store.set_evaluated, unchanged, now)
        for alarm, verdict in changed:
            await self.alarms.transition(alarm, verdict.state, verdict.reason,
                                         _reason_data(alarm, verdict, now))
        self._prune(now - window - rules.BUCKET)
        self._rounds += 1
        if self._rounds % 30 == 1:
            await self.alarms.purge()
            await self.db.write(store.purge_history, now - self.history_retention)
        self.evaluated += 1
        return len(due)

    @staticmethod
    def _key(alarm: AlarmRecord) -> MetricKey:
        rule = alarm.rule
        return (alarm.project_id, rule.namespace, rule.metric_name,
                rules.dimensions_key(rule.dimensions))

    def _series(self, alarm: AlarmRecord) -> dict[int, Aggregate]:
        """The alarm's metric, plus the points pushed for it by name: cfn-push-stats
        ``--watch <alarm>`` adds the dimension ``AlarmName``, which fed that watch rule
        in Heat whatever its other dimensions."""
        own = self._buckets.get(self._key(alarm), {})
        named = self._buckets.get((alarm.project_id, BY_NAME, alarm.name,
                                   alarm.rule.metric_name))
        if not named:
            return own
        merged = {b: Aggregate(a.count, a.total, a.low, a.high) for b, a in own.items()}
        for bucket, agg in named.items():
            merged.setdefault(bucket, Aggregate()).merge(agg)
        return merged

    async def _read(self, since: float) -> None:
        while True:
            rows = await self.db.run(store.points_after, self._last_id, since)
            for n, (row_id, project, namespace, name, dims, value, stamp) in enumerate(rows):
                if n and not n % READ_SLICE:
                    await asyncio.sleep(0)  # let requests in between slices
                per = self._buckets.setdefault((project, namespace, name, dims), {})
                bucket = rules.bucket_of(stamp)
                agg = per.get(bucket)
                if agg is None:
                    agg = per[bucket] = Aggregate()
                agg.add(value)
                if ALARM_NAME in dims:
                    self._by_name(project, name, dims, stamp, value)
                self._last_id = row_id
            if len(rows) < 200_000:
                return

    def _by_name(self, project: str, metric: str, dims: str, stamp: float,
                 value: float) -> None:
        import json

        for key, alarm_name in json.loads(dims):
            if key == "AlarmName":
                per = self._buckets.setdefault((project, BY_NAME, alarm_name, metric), {})
                per.setdefault(rules.bucket_of(stamp), Aggregate()).add(value)

    def _prune(self, oldest: float) -> None:
        cut = rules.bucket_of(oldest)
        for key in list(self._buckets):
            per = self._buckets[key]
            for bucket in [b for b in per if b < cut]:
                del per[bucket]
            if not per:
                del self._buckets[key]


def _reason_data(alarm: AlarmRecord, verdict: rules.Verdict, now: float) -> str:
    import json

    return json.dumps({"version": "1.0", "queryDate": now, "statistic": alarm.rule.statistic,
                       "period": alarm.rule.period, "threshold": alarm.rule.threshold,
                       "recentDatapoints": [v for v in verdict.values if v is not None]})


def status(watcher: Watcher) -> dict[str, Any]:
    return {"holder": watcher.holder, "holding": watcher.holding,
            "rounds": watcher.evaluated}
