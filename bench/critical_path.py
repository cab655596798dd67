"""Issue 14's overhead figure: an orchestrator's wall time against the critical path of
the cloud's own time for the same resources.

Each resource's own time is the span from its CREATE_IN_PROGRESS event (written just
before the orchestrator's first API call for it) to its CREATE_COMPLETE event (written
once the cloud said it is ready). Queueing inside the cloud (Nova's fake driver builds
servers one after another) therefore counts as the cloud's time, and so does the last
poll interval, which is the orchestrator's: the cloud's own timestamps (Nova's
``launched_at``) say how late the orchestrator noticed a server was ready.

The critical path is the longest chain of own times through the dependency graph
(``required_by`` of the resource list, so implicit dependencies count too): the time
the stack would take if every resource started the instant its last requirement
completed. The gap of a resource is what the orchestrator added before starting it:
from its last requirement's COMPLETE (or the create request) to its IN_PROGRESS.

Events come from the orchestrator's database when the bench can read it (Kiln's and Heat
27's SQLite both keep microseconds in ``event.created_at``), else from the events API,
which has whole seconds only.
"""

from __future__ import annotations

import datetime as dt
import sqlite3
import statistics
from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass
class Span:
    """One resource's CREATE: epoch seconds of its IN_PROGRESS and COMPLETE events."""

    start: float
    end: float

    @property
    def own(self) -> float:
        return self.end - self.start


def _epoch(value: str | dt.datetime) -> float:
    """Naive UTC (a DB's ``created_at``, an API's ``...Z``) to epoch seconds."""
    if isinstance(value, str):
        value = dt.datetime.fromisoformat(value.replace("Z", "").replace(" ", "T"))
    if value.tzinfo is None:
        value = value.replace(tzinfo=dt.UTC)
    return value.timestamp()


def _spans(rows: list[tuple[str, str, Any]], stack_name: str) -> dict[str, Span]:
    starts: dict[str, float] = {}
    spans: dict[str, Span] = {}
    for name, status, when in rows:
        if name == stack_name:
            continue  # the stack's own events
        if status == "IN_PROGRESS":
            starts.setdefault(name, _epoch(when))
        elif status == "COMPLETE" and name in starts:
            spans[name] = Span(starts[name], _epoch(when))
    return spans


def spans_from_db(db: Path, stack_id: str, stack_name: str,
                  action: str = "CREATE") -> dict[str, Span]:
    """The spans from an ``event`` table (Kiln's and Heat's have the same columns)."""
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as conn:
        rows = conn.execute(
            "SELECT resource_name, resource_status, created_at FROM event"
            " WHERE stack_id = ? AND resource_action = ? ORDER BY created_at, id",
            (stack_id, action)).fetchall()
    return _spans(rows, stack_name)


def spans_from_api(heat: Any, stack_id: str, stack_name: str,
                   action: str = "CREATE") -> dict[str, Span]:
    """The spans from the events API (whole seconds), paged by marker."""
    rows: list[tuple[str, str, Any]] = []
    marker = None
    while True:
        page = heat.events.list(stack_id, limit=500, marker=marker, sort_dir="asc")
        if not page:
            break
        for event in page:
            if event.resource_status.startswith(action + "_"):
                rows.append((event.resource_name,
                             event.resource_status.split("_", 1)[1], event.event_time))
        marker = page[-1].id
    return _spans(rows, stack_name)


def requirements(heat: Any, stack_id: str) -> dict[str, set[str]]:
    """Each resource's requirements, from the other resources' ``required_by``."""
    resources = heat.resources.list(stack_id)
    needs: dict[str, set[str]] = {r.resource_name: set() for r in resources}
    for res in resources:
        for dependant in res.required_by:
            needs.setdefault(dependant, set()).add(res.resource_name)
    return needs


def critical_path(spans: dict[str, Span], needs: dict[str, set[str]]
                  ) -> tuple[float, list[str]]:
    """The longest chain of own times: its length and its resources, first to last."""
    finish: dict[str, float] = {}
    via: dict[str, str | None] = {}

    def ideal(name: str) -> float:
        if name not in finish:
            before = [d for d in needs.get(name, ()) if d in spans]
            last = max(before, key=ideal, default=None)
            via[name] = last
            finish[name] = (ideal(last) if last else 0.0) + spans[name].own
        return finish[name]

    tail = max(spans, key=ideal)
    chain = [tail]
    while (prev := via[chain[-1]]) is not None:
        chain.append(prev)
    chain.reverse()
    return finish[tail], chain


def analyse(spans: dict[str, Span], needs: dict[str, set[str]], requested: float,
            accepted: float, done: float,
            ready: dict[str, float] | None = None) -> dict[str, Any]:
    """Wall time against the critical path, and the gaps the orchestrator added.

    *accepted* is when the create request answered (its validation looks names up in
    the cloud); *ready* the cloud's own ready time of some resources (Nova's
    ``launched_at``), for a second critical path that ends each of those there."""
    critical, chain = critical_path(spans, needs)
    gaps: dict[str, float] = {}
    for name, span in spans.items():
        ends = [spans[d].end for d in needs.get(name, ()) if d in spans]
        gaps[name] = span.start - (max(ends) if ends else requested)
    # the chain that actually ended last: each step back is the requirement that
    # completed last before the dependant started
    last = max(spans, key=lambda n: spans[n].end)
    actual = [last]
    while before := [d for d in needs.get(actual[-1], ()) if d in spans]:
        actual.append(max(before, key=lambda d: spans[d].end))
    actual.reverse()

    wall = done - requested
    ordered = sorted(gaps.values())
    strict: dict[str, Any] = {}
    if ready:
        cloud = {n: Span(s.start, min(s.end, ready.get(n, s.end))) for n, s in spans.items()}
        cloud_critical, cloud_chain = critical_path(cloud, needs)
        strict = {"cloud_ready_critical_path_s": round(cloud_critical, 2),
                  "wall_over_cloud_ready_critical_path": round(wall / cloud_critical, 3),
                  "cloud_ready_critical_path": [f"{n} {cloud[n].own:.2f}"
                                                for n in cloud_chain]}
    return {
        "wall_s": round(wall, 2),
        "create_request_s": round(accepted - requested, 2),
        "critical_path_s": round(critical, 2),
        "wall_over_critical_path": round(wall / critical, 3),
        "after_request_over_critical_path": round((done - accepted) / critical, 3),
        **strict,
        "critical_path": [f"{n} {spans[n].own:.2f}" for n in chain],
        "actual_last_chain": [f"{n} gap {gaps[n]:.2f} own {spans[n].own:.2f}"
                              for n in actual],
        "actual_chain_gaps_s": round(sum(gaps[n] for n in actual), 2),
        "after_last_complete_s": round(done - spans[last].end, 2),
        "gaps_s": {"median": round(statistics.median(ordered), 3),
                   "p90": round(ordered[int(0.9 * (len(ordered) - 1))], 3),
                   "max": round(ordered[-1], 3), "max_at": max(gaps, key=gaps.__getitem__),
                   "sum": round(sum(ordered), 2)},
        "resources": len(spans),
    }


def server_readiness(conn: Any, heat: Any, stack_id: str, spans: dict[str, Span]
                     ) -> tuple[dict[str, Any], dict[str, float]]:
    """Nova's side of each server: its build time (``created_at`` to ``launched_at``,
    whole seconds) and how long after ``launched_at`` the COMPLETE event came (the
    orchestrator's last poll interval, ±1 s); and each server's ``launched_at``."""
    ids = {r.physical_resource_id: r.resource_name for r in heat.resources.list(stack_id)
           if r.resource_type == "OS::Nova::Server" and r.physical_resource_id}
    builds: list[float] = []
    noticed: list[float] = []
    ready: dict[str, float] = {}
    for server in conn.compute.servers(details=True):
        name = ids.get(server.id)
        if name is None or not server.launched_at or name not in spans:
            continue
        ready[name] = _epoch(server.launched_at)
        builds.append(ready[name] - _epoch(server.created_at))
        noticed.append(spans[name].end - ready[name])
    if not builds:
        return {}, ready
    return {"servers": len(builds),
            "nova_build_s": {"min": round(min(builds), 1), "max": round(max(builds), 1),
                             "median": round(statistics.median(builds), 1)},
            "complete_after_launched_s": {
                "median": round(statistics.median(noticed), 2),
                "max": round(max(noticed), 2), "min": round(min(noticed), 2)}}, ready
