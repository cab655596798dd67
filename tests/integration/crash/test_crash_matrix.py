"""The crash matrix: a real ``kiln serve`` is SIGKILLed at a random point of every kind
of stack action (create, create's rollback, update, update's rollback, delete,
snapshot, restore, suspend, resume, check, adopt, a ResourceGroup's batched create),
on SQLite, PostgreSQL and MariaDB. After each restart the stack must settle within the
take-over time, with exactly the resources its template and action imply, no orphaned
nested stack, no snapshot IN_PROGRESS and no resource IN_PROGRESS; a FAILED stack must
still delete cleanly (what a user does next).

``KILN_CRASH_RUNS`` kills per backend (default 6 on SQLite and 3 on the servers, which
CI runs); the runs cycle through the actions from a seeded start. ``KILN_CRASH_SEED``
replays a failure (each assertion names the seed, the run and the action). The full
count, as recorded in docs/contributing.md: ``KILN_CRASH_RUNS=100 bash scripts/test.sh
tests/integration/crash/test_crash_matrix.py``.
"""

from __future__ import annotations

import json
import os
import random
import signal
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.integration.crash.test_crash_recovery import SEED, Crasher

CHILD = json.dumps({"heat_template_version": "2018-08-31", "resources": {
    "c1": {"type": "OS::Heat::TestResource",
           "properties": {"action_wait_secs": {"create": 0.2, "delete": 0.2}}},
    "c2": {"type": "OS::Heat::RandomString"}}})
FILES = {"child.yaml": CHILD}


def runs_for(backend: str) -> int:
    given = os.environ.get("KILN_CRASH_RUNS")
    if given:
        return int(given)
    return 6 if backend == "sqlite" else 3


#: a run takes about 11 s on an idle 2-core machine and 40-50 s at load 30 (three
#: backends at once beside other work); the limit leaves room for that
pytestmark = [pytest.mark.slow,
              pytest.mark.timeout(120 + 90 * max(runs_for("sqlite"), runs_for("server")))]


def template(rng: random.Random, version: int, *, failing: bool = False,
             group: bool = False, nested: bool = True) -> dict[str, Any]:
    """Eight TestResources waiting a little per action, a nested stack, and (version 1)
    changed values, one replaced and one new resource; ``failing`` adds one that fails."""
    resources: dict[str, Any] = {}
    for i in range(8):
        wait = {a: round(rng.uniform(0.05, 0.5), 2) for a in ("create", "update", "delete")}
        resources[f"r{i}"] = {"type": "OS::Heat::TestResource", "properties": {
            "value": f"v{version}", "action_wait_secs": wait,
            "update_replace": i == 0}}
    if nested:
        resources["nest"] = {"type": "child.yaml", "depends_on": ["r1"]}
    if version:
        resources["added"] = {"type": "OS::Heat::RandomString"}
    if failing:
        resources["bad"] = {"type": "OS::Heat::TestResource", "depends_on": ["r2"],
                            "properties": {"fail": True, "action_wait_secs": {
                                "create": 0.3}}}
    if group:
        resources["group"] = {
            "type": "OS::Heat::ResourceGroup",
            "update_policy": {"batch_create": {"max_batch_size": 1, "pause_time": 0.2}},
            "properties": {"count": 4, "resource_def": {
                "type": "OS::Heat::TestResource",
                "properties": {"action_wait_secs": {"create": 0.2}}}}}
    return {"heat_template_version": "2018-08-31", "resources": resources}


class Matrix:
    """One backend's runs: each sets a stack up, starts the action and kills the server."""

    def __init__(self, crasher: Crasher, rng: random.Random) -> None:
        self.c = crasher
        self.rng = rng

    # -- helpers --------------------------------------------------------------------------
    def create(self, name: str, body: dict[str, Any], *, wait: bool = True) -> str:
        body = {"stack_name": name, "files": FILES, "timeout_mins": 5, **body}
        created = self.c.call("POST", "/stacks", body).json()
        path = f"/stacks/{name}/{created['stack']['id']}"
        if wait:
            self.settled(path, name)
        return path

    def settled(self, path: str, note: str) -> str:
        return self.c.settle(path, seed_note=note)

    # -- the actions: each returns (stack path, what the action was) after starting it ----
    def a_create(self, name: str) -> tuple[str, str]:
        return self.create(name, {"template": template(self.rng, 0),
                                  "disable_rollback": self.rng.random() < 0.5},
                           wait=False), "create"

    def a_create_rollback(self, name: str) -> tuple[str, str]:
        return self.create(name, {"template": template(self.rng, 0, failing=True),
                                  "disable_rollback": False}, wait=False), "create"

    def a_update(self, name: str) -> tuple[str, str]:
        path = self.create(name, {"template": template(self.rng, 0)})
        self.c.call("PUT", path, {"template": template(self.rng, 1), "files": FILES,
                                  "parameters": {}})
        return path, "update"

    def a_update_rollback(self, name: str) -> tuple[str, str]:
        path = self.create(name, {"template": template(self.rng, 0)})
        self.c.call("PUT", path, {"template": template(self.rng, 1, failing=True),
                                  "files": FILES, "parameters": {},
                                  "disable_rollback": False})
        return path, "update"

    def a_delete(self, name: str) -> tuple[str, str]:
        path = self.create(name, {"template": template(self.rng, 0)})
        self.c.call("DELETE", path)
        return path, "delete"

    def a_snapshot(self, name: str) -> tuple[str, str]:
        path = self.create(name, {"template": template(self.rng, 0)})
        self.c.call("POST", path + "/snapshots", {"name": "s"})
        return path, "snapshot"

    def a_restore(self, name: str) -> tuple[str, str]:
        path = self.create(name, {"template": template(self.rng, 0)})
        snap = self.c.call("POST", path + "/snapshots", {"name": "s"}).json()
        self.settled(path, name)
        self.c.call("PUT", path, {"template": template(self.rng, 1), "files": FILES,
                                  "parameters": {}})
        self.settled(path, name)
        self.c.call("POST", f"{path}/snapshots/{snap['id']}/restore")
        return path, "restore"

    def a_suspend_resume(self, name: str) -> tuple[str, str]:
        path = self.create(name, {"template": template(self.rng, 0)})
        self.c.call("POST", path + "/actions", {"suspend": None})
        if self.rng.random() < 0.5:
            return path, "suspend"
        self.settled(path, name)
        self.c.call("POST", path + "/actions", {"resume": None})
        return path, "resume"

    def a_check(self, name: str) -> tuple[str, str]:
        path = self.create(name, {"template": template(self.rng, 0)})
        self.c.call("POST", path + "/actions", {"check": None})
        return path, "check"

    def a_adopt(self, name: str) -> tuple[str, str]:
        tmpl = template(self.rng, 0, nested=False)  # abandon keeps a child stack
        source = self.create(name + "-src", {"template": tmpl})
        data = self.c.call("DELETE", source + "/abandon").json()
        return self.create(name, {"template": tmpl, "adopt_stack_data": json.dumps(data)},
                           wait=False), "adopt"

    def a_group(self, name: str) -> tuple[str, str]:
        return self.create(name, {"template": template(self.rng, 0, group=True)},
                           wait=False), "create"

    ACTIONS = ("create", "create_rollback", "update", "update_rollback", "delete",
               "snapshot", "restore", "suspend_resume", "check", "adopt", "group")

    # -- what must hold after the restart -------------------------------------------------
    def expected_names(self, path: str, status: str, action: str) -> set[str] | None:
        """The resources the stack must have: its stored template's, none after a
        create's rollback; None when a FAILED stack may hold any partial set."""
        if status.endswith("FAILED"):
            return None
        if status == "ROLLBACK_COMPLETE" and action == "create":
            return set()
        tmpl = self.c.call("GET", path + "/template").json()
        return set(tmpl.get("resources") or {})

    def check(self, path: str, action: str, note: str) -> str:
        status = self.settled(path, note)
        assert status.endswith(("COMPLETE", "FAILED")), f"{note}: {status}"
        if status != "DELETE_COMPLETE":
            names = {r["resource_name"] for r in
                     self.c.call("GET", path + "/resources").json()["resources"]}
            want = self.expected_names(path, status, action)
            if want is not None:
                assert names == want, f"{note}: {status} with {sorted(names)}"
        self.c.check_consistency(note)
        return status


def run_matrix(workdir: Path, db_url: str | None, backend: str) -> Counter[str]:
    rng = random.Random(f"{SEED}-{backend}")
    crasher = Crasher(workdir, rng, db_url)
    matrix = Matrix(crasher, rng)
    outcomes: Counter[str] = Counter()
    first = rng.randrange(len(Matrix.ACTIONS))
    crasher.start()
    try:
        for run in range(runs_for(backend)):
            kind = Matrix.ACTIONS[(first + run) % len(Matrix.ACTIONS)]
            note = f"KILN_CRASH_SEED={SEED} {backend} run {run} ({kind})"
            start: Callable[[str], tuple[str, str]] = getattr(matrix, f"a_{kind}")
            path, action = start(f"m{run}")
            crasher.kill_after(rng.uniform(0.0, 1.2), path)
            crasher.start()
            status = matrix.check(path, action, note)
            outcomes[f"{kind}: {status}"] += 1
            print(f"{note}: {status}", flush=True)  # progress, shown if the run times out
            if status != "DELETE_COMPLETE":
                crasher.call("DELETE", path)
                final = crasher.settle(path, seed_note=f"{note} delete after")
                assert final == "DELETE_COMPLETE", f"{note}: delete after gave {final}"
            crasher.check_consistency(f"{note} after its delete")
        live = crasher.query("SELECT id, name FROM stack WHERE deleted_at IS NULL")
        assert live == [], f"KILN_CRASH_SEED={SEED} {backend}: stacks left {live}"
    finally:
        if crasher.proc is not None:
            crasher.proc.stop(signal.SIGKILL)
        crasher.close()
    print(f"crash matrix {backend} seed {SEED}: {sum(outcomes.values())} kills "
          f"({crasher.kills_in_progress} mid-action): {dict(sorted(outcomes.items()))}")
    return outcomes


def test_crash_matrix(tmp_path: Path, db_url: str, request: pytest.FixtureRequest) -> None:
    backend = request.node.callspec.params["db_url"]
    started = time.monotonic()
    run_matrix(tmp_path / "kiln", db_url, backend)
    print(f"{backend}: {time.monotonic() - started:.1f}s")
