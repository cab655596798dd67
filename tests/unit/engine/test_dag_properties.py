"""Properties of create and delete over random dependency graphs, through EngineService.

Whatever the shape of the graph, a user relies on three things Heat promises: a resource
is only started once everything it depends on is complete; delete tears down in the
reverse order; and after a failed create (rollback disabled) a delete still removes
everything that was created. The graphs mix the three ways a template makes a dependency
(``depends_on``, ``get_resource``, ``get_attr``) and resources that finish at once with
ones that take a few polls, so the scheduler's interleavings vary.
"""

from __future__ import annotations

import itertools
import sqlite3
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kiln.engine.service import EngineService, RequestContext

from .support import create, events, hot

SETTINGS = settings(max_examples=12, deadline=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture])
_names = itertools.count()

#: (number of resources, for each resource its dependencies among the earlier ones,
#: how each one refers to its dependencies, whether it takes a few polls)
Dag = tuple[int, list[frozenset[int]], list[str], list[bool]]


@st.composite
def dags(draw: st.DrawFn, max_size: int = 9) -> Dag:
    n = draw(st.integers(min_value=1, max_value=max_size))
    deps = [frozenset(draw(st.sets(st.integers(0, i - 1), max_size=3)) if i else set())
            for i in range(n)]
    how = [draw(st.sampled_from(["depends_on", "get_resource", "get_attr"])) for _ in range(n)]
    slow = [draw(st.booleans()) for _ in range(n)]
    return n, deps, how, slow


def template(dag: Dag, fail_at: int | None = None) -> dict[str, Any]:
    n, deps, how, slow = dag
    resources: dict[str, Any] = {}
    for i in range(n):
        names = sorted(f"r{d}" for d in deps[i])
        props: dict[str, Any] = {"value": f"v{i}"}
        if how[i] == "get_resource":
            props["value"] = {"list_join": [",", [{"get_resource": d} for d in names]]}
        elif how[i] == "get_attr":
            props["value"] = {"list_join": [",", [{"get_attr": [d, "output"]} for d in names]]}
        if slow[i]:
            props["action_wait_secs"] = {"create": 0.01, "delete": 0.01}
        if i == fail_at:
            props["fail"] = True
        body: dict[str, Any] = {"type": "OS::Heat::TestResource", "properties": props}
        if how[i] == "depends_on" and names:
            body["depends_on"] = names
        resources[f"r{i}"] = body
    return hot(resources)


def positions(evs: list[tuple[str, str, str]]) -> dict[tuple[str, str], int]:
    """Where each (resource, status) first occurs in the event list."""
    seen: dict[tuple[str, str], int] = {}
    for index, (name, status, _reason) in enumerate(evs):
        seen.setdefault((name, status), index)
    return seen


def downstream(dag: Dag, start: int) -> set[int]:
    _n, deps, _how, _slow = dag
    below = {start}
    for i in range(start + 1, len(deps)):
        if deps[i] & below:
            below.add(i)
    return below - {start}


def resource_rows(sqlite_url: str, stack_id: str) -> int:
    with sqlite3.connect(sqlite_url.removeprefix("sqlite:///")) as conn:
        (count,) = conn.execute("SELECT count(*) FROM resource WHERE stack_id = ?",
                                (stack_id,)).fetchone()
    return int(count)


async def delete(service: EngineService, ctx: RequestContext,
                 ident: dict[str, Any]) -> dict[str, Any]:
    await service.delete_stack(ctx, ident)
    await service.wait_for_stack(ident["stack_id"])
    return await service.show_stack(ctx, ident)


@SETTINGS
@given(dag=dags())
async def test_create_waits_for_dependencies_and_delete_reverses(
        service: EngineService, ctx: RequestContext, sqlite_url: str, dag: Dag) -> None:
    n, deps, _how, _slow = dag
    stack = await create(service, ctx, f"dag{next(_names)}", template(dag))
    assert stack["stack_status"] == "CREATE_COMPLETE", stack["stack_status_reason"]
    ident = stack["stack_identity"]
    at = positions(await events(service, ctx, ident))
    for i in range(n):
        assert (f"r{i}", "CREATE_COMPLETE") in at
        for d in deps[i]:
            assert at[(f"r{d}", "CREATE_COMPLETE")] < at[(f"r{i}", "CREATE_IN_PROGRESS")]

    shown = await delete(service, ctx, ident)
    assert shown["stack_status"] == "DELETE_COMPLETE", shown["stack_status_reason"]
    at = positions(await events(service, ctx, ident))
    for i in range(n):
        for d in deps[i]:
            # a dependency is only torn down once everything that needs it is gone
            assert at[(f"r{i}", "DELETE_COMPLETE")] < at[(f"r{d}", "DELETE_IN_PROGRESS")]
    assert resource_rows(sqlite_url, ident["stack_id"]) == 0


@SETTINGS
@given(dag=dags(), data=st.data())
async def test_delete_after_a_failed_create_removes_everything(
        service: EngineService, ctx: RequestContext, sqlite_url: str, dag: Dag,
        data: st.DataObject) -> None:
    n = dag[0]
    fail_at = data.draw(st.integers(0, n - 1), label="fail_at")
    stack = await create(service, ctx, f"dagfail{next(_names)}", template(dag, fail_at),
                         disable_rollback=True)
    assert stack["stack_status"] == "CREATE_FAILED"
    ident = stack["stack_identity"]
    evs = await events(service, ctx, ident)
    at = positions(evs)
    assert (f"r{fail_at}", "CREATE_FAILED") in at
    # nothing that depends on the failed resource is ever started
    for i in downstream(dag, fail_at):
        assert (f"r{i}", "CREATE_IN_PROGRESS") not in at

    shown = await delete(service, ctx, ident)
    assert shown["stack_status"] == "DELETE_COMPLETE", shown["stack_status_reason"]
    assert resource_rows(sqlite_url, ident["stack_id"]) == 0
    # every resource that got as far as being created was deleted again
    started = {f"r{i}" for i in range(n) if (f"r{i}", "CREATE_IN_PROGRESS") in at}
    deleted = {name for (name, status) in positions(await events(service, ctx, ident))
               if status == "DELETE_COMPLETE" and name in started}
    assert deleted == started
