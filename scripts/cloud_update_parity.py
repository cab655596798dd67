#!/usr/bin/env python
"""Update behaviour of Kiln's OpenStack types side by side with Heat's, on the test cloud.

For each type a small stack is created, one property is changed per stack update, then
the stack is checked, suspended and resumed. After each step the stack's status (and
reason on failure), whether the physical ID changed (a replacement) and the object as
the cloud shows it are recorded. ``diff`` compares a Kiln run with a Heat 27 run on the
same cloud, Heat's being the reference. A script, not a test: it needs the real Heat.

Usage (the test cloud running: ``python -m tests.support.cloud start``)::

    # Kiln: started here in keystone mode, as tests/cloud starts it
    PYTHONPATH=$PWD python scripts/cloud_update_parity.py run --kiln --out kiln.json
    # Heat 27 (../shared/peer-cloud/heat-start.sh pointed at the test cloud's Keystone)
    PYTHONPATH=$PWD python scripts/cloud_update_parity.py run \
        --heat-url http://127.0.0.1:20304 --out heat.json
    PYTHONPATH=$PWD python scripts/cloud_update_parity.py diff heat.json kiln.json

``--only OS::Neutron::Port`` (repeatable) limits a run to some types.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
import time
import traceback
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from update_parity_scenarios import DROP, EXTERNAL_ID, Scenario, leftovers, scenarios

from tests.support.cloud import Cloud, CloudLayout, is_up
from tests.support.local_http import local_http_server


def template(scenario: Scenario, props: dict[str, Any], external: str | None = None
             ) -> dict[str, Any]:
    subject: dict[str, Any] = {
        "type": scenario.type,
        "properties": {k: v for k, v in props.items() if v != DROP and k != EXTERNAL_ID}}
    if external and props.get(EXTERNAL_ID) != DROP:
        subject["external_id"] = external
    if scenario.deletion_policy:
        subject["deletion_policy"] = scenario.deletion_policy
    return {"heat_template_version": "2018-08-31",
            "resources": {**scenario.support, "r": subject}}


def _wait(heat: Any, stack: str, timeout: float) -> Any:
    """The stack once its action ended (Heat and Kiln both mark it IN_PROGRESS before
    the API answers a create, update or delete); None once the stack is gone."""
    deadline = time.monotonic() + timeout
    delay = 0.1
    from heatclient import exc

    while True:
        try:
            current = heat.stacks.get(stack)
        except exc.HTTPNotFound:            # Kiln forgets a deleted stack at once
            return None
        if not current.stack_status.endswith("_IN_PROGRESS"):
            return current
        if time.monotonic() > deadline:
            return current
        time.sleep(delay)  # status poll with backoff, bounded by the deadline
        delay = min(delay * 2, 1.0)


def _until(heat: Any, stack_id: str, action: str, timeout: float) -> Any:
    """The stack once *action* ran and ended (Heat may answer an action's request
    before the stack shows it started)."""
    deadline = time.monotonic() + timeout
    while True:
        stack = _wait(heat, stack_id, timeout)
        if stack is None or stack.stack_status.startswith(action.upper() + "_") or \
                time.monotonic() > deadline:
            return stack
        time.sleep(0.2)  # the action is not visible yet; bounded by the deadline


def _read(scenario: Scenario, sdk: Any, rid: str | None) -> Any:
    if not rid:
        return None
    try:
        return scenario.read(sdk, rid)
    except Exception as exc:  # noqa: BLE001 -- a gone object is a finding too
        return f"unreadable: {type(exc).__name__}"


def _record(step: str, stack: Any, replaced: bool | None, cloud: Any) -> dict[str, Any]:
    return {"step": step, "status": stack.stack_status,
            "reason": None if stack.stack_status.endswith("COMPLETE")
            else stack.stack_status_reason, "replaced": replaced, "cloud": cloud}


class _Run:
    """One scenario's stack against one orchestrator."""

    def __init__(self, scenario: Scenario, heat: Any, admin: Any, user_sdk: Any) -> None:
        self.scenario, self.heat, self.user_sdk = scenario, heat, user_sdk
        self.sdk = user_sdk if scenario.as_user else admin
        self.admin = admin
        self.props = dict(scenario.props)
        self.external: str | None = None
        self.stack_id = ""
        self.rid: str | None = None
        self.records: list[dict[str, Any]] = []
        self.before: dict[str, Any] = {}

    def leftovers(self) -> dict[str, list[str]]:
        """What this scenario's snapshots left in the project (what earlier scenarios
        of the run left there is taken away)."""
        return since(self.before, leftovers(self.user_sdk))

    def add(self, step: str, stack: Any, replaced: bool | None, **extra: Any) -> None:
        record = _record(step, stack, replaced, _read(self.scenario, self.sdk, self.rid))
        if self.scenario.extended:
            res = self.heat.resources.get(self.stack_id, "r")
            record["resource"] = res.resource_status
        self.records.append({**record, **extra})

    def update(self, label: str, change: dict[str, Any]) -> Any:
        self.props.update(change)
        self.heat.stacks.update(self.stack_id, template=template(
            self.scenario, self.props, self.external), **self._timeout())
        stack = _wait(self.heat, self.stack_id, self.scenario.timeout)
        new = self.heat.resources.get(self.stack_id, "r").physical_resource_id
        old, self.rid = self.rid, new
        self.add(label, stack, new != old)
        return stack

    def _timeout(self) -> dict[str, int]:
        minutes = self.scenario.timeout_mins
        return {"timeout_mins": minutes} if minutes else {}

    def run(self) -> list[dict[str, Any]]:
        """Create, update step by step, act, delete; one record per step."""
        scenario, heat = self.scenario, self.heat
        if scenario.extended:
            self.before = leftovers(self.user_sdk)
        if scenario.external:
            self.external = scenario.external(self.user_sdk, self.admin)
        name = f"parity-{scenario.type.split('::')[-1].lower()}-{uuid.uuid4().hex[:6]}"
        self.stack_id = heat.stacks.create(stack_name=name, template=template(
            scenario, self.props, self.external), **self._timeout())["stack"]["id"]
        stack = _wait(heat, self.stack_id, scenario.timeout)
        self.rid = heat.resources.get(self.stack_id, "r").physical_resource_id
        self.add("create", stack, None)
        try:
            for label, change in scenario.steps:
                if not stack.stack_status.endswith("COMPLETE"):
                    break
                stack = self.update(label, change)
            if stack.stack_status.endswith("COMPLETE") and scenario.actions:
                self.records.extend(_actions(scenario, heat, self.sdk, self.stack_id,
                                             self.rid or ""))
            if stack.stack_status.endswith("COMPLETE") and scenario.snapshot is not None:
                self.snapshots()
        finally:
            self.delete()
        return self.records

    def snapshots(self) -> None:
        """Snapshot, the scenario's updates, restore, then delete the snapshot,
        recording the snapshot's status and what it left in the project."""
        from heatclient import exc

        scenario, heat, sid = self.scenario, self.heat, self.stack_id
        snap = heat.stacks.snapshot(sid, name="parity")["id"]
        stack = _until(heat, sid, "SNAPSHOT", scenario.timeout)
        self.add("snapshot", stack, None, snapshot=self._snapshot(snap),
                 leftovers=self.leftovers())
        for label, change in scenario.snapshot or []:
            stack = self.update(label, change)
        try:
            heat.stacks.restore(sid, snap)
        except exc.HTTPException as refused:
            self.records.append({"step": "restore", "status": f"HTTP {refused.code}",
                                 "reason": str(refused)})
        else:
            stack = _until(heat, sid, "RESTORE", scenario.timeout)
            new = heat.resources.get(sid, "r").physical_resource_id
            old, self.rid = self.rid, new
            self.add("restore", stack, new != old, leftovers=self.leftovers())
        heat.stacks.snapshot_delete(sid, snap)
        deadline = time.monotonic() + scenario.timeout
        while self._snapshot(snap) != "gone" and time.monotonic() < deadline:
            time.sleep(0.5)  # Heat deletes a snapshot's artefacts after answering
        stack = _wait(heat, sid, scenario.timeout)
        self.add("snapshot delete", stack, None, snapshot=self._snapshot(snap),
                 leftovers=self.leftovers())

    def _snapshot(self, snap: str) -> str:
        from heatclient import exc

        try:
            shown = self.heat.stacks.snapshot_show(self.stack_id, snap)
        except exc.HTTPNotFound:
            return "gone"
        shown = shown.get("snapshot", shown)
        reason = shown.get("status_reason")
        return f"{shown.get('status')}" + (f" ({reason})" if reason else "")

    def delete(self) -> None:
        self.heat.stacks.delete(self.stack_id)
        final = _wait(self.heat, self.stack_id, self.scenario.timeout)
        status = final.stack_status if final is not None else "DELETE_COMPLETE"
        if self.scenario.extended:
            self.records.append({
                "step": "delete", "status": status,
                "reason": None if status == "DELETE_COMPLETE" else final.stack_status_reason,
                "replaced": None, "cloud": _read(self.scenario, self.sdk, self.rid),
                "leftovers": self.leftovers()})
        elif status != "DELETE_COMPLETE":
            self.records.append({"step": "delete", "status": status,
                                 "reason": final.stack_status_reason})


def since(before: dict[str, Any], now: dict[str, Any]) -> dict[str, list[str]]:
    """*now* without *before* (each a map of lists of statuses)."""
    out = {}
    for kind, items in now.items():
        rest = list(items)
        for item in before.get(kind, []):
            if item in rest:
                rest.remove(item)
        out[kind] = sorted(rest)
    return out


def run_scenario(scenario: Scenario, heat: Any, admin: Any, user_sdk: Any
                 ) -> list[dict[str, Any]]:
    """Create, update step by step, delete; one record per step."""
    return _Run(scenario, heat, admin, user_sdk).run()


def _actions(scenario: Scenario, heat: Any, sdk: Any, stack_id: str, rid: str
             ) -> list[dict[str, Any]]:
    """Check, suspend and resume the stack, in that order, each once the one before
    ended."""
    records = []
    for action in ("check", "suspend", "resume"):
        getattr(heat.actions, action)(stack_id)
        stack = _until(heat, stack_id, action, scenario.timeout)
        records.append(_record(action, stack, None, _read(scenario, sdk, rid)))
        if not stack.stack_status.endswith("COMPLETE"):
            break
    return records


class _Bytes(BaseHTTPRequestHandler):
    """What OS::Glance::WebImage's Glance imports (the cloud allows loopback URLs)."""

    def do_GET(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "application/octet-stream")
        self.send_header("Content-Length", "65536")
        self.end_headers()
        self.wfile.write(bytes(65536))

    def log_message(self, *args: Any) -> None:
        pass


@contextmanager
def _extra_image(sdk: Any) -> Iterator[str]:
    """A second image for the server's rebuild."""
    name = f"parity-img-{uuid.uuid4().hex[:6]}"
    image = sdk.image.create_image(name=name, disk_format="raw", container_format="bare",
                                   data=b"\0" * 1024, wait=True)
    try:
        yield name
    finally:
        sdk.image.delete_image(image, ignore_missing=True)


@contextmanager
def _user(cloud: Cloud, sdk: Any) -> Iterator[Any]:
    """A project and user of its own, admin there (flavors, Keystone objects and a
    port's MAC need it; the cloud's policy makes a project admin a cloud admin)."""
    from tests.cloud.identity import new_user, remove_user

    user = new_user(cloud, sdk, "parity")
    idn = sdk.identity
    found = idn.find_user(user.name, domain_id="default")
    idn.assign_project_role_to_user(user.project_id, found, idn.find_role("admin"))
    try:
        yield user
    finally:
        purge(sdk, user.project_id)
        remove_user(sdk, user)


def purge(sdk: Any, project_id: str) -> None:
    """What a failed delete left in the project: servers, volumes, floating IPs,
    routers' interfaces and gateways, ports, subnets, networks, security groups."""
    net = sdk.network
    for server in sdk.compute.servers(all_projects=True, project_id=project_id):
        sdk.compute.delete_server(server)
        sdk.compute.wait_for_delete(server)
    for volume in sdk.block_storage.volumes(all_projects=True, project_id=project_id):
        sdk.block_storage.delete_volume(volume, force=True)
    for fip in net.ips(project_id=project_id):
        net.delete_ip(fip)
    for router in net.routers(project_id=project_id):
        for port in net.ports(device_id=router.id):
            if port.device_owner == "network:router_interface":
                net.remove_interface_from_router(router, port_id=port.id)
        net.update_router(router, external_gateway_info={})
        net.delete_router(router)
    for port in net.ports(project_id=project_id):
        net.delete_port(port)
    for subnet in net.subnets(project_id=project_id):
        net.delete_subnet(subnet)
    for network in net.networks(project_id=project_id):
        net.delete_network(network)
    for group in net.security_groups(project_id=project_id):
        if group.name != "default":
            net.delete_security_group(group)


@contextmanager
def _kiln(cloud: Cloud, sdk: Any) -> Iterator[str]:
    from tests.cloud.identity import keystone_options
    from tests.support.server import start_kiln

    with tempfile.TemporaryDirectory(prefix="parity-kiln-") as workdir:
        proc = start_kiln(Path(workdir), options=keystone_options(cloud, sdk))
        try:
            yield proc.url
        finally:
            proc.stop()


def run(args: argparse.Namespace) -> int:
    layout = CloudLayout()
    if not is_up(layout):
        print("the test cloud is not running (python -m tests.support.cloud start)")
        return 2
    cloud = Cloud(layout)
    sdk = cloud.connect()
    out = Path(args.out)
    results: dict[str, list[dict[str, Any]]] = {}
    if args.only and out.exists():      # a partial run replaces those types only
        results = json.loads(out.read_text())
    with _user(cloud, sdk) as user, _extra_image(sdk) as image, \
            local_http_server(_Bytes) as image_url, \
            (_kiln(cloud, sdk) if args.kiln else _given(args.heat_url)) as url:
        heat = user.heat(url)
        for scenario in scenarios(image, image_url):
            if args.only and not {scenario.type, scenario.name} & set(args.only):
                continue
            t0 = time.monotonic()
            try:
                results[scenario.name] = run_scenario(scenario, heat, sdk, user.connect())
            except Exception as exc:  # noqa: BLE001 -- recorded, the next type runs
                results[scenario.name] = [{"step": "error", "status": repr(exc),
                                           "reason": traceback.format_exc()[-600:]}]
            print(f"{scenario.name}: {time.monotonic() - t0:.0f}s", file=sys.stderr)
            out.write_text(json.dumps(results, indent=1, sort_keys=True))
    return 0


@contextmanager
def _given(url: str) -> Iterator[str]:
    yield url.rstrip("/")


#: names that differ from run to run: a stack's generated physical names, the random
#: names the scenarios give keypairs, Keystone objects and the rebuild image
_RANDOM = [(re.compile(r"parity-[a-z]+-[0-9a-f]{6}-([a-z0-9_]+)-[A-Za-z0-9]+"),
            r"<physical name of \1>"),
           (re.compile(r"\b(kp|kpa|kpb|kpe|ext|pp|pu|pr|parity-img)-[0-9a-f]{6}\b"),
            r"\1-*")]

#: what a step records beside its status and the cloud's object (the steps added with
#: the snapshot and external_id scenarios)
_EXTRA = ("resource", "snapshot", "leftovers")


def _normal(value: Any) -> Any:
    text = json.dumps(value, sort_keys=True)
    for pattern, repl in _RANDOM:
        text = pattern.sub(repl, text)
    return json.loads(text)


def _line(rec: dict[str, Any]) -> str:
    verb = {None: "", True: "REPLACED ", False: "in place "}[rec.get("replaced")]
    reason = f" ({(rec.get('reason') or '')[:160]})" if rec.get("reason") else ""
    extra = "".join(f" {k}={json.dumps(rec[k])}" for k in _EXTRA if k in rec)
    return f"{rec['status']} {verb}{json.dumps(_normal(rec.get('cloud')))}{extra}{reason}"


def diff(args: argparse.Namespace) -> int:
    """Print each step where the two runs differ; exit 1 if any does."""
    ref, other = (json.loads(Path(p).read_text()) for p in (args.reference, args.other))
    differences = 0
    for rtype in sorted(set(ref) | set(other)):
        left = {r["step"]: r for r in ref.get(rtype, [])}
        right = {r["step"]: r for r in other.get(rtype, [])}
        for step in list(dict.fromkeys([*left, *right])):
            a, b = left.get(step), right.get(step)
            la = _line(a) if a else "-"
            lb = _line(b) if b else "-"
            same = (a and b and a["status"] == b["status"]
                    and a.get("replaced") == b.get("replaced")
                    and _normal(a.get("cloud")) == _normal(b.get("cloud"))
                    and all(a.get(k) == b.get(k) for k in _EXTRA))
            if not same:
                differences += 1
                print(f"{rtype} [{step}]\n  {args.reference}: {la}\n  {args.other}: {lb}")
    print(f"{differences} difference(s)")
    return 1 if differences else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    go = sub.add_parser("run", help="run the scenarios against one orchestrator")
    target = go.add_mutually_exclusive_group(required=True)
    target.add_argument("--kiln", action="store_true", help="start kiln serve here")
    target.add_argument("--heat-url", help="an orchestration API (http://host:port)")
    go.add_argument("--out", required=True)
    go.add_argument("--only", action="append", help="a type to run (repeatable)")
    cmp = sub.add_parser("diff", help="compare two runs (the first is the reference)")
    cmp.add_argument("reference")
    cmp.add_argument("other")
    args = parser.parse_args(argv)
    return run(args) if args.command == "run" else diff(args)


if __name__ == "__main__":
    sys.exit(main())
