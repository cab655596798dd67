"""Two requests on one stack sent at the same instant over HTTP, and what must hold after.

A *trial* prepares a stack (created and settled; suspended first when one side resumes;
snapshotted when one side restores), then two threads, each with its own HTTP client,
meet at a barrier and send their requests. Once the stack has settled the trial checks
what a user relies on:

- no 5xx, only the answers Heat gives to such a race (2xx, 400, 404, 409);
- the stack settles (nothing left IN_PROGRESS);
- an acknowledged delete (or abandon) is never dropped: the stack ends deleted;
- two requests never both lose to each other (409 and 409);
- otherwise exactly one action won or they ran one after the other: the stack's own
  events since the race are spans (``X IN_PROGRESS`` then ``X COMPLETE/FAILED``) that do
  not overlap, one per accepted action and none for a refused one, and the stack ends
  in the last span's state.

Used by tests/functional/test_race_matrix.py (one server) and
tests/integration/test_race_two_servers.py (two servers on one database).
"""

from __future__ import annotations

import threading
import time
import uuid
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import httpx

#: every request of the matrix; ``create`` creates the stack by name (nothing before it)
ACTIONS = ("create", "update", "patch", "delete", "suspend", "resume", "check", "snapshot",
           "restore", "cancel_update", "abandon", "signal")
#: the stack action an accepted request starts (what its events are named)
STACK_ACTION = {"create": "CREATE", "update": "UPDATE", "patch": "UPDATE",
                "suspend": "SUSPEND", "resume": "RESUME", "check": "CHECK",
                "snapshot": "SNAPSHOT", "restore": "RESTORE"}
DELETING = ("delete", "abandon")
ANSWERS = {200, 201, 202, 204, 400, 404, 409}
SETTLE_DEADLINE = 60.0


def template(length: int) -> dict[str, Any]:
    return {"heat_template_version": "2018-08-31", "resources": {
        "word": {"type": "OS::Heat::RandomString", "properties": {"length": length}},
        "after": {"type": "OS::Heat::None", "depends_on": ["word"]},
        "handle": {"type": "OS::Heat::WaitConditionHandle"}}}


@dataclass
class Trial:
    """One race's stack, its two requests and their answers."""

    first: str
    second: str
    name: str = field(default_factory=lambda: f"race-{uuid.uuid4().hex[:12]}")
    stack_id: str | None = None
    snapshot_id: str | None = None
    #: stack-level events before the race
    baseline: int = 0
    answers: list[httpx.Response] = field(default_factory=list)

    @property
    def pair(self) -> str:
        return f"{self.first}+{self.second}"


def _path(trial: Trial) -> str:
    return f"/stacks/{trial.name}/{trial.stack_id}"


def send(client: httpx.Client, trial: Trial, action: str) -> httpx.Response:
    """The request a user (or the openstack CLI) sends for ``action``."""
    if action == "create":
        return client.post("/stacks", json={"stack_name": trial.name, "template": template(8)})
    if trial.stack_id is None:  # racing the create: look the name up as the CLI does
        found = client.get(f"/stacks/{trial.name}", follow_redirects=True)
        if found.status_code != 200:
            return found
        path = f"/stacks/{trial.name}/{found.json()['stack']['id']}"
    else:
        path = _path(trial)
    if action == "update":
        return client.put(path, json={"template": template(9)})
    if action == "patch":
        return client.patch(path, json={"template": template(10)})
    if action == "delete":
        return client.delete(path)
    if action == "abandon":
        return client.delete(f"{path}/abandon")
    if action in ("suspend", "resume", "check", "cancel_update"):
        return client.post(f"{path}/actions", json={action: None})
    if action == "snapshot":
        return client.post(f"{path}/snapshots", json={"name": "race"})
    if action == "restore":
        return client.post(f"{path}/snapshots/{trial.snapshot_id}/restore")
    if action == "signal":
        return client.post(f"{path}/resources/handle/signal",
                           json={"status": "SUCCESS", "id": "1", "data": "race"})
    raise ValueError(action)


def _stack(client: httpx.Client, trial: Trial) -> dict[str, Any] | None:
    """The stack as GET by id shows it (deleted ones too, as Heat), None if unknown."""
    if trial.stack_id is None:
        found = client.get(f"/stacks/{trial.name}", follow_redirects=True)
        if found.status_code == 404:
            return None
        found.raise_for_status()
        trial.stack_id = found.json()["stack"]["id"]
    shown = client.get(_path(trial))
    if shown.status_code == 404:
        return None
    shown.raise_for_status()
    body: dict[str, Any] = shown.json()["stack"]
    return body


def settle(client: httpx.Client, trial: Trial) -> dict[str, Any] | None:
    """Poll (growing pauses, bounded) until the stack is no longer IN_PROGRESS."""
    deadline = time.monotonic() + SETTLE_DEADLINE
    delay = 0.02
    while True:
        stack = _stack(client, trial)
        if stack is None or not stack["stack_status"].endswith("_IN_PROGRESS"):
            return stack
        if time.monotonic() > deadline:
            raise AssertionError(f"{trial.pair}: {trial.name} still {stack['stack_status']}")
        time.sleep(delay)  # status poll with backoff, bounded by the deadline
        delay = min(delay * 2, 0.25)


def split_status(status: str) -> tuple[str, str]:
    """``UPDATE_IN_PROGRESS`` -> (``UPDATE``, ``IN_PROGRESS``)."""
    for end in ("IN_PROGRESS", "COMPLETE", "FAILED"):
        if status.endswith(f"_{end}"):
            return status[:-len(end) - 1], end
    raise AssertionError(f"not a stack status: {status}")


def stack_events(client: httpx.Client, trial: Trial) -> list[tuple[str, str]]:
    """(action, status) of the stack's own events, oldest first."""
    got = client.get(f"{_path(trial)}/events", params={"sort_dir": "asc", "limit": 10000})
    got.raise_for_status()
    found: list[tuple[str, str]] = []
    for event in got.json()["events"]:
        if event["resource_name"] == trial.name and \
                event["physical_resource_id"] == trial.stack_id:
            found.append(split_status(event["resource_status"]))
    return found


def _must(response: httpx.Response, what: str) -> httpx.Response:
    if response.status_code >= 300:
        raise AssertionError(f"{what}: {response.status_code} {response.text}")
    return response


def prepare(client: httpx.Client, trial: Trial) -> None:
    """The stack both requests act on, settled (none for a race that creates it)."""
    if "create" in (trial.first, trial.second):
        return
    created = _must(send(client, trial, "create"), "create")
    trial.stack_id = created.json()["stack"]["id"]
    assert settle(client, trial) is not None
    if "restore" in (trial.first, trial.second):
        snap = _must(send(client, trial, "snapshot"), "snapshot")
        trial.snapshot_id = snap.json()["id"]
        settle(client, trial)
    if "resume" in (trial.first, trial.second):  # after the snapshot: resume needs
        _must(send(client, trial, "suspend"), "suspend")  # SUSPEND_COMPLETE resources
        settle(client, trial)
    trial.baseline = len(stack_events(client, trial))


def race(clients: tuple[httpx.Client, httpx.Client], trial: Trial) -> None:
    """Send both requests at the same instant, one thread and one client each."""
    barrier = threading.Barrier(2)
    answers: dict[int, httpx.Response] = {}
    errors: list[BaseException] = []

    def run(side: int, action: str) -> None:
        try:
            barrier.wait(timeout=30)
            answers[side] = send(clients[side], trial, action)
        except BaseException as exc:  # reported by the test, not lost in a thread  # noqa: BLE001
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(0, trial.first)),
               threading.Thread(target=run, args=(1, trial.second))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if errors:
        raise errors[0]
    trial.answers = [answers[0], answers[1]]


def check(client: httpx.Client, trial: Trial) -> str:
    """Assert what must hold after the race; returns the outcome's label for the tally."""
    actions = (trial.first, trial.second)
    codes = [r.status_code for r in trial.answers]
    for action, answer in zip(actions, trial.answers, strict=True):
        assert answer.status_code in ANSWERS, (
            f"{trial.pair}: {action} answered {answer.status_code}: {answer.text}")
    accepted = [a for a, r in zip(actions, trial.answers, strict=True) if r.is_success]
    # each may be refused for being invalid in the stack's state, but two requests
    # cannot both lose to each other
    assert codes != [409, 409], f"{trial.pair}: both refused with 409"
    final = settle(client, trial)
    label = f"{trial.pair} -> {'/'.join(map(str, codes))}"
    if "create" in actions:
        _check_create(client, trial, accepted)
    if any(a in DELETING for a in accepted):
        assert final is None or final["stack_status"] == "DELETE_COMPLETE", (
            f"{trial.pair}: answered {codes} but the stack ended {final and final['stack_status']}")
        gone = client.get(f"/stacks/{trial.name}", follow_redirects=True)
        assert gone.status_code == 404, f"{trial.pair}: {trial.name} still resolves"
        return f"{label} deleted"
    if final is None or final["stack_status"] == "DELETE_COMPLETE":
        assert "create" in actions and "create" not in accepted, (
            f"{trial.pair}: answered {codes}, yet the stack is gone")
        return f"{label} none"
    spans = _spans(stack_events(client, trial)[trial.baseline:], trial)
    started = Counter(STACK_ACTION[a] for a in accepted if a in STACK_ACTION)
    assert Counter(a for a, _ in spans) == started, (
        f"{trial.pair}: answered {codes}, ran {spans}")
    status = final["stack_status"]
    if spans:
        assert status == spans[-1][1], f"{trial.pair}: spans {spans}, stack {status}"
    if "cancel_update" not in accepted and not _resume_after_check(spans, final):
        assert status.endswith("_COMPLETE"), f"{trial.pair}: answered {codes}, ended {status}"
    return f"{label} {status}"


def _resume_after_check(spans: list[tuple[str, str]], final: dict[str, Any]) -> bool:
    """A check or a snapshot of the suspended stack that ran first leaves its resources
    CHECK_COMPLETE or SNAPSHOT_COMPLETE, which Heat 27 (and Kiln) refuse to resume:
    "State ('SNAPSHOT', 'COMPLETE') invalid for resume" (checked on the peer: suspend,
    snapshot, resume). That order ends RESUME_FAILED by design, not by a lost race."""
    return (len(spans) == 2 and spans[0] in (("CHECK", "COMPLETE"), ("SNAPSHOT", "COMPLETE"))
            and spans[1] == ("RESUME", "FAILED")
            and "invalid for resume" in final["stack_status_reason"])


def _check_create(client: httpx.Client, trial: Trial, accepted: list[str]) -> None:
    listed = client.get("/stacks", params={"name": trial.name})
    listed.raise_for_status()
    live = [s for s in listed.json()["stacks"] if s["stack_status"] != "DELETE_COMPLETE"]
    creates = accepted.count("create")
    assert creates <= 1, f"{trial.pair}: the name was created twice"
    if any(a in DELETING for a in accepted) or not creates:
        return
    assert len(live) == 1, f"{trial.pair}: {len(live)} stacks named {trial.name}"


def _spans(events: list[tuple[str, str]], trial: Trial) -> list[tuple[str, str]]:
    """(action, the stack status it ended in) of each stack action since the race;
    fails on overlap. A rollback continues the update it undoes (cancel with rollback)."""
    spans: list[tuple[str, str]] = []
    running: str | None = None
    for action, status in events:
        if status == "IN_PROGRESS":
            if action == "ROLLBACK" and running in ("UPDATE", None) and (
                    running == "UPDATE" or (spans and spans[-1][0] == "UPDATE")):
                if running is None:  # the update's FAILED came first: reopen it
                    spans.pop()
                running = "UPDATE"
                continue
            assert running is None, f"{trial.pair}: {action} started during {running}: {events}"
            running = action
        elif running is not None and action in (running, "ROLLBACK"):
            spans.append((running, f"{action}_{status}"))
            running = None
    assert running is None, f"{trial.pair}: {running} never ended: {events}"
    return spans


def run_trials(make_clients: Callable[[], tuple[httpx.Client, httpx.Client]],
               pairs: list[tuple[str, str]], runs: int, parallel: int = 4) -> Counter[str]:
    """Every pair ``runs`` times (``parallel`` trials at once, each on its own stack);
    returns the tally of outcomes. The first failed check is raised."""
    from concurrent.futures import ThreadPoolExecutor

    def one(pair: tuple[str, str]) -> str:
        clients = make_clients()
        try:
            trial = Trial(*pair)
            prepare(clients[0], trial)
            race(clients, trial)
            outcome = check(clients[0], trial)
            if trial.stack_id is not None:
                clients[0].delete(_path(trial))
            return outcome
        finally:
            for client in clients:
                client.close()

    tally: Counter[str] = Counter()
    with ThreadPoolExecutor(parallel) as pool:
        for outcome in pool.map(one, [p for p in pairs for _ in range(runs)]):
            tally[outcome] += 1
    return tally
