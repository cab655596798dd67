"""AlarmService: metrics and alarms as the CloudWatch API and the alarm resources use them.

It owns the alarm tables (through the shared :class:`kiln.db.facade.Database`; the
engine builds it with its store's ``alarms()``) and nothing of the engine: an alarm's
actions run through an :class:`ActionRunner` (the engine's signals, see
:mod:`kiln.engine.service.alarm_actions`), so the API process and the engine process may
each hold one. Every call is scoped to a project. Errors are
:class:`kiln.alarms.rules.InvalidParameter` (AWS's 400 codes) or :class:`NotFound`.
"""

from __future__ import annotations

import asyncio
import json
import logging
import math
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Protocol

import sqlalchemy as sa

from kiln.alarms import rules, store
from kiln.alarms.rules import InvalidParameter, Rule
from kiln.alarms.store import AlarmRecord, Point
from kiln.errors import AlarmNotFound

#: a point may be at most this far in the future (AWS allows two hours)
MAX_FUTURE = 7200.0
#: how many times one flush may halve a batch the database refused, to find the rows it
#: refuses (each split is one more transaction)
MAX_FLUSH_SPLITS = 256
LOG = logging.getLogger(__name__)


#: a named alarm does not exist (AWS's ResourceNotFound; a shared error, see rules)
NotFound = AlarmNotFound


class ActionFailed(Exception):
    """An alarm action that could not be carried out; its text is the history's
    outcome. Anything else an action raises is a bug and propagates."""


class ActionRunner(Protocol):
    async def run(self, alarm: AlarmRecord, action: str, previous: str, state: str,
                  reason: str) -> str:
        """Run one action URL for an alarm that changed state; returns what happened
        (for the history), raises :class:`ActionFailed` on failure."""

    async def state_changed(self, alarm: AlarmRecord, previous: str, state: str,
                            reason: str) -> None:
        """Make the change of a stack's alarm seen where the stack's events go (an
        event of its resource); never raises for a stack or resource that is gone."""


class AlarmService:
    def __init__(self, db: Any, *, retention: float = 86400.0,
                 max_datums: int = 1000, runner: ActionRunner | None = None,
                 clock: Callable[[], float] = time.time, flush_interval: float = 0.1,
                 max_buffered: int = 200_000) -> None:
        self.db = db
        self.retention = retention
        self.max_datums = max_datums
        self.runner = runner
        self.clock = clock
        self.flush_interval = flush_interval
        self.max_buffered = max_buffered
        self._buffer: list[tuple[str, Point]] = []
        self._flusher: asyncio.Task[None] | None = None
        self._flushing = asyncio.Lock()

    # -- metric data --------------------------------------------------------------------
    def check_points(self, namespace: Any, data: Sequence[Mapping[str, Any]]) -> list[Point]:
        """Checked points from PutMetricData's ``MetricData.member.N`` entries."""
        if not isinstance(namespace, str) or not namespace or len(namespace) > 255:
            raise InvalidParameter("The parameter Namespace is required and must be 1 to "
                                   "255 characters.", "MissingParameter" if not namespace
                                   else "InvalidParameterValue")
        if namespace.startswith("AWS/"):
            raise InvalidParameter("The value AWS/ for parameter Namespace is invalid.")
        if not data:
            raise InvalidParameter("The parameter MetricData is required.", "MissingParameter")
        if len(data) > self.max_datums:
            raise InvalidParameter(f"The collection MetricData must not have more than "
                                   f"{self.max_datums} members.")
        now = self.clock()
        points: list[Point] = []
        for i, item in enumerate(data, 1):
            where = f"MetricData.member.{i}"
            name = item.get("MetricName")
            if not isinstance(name, str) or not name or len(name) > 255:
                raise InvalidParameter(f"The parameter {where}.MetricName is required and "
                                       "must be 1 to 255 characters.", "MissingParameter")
            dims = rules.dimensions_of(item.get("Dimensions") or [], f"{where}.Dimensions")
            unit = rules.check_unit(item.get("Unit"), f"{where}.Unit")
            stamp = item.get("Timestamp")
            when = now if stamp is None else _finite(stamp, f"{where}.Timestamp")
            if when > now + MAX_FUTURE:
                raise InvalidParameter(f"The parameter {where}.Timestamp must not be more "
                                       "than two hours in the future.")
            if when < now - self.retention:
                raise InvalidParameter(f"The parameter {where}.Timestamp must not be older "
                                       f"than the metric retention ({int(self.retention)} "
                                       "seconds).")
            key = rules.dimensions_key(dims)
            stats = item.get("StatisticValues")
            if stats is not None:
                points.extend(self._statistic_points(stats, where, namespace, name, key,
                                                     unit, when))
                continue
            value = item.get("Value")
            number = _finite(value, f"{where}.Value")
            points.append(Point(namespace, name, key, unit, number, when))
        return points

    @staticmethod
    def _statistic_points(stats: Mapping[str, Any], where: str, namespace: str, name: str,
                          key: str, unit: str | None, when: float) -> list[Point]:
        """A StatisticSet stored as points that aggregate to the same count, sum,
        minimum and maximum (Minimum, Maximum, then the rest of the sum spread evenly)."""
        count = _finite(stats.get("SampleCount"), f"{where}.StatisticValues.SampleCount")
        total = _finite(stats.get("Sum"), f"{where}.StatisticValues.Sum")
        low = _finite(stats.get("Minimum"), f"{where}.StatisticValues.Minimum")
        high = _finite(stats.get("Maximum"), f"{where}.StatisticValues.Maximum")
        if count < 1 or not count.is_integer() or low > high or count > 100000:
            raise InvalidParameter(f"The parameter {where}.StatisticValues is not a valid "
                                   "statistic set.")
        n = int(count)
        values = [low] if n == 1 else [low, high]
        rest = n - len(values)
        if rest:
            values += [(total - sum(values)) / rest] * rest
        return [Point(namespace, name, key, unit, v, when) for v in values]

    async def put_metric_data(self, project_id: str, namespace: Any,
                              data: Sequence[Mapping[str, Any]]) -> int:
        """Checked points are buffered and written together (every
        :attr:`flush_interval` seconds), so a request waits for no commit: a crash loses
        at most that much of the data, which the next samples replace. Reads of this
        service flush first. A buffer already holding :attr:`max_buffered` points
        refuses more (AWS's ``Throttling``)."""
        points = self.check_points(namespace, data)
        if len(self._buffer) + len(points) > self.max_buffered:
            raise InvalidParameter("Rate exceeded: too many data points are waiting to be "
                                   "stored; retry later.", "Throttling")
        self._buffer.extend((project_id, p) for p in points)
        if self._flusher is None or self._flusher.done():
            self._flusher = asyncio.get_running_loop().create_task(self._flush_later())
        return len(points)

    async def _flush_later(self) -> None:
        await asyncio.sleep(self.flush_interval)
        await self.flush()

    async def flush(self) -> None:
        """Write the buffered points now. Serialised: a read that flushes while the
        periodic flush is writing waits for those rows too (else it could read before
        they are committed, and ListMetrics would miss the points just put).

        Never raises: the buffer holds every project's points, so a row the database
        refuses must cost only itself (:meth:`_store`)."""
        async with self._flushing:
            rows, self._buffer = self._buffer, []
            if rows:
                await self._store(rows)

    async def _store(self, rows: list[tuple[str, Point]]) -> None:
        """Write ``rows``; a batch the database refuses is split in halves and written
        again, so each refused row is dropped alone (and logged). At most
        :data:`MAX_FLUSH_SPLITS` splits a flush: past them (or when the database cannot be
        reached at all) what is left is dropped, logged, rather than retried forever."""
        good = [r for r in rows if math.isfinite(r[1].value) and math.isfinite(r[1].timestamp)]
        if len(good) != len(rows):
            LOG.error("dropped %d metric data point(s) with a non-finite value or time",
                      len(rows) - len(good))
        pending = [good] if good else []
        splits = 0
        while pending:
            chunk = pending.pop()
            try:
                await self.db.write(store.put_points, chunk)
            except Exception as exc:  # noqa: BLE001  (logged; the other rows go on)
                if len(chunk) > 1 and splits < MAX_FLUSH_SPLITS and _refused(exc):
                    splits += 1
                    half = len(chunk) // 2
                    pending += [chunk[half:], chunk[:half]]
                    continue
                LOG.error("dropped %d metric data point(s) of project(s) %s: the database "
                          "refused them: %s", len(chunk),
                          ", ".join(sorted({p for p, _ in chunk})[:5]),
                          str(getattr(exc, "orig", None) or exc)[:300])

    async def list_metrics(self, project_id: str, *, namespace: str | None = None,
                           metric_name: str | None = None,
                           dimensions: Sequence[Mapping[str, Any]] = (),
                           offset: int = 0, limit: int = 500
                           ) -> tuple[list[tuple[str, str, rules.Dimensions]], int | None]:
        wanted = dict(rules.dimensions_of(dimensions))
        await self.flush()
        rows = await self.db.run(store.list_metrics, project_id, namespace=namespace,
                                 metric_name=metric_name, limit=limit + 1, offset=offset)
        out: list[tuple[str, str, rules.Dimensions]] = []
        for ns, name, key in rows[:limit]:
            dims = tuple((a, b) for a, b in json.loads(key))
            if all(dict(dims).get(k) == v for k, v in wanted.items()):
                out.append((ns, name, dims))
        more = offset + limit if len(rows) > limit else None
        return out, more

    async def get_statistics(self, project_id: str, *, namespace: Any, metric_name: Any,
                             dimensions: Sequence[Mapping[str, Any]], start: float,
                             end: float, period: Any, statistics: Sequence[str],
                             unit: Any = None) -> list[dict[str, Any]]:
        for value, name in ((namespace, "Namespace"), (metric_name, "MetricName")):
            if not value:
                raise InvalidParameter(f"The parameter {name} is required.",
                                       "MissingParameter")
        if not statistics:
            raise InvalidParameter("The parameter Statistics is required.", "MissingParameter")
        for stat in statistics:
            if stat not in rules.STATISTICS:
                raise InvalidParameter("The parameter Statistics must contain only: "
                                       f"{', '.join(rules.STATISTICS)}.")
        try:
            step = int(period)
        except (TypeError, ValueError):
            raise InvalidParameter("The parameter Period must be an integer.") from None
        if step < 1:
            raise InvalidParameter("The parameter Period must be at least 1.")
        start = aligned_start(start, step, self.clock())
        if end <= start:
            raise InvalidParameter("The parameter StartTime must be before EndTime.")
        if (end - start) / step > 1440:
            raise InvalidParameter("You have requested up to "
                                   f"{math.ceil((end - start) / step)} datapoints, which "
                                   "exceeds the limit of 1440.")
        key = rules.dimensions_key(rules.dimensions_of(dimensions))
        await self.flush()
        rows = await self.db.run(store.metric_points, project_id, str(namespace),
                                 str(metric_name), key, start, end,
                                 rules.check_unit(unit))
        windows: dict[float, rules.Aggregate] = {}
        units: dict[float, str | None] = {}
        for stamp, value, row_unit in rows:
            begin = start + ((stamp - start) // step) * step
            windows.setdefault(begin, rules.Aggregate()).add(value)
            units[begin] = row_unit
        return [{"Timestamp": begin, "Unit": units.get(begin) or "None",
                 **{stat: agg.statistic(stat) for stat in statistics}}
                for begin, agg in sorted(windows.items())]

    # -- alarms ---------------------------------------------------------------------------
    async def put_alarm(self, project_id: str, name: Any, rule: Rule, *,
                        actions_enabled: bool = True, stack_id: str | None = None,
                        resource_name: str | None = None) -> AlarmRecord:
        if not isinstance(name, str) or not name or len(name) > 255:
            raise InvalidParameter("The parameter AlarmName is required and must be 1 to 255 "
                                   "characters.", "MissingParameter")
        now = self.clock()

        def put(s: Any) -> AlarmRecord:
            record, created = store.put_alarm(s, project_id, name, rule,
                                              actions_enabled=actions_enabled,
                                              stack_id=stack_id, resource_name=resource_name)
            store.add_history(s, project_id, name, "ConfigurationUpdate",
                              f"Alarm \"{name}\" {'created' if created else 'updated'}",
                              {"type": "Create" if created else "Update",
                               "version": "1.0", "rule": rule.to_json()}, now)
            return record

        record: AlarmRecord = await self.db.write(put)
        return record

    async def describe(self, project_id: str, *, names: Sequence[str] = (),
                       prefix: str | None = None, state: str | None = None,
                       action_prefix: str | None = None) -> list[AlarmRecord]:
        if state is not None and state not in rules.STATES:
            raise InvalidParameter(f"The parameter StateValue must be one of: "
                                   f"{', '.join(rules.STATES)}.")
        found: list[AlarmRecord] = await self.db.run(store.list_alarms, project_id,
                                                     names=names, prefix=prefix, state=state)
        if action_prefix:
            found = [a for a in found if any(
                u.startswith(action_prefix) for urls in a.rule.actions.values() for u in urls)]
        return found

    async def stack_tree_alarms(self, project_id: str, stack_id: str,
                                names: Sequence[str]) -> set[str]:
        """Which of ``names`` name alarms of ``stack_id``'s stack tree: what a stack's
        keypair may push metrics for (kiln.api.cloudwatch.reach)."""
        found: set[str] = await self.db.run(store.alarms_of_stack_tree, project_id,
                                            stack_id, list(names))
        return found

    async def for_metric(self, project_id: str, *, namespace: str, metric_name: str,
                         dimensions: Sequence[Mapping[str, Any]] = (),
                         statistic: str | None = None, period: int | None = None,
                         unit: str | None = None) -> list[AlarmRecord]:
        dims = rules.dimensions_of(dimensions)
        alarms: list[AlarmRecord] = await self.db.run(store.list_alarms, project_id)
        return [a for a in alarms if a.rule.namespace == namespace
                and a.rule.metric_name == metric_name
                and (not dimensions or a.rule.dimensions == dims)
                and (statistic is None or a.rule.statistic == statistic)
                and (period is None or a.rule.period == int(period))
                and (unit is None or a.rule.unit == unit)]

    async def history(self, project_id: str, *, alarm_name: str | None = None,
                      item_type: str | None = None, start: float | None = None,
                      end: float | None = None, limit: int = 100
                      ) -> list[tuple[str, str, str, str, float]]:
        if item_type is not None and item_type not in ("ConfigurationUpdate",
                                                       "StateUpdate", "Action"):
            raise InvalidParameter("The parameter HistoryItemType must be one of: "
                                   "ConfigurationUpdate, StateUpdate, Action.")
        rows: list[tuple[str, str, str, str, float]] = await self.db.run(
            store.list_history, project_id, alarm_name=alarm_name, item_type=item_type,
            start=start, end=end, limit=limit)
        return rows

    async def set_actions_enabled(self, project_id: str, names: Sequence[str],
                                  enabled: bool) -> None:
        await self.db.write(store.set_actions_enabled, project_id, list(names), enabled)

    async def delete(self, project_id: str, names: Sequence[str]) -> None:
        found = await self.describe(project_id, names=names)
        missing = sorted(set(names) - {a.name for a in found})
        if missing:
            raise NotFound(f"1 validation error detected: Value [{', '.join(missing)}] at "
                           "'alarmNames' failed to satisfy constraint: the alarm(s) do not "
                           "exist.")
        await self.db.write(store.delete_alarms, project_id, list(names))

    async def delete_for_resource(self, stack_id: str, resource_name: str) -> None:
        await self.db.write(store.delete_stack_alarm, stack_id, resource_name)

    async def set_state(self, project_id: str, name: str, state: Any, reason: Any,
                        reason_data: Any = None) -> None:
        """SetAlarmState: the state changes now (and its actions run); the next
        evaluation may change it back."""
        if state not in rules.STATES:
            raise InvalidParameter(f"The parameter StateValue must be one of: "
                                   f"{', '.join(rules.STATES)}.")
        if not isinstance(reason, str) or not reason or len(reason) > 1023:
            raise InvalidParameter("The parameter StateReason is required and must be at "
                                   "most 1023 characters.", "MissingParameter")
        if reason_data is not None:
            try:
                json.loads(reason_data)
            except (TypeError, ValueError):
                raise InvalidParameter("The parameter StateReasonData must be JSON.",
                                       "InvalidFormat") from None
        alarm = await self.db.run(store.get_alarm, project_id, name)
        if alarm is None:
            raise NotFound(f"Alarm {name} not found")
        await self.transition(alarm, state, reason, reason_data)

    async def transition(self, alarm: AlarmRecord, state: str, reason: str,
                         reason_data: str | None = None) -> None:
        """Record a state change (and its history) and run the new state's actions."""
        now = self.clock()
        previous = alarm.state

        def record(s: Any) -> None:
            store.set_state(s, alarm.id, state, reason, reason_data, now)
            store.add_history(s, alarm.project_id, alarm.name, "StateUpdate",
                              f"Alarm updated from {previous} to {state}",
                              {"version": "1.0", "oldState": {"stateValue": previous},
                               "newState": {"stateValue": state, "stateReason": reason}},
                              now)

        await self.db.write(record)
        if previous != state and alarm.stack_id and self.runner is not None:
            await self.runner.state_changed(alarm, previous, state, reason)
        if previous != state and alarm.actions_enabled:
            await self.run_actions(alarm, previous, state, reason)

    async def run_actions(self, alarm: AlarmRecord, previous: str, state: str,
                          reason: str) -> None:
        if self.runner is None:
            return
        for action in alarm.rule.actions_for(state):
            try:
                outcome = await self.runner.run(alarm, action, previous, state, reason)
                summary, ok = f"Successfully executed action {action}", True
            except ActionFailed as exc:  # an action's failure is history, not an API error
                outcome, summary, ok = str(exc), f"Failed to execute action {action}", False
            await self.db.write(store.add_history, alarm.project_id, alarm.name, "Action",
                                summary, {"actionState": "Succeeded" if ok else "Failed",
                                          "stateUpdateTimestamp": self.clock(),
                                          "outcome": outcome}, self.clock())

    async def purge(self) -> None:
        await self.flush()
        now = self.clock()
        await self.db.write(store.purge_points, now - self.retention)


def aligned_start(start: float, period: int, now: float) -> float:
    """GetMetricStatistics' StartTime rounded down as CloudWatch documents it, so the
    datapoints start on clock boundaries whatever second the client asked from: to a
    division of the minute for a period of 1, 5, 10, 20 or 30 seconds; else to the
    minute (start less than 15 days ago), to 5 minutes (15 to 63 days), to the hour."""
    age = now - start
    if period < 60 and 60 % period == 0:
        unit = period
    elif age < 15 * 86400:
        unit = 60
    elif age < 63 * 86400:
        unit = 300
    else:
        unit = 3600
    return math.floor(start / unit) * unit


def _refused(exc: Exception) -> bool:
    """Whether ``exc`` is the database refusing these rows (worth finding which), not
    the database being unreachable (then every row would fail alike)."""
    if isinstance(exc, (sa.exc.OperationalError, sa.exc.InterfaceError)):
        return False
    return isinstance(exc, (sa.exc.StatementError, ValueError, TypeError, OverflowError))


def _finite(value: Any, where: str) -> float:
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise InvalidParameter(f"The parameter {where} must be a number.",
                               "MissingParameter" if value is None
                               else "InvalidParameterValue") from None
    if not math.isfinite(number) or abs(number) > 2 ** 360:
        raise InvalidParameter(f"The parameter {where} must be a finite number within "
                               "the range CloudWatch accepts.")
    return number


def names_of(values: Iterable[Any]) -> list[str]:
    return [str(v) for v in values]
