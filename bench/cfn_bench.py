"""What servers do to the API all day: metadata polls and signals, at a fixed rate.

    .venv/bin/python bench/cfn_bench.py [--rate 500] [--clients 50] [--seconds 20]
        [--servers 50] [--target kiln|heat] [--heat-url URL --heat-cfn-url URL]
        [--phases cfn-metadata,native-metadata,signal] [--py-spy DIR] [--write]

10,000 servers polling every 30 s is 333 requests/s; this sends ``--rate`` requests/s
(open loop: each of ``--clients`` keep-alive clients sends at its own fixed times, and a
request's latency counts from when it was due, so a stalled server cannot hide its
backlog) for ``--seconds`` per phase:

- ``cfn-metadata``: ``GET /v1/?Action=DescribeStackResource`` signed with SigV2 as
  os-collect-config's cfn collector signs it, with the keypair the server was issued
  (each client is one server, with its own key; a fresh Timestamp each request; Kiln
  checks every signature, and that the key may read that resource);
- ``native-metadata``: ``GET /v1/{project}/stacks/{name}/{id}/resources/{r}/metadata``
  (the heat collector);
- ``signal``: ``PUT`` to each server's pre-signed wait-condition URL (cfn-signal), while
  the conditions wait (each client re-sends its own UniqueId, so no condition completes).

The stack has ``--servers`` OS::Heat::DeployedServer resources on POLL_SERVER_CFN, with
a deployment in their metadata (what the agents read), and as many AWS wait-condition
handles and conditions. A server that falls behind is not waited for forever: a client
stops ``--drain`` seconds after the phase's end, and what it never sent is reported as
``unsent`` (the achieved ``rate`` then says how far behind the server was).
``--target heat`` runs the same load against Heat 27 (``../shared/peer-heat``: its
native API and heat-api-cfn, which in that set-up checks no signature). Reports
p50/p90/p99/max in ms, the achieved rate and errors; ``--write`` adds the run to
bench/results/cfn.json.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlencode, urlsplit

import httpx
import psutil

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.loadgen import Connection
from bench.scenarios_bench import Profiler
from kiln import ec2sign
from tests.support.server import start_kiln


def template(servers: int) -> dict[str, Any]:
    resources: dict[str, Any] = {}
    for i in range(servers):
        resources[f"server{i}"] = {
            "Type": "OS::Heat::DeployedServer",
            "Properties": {"software_config_transport": "POLL_SERVER_CFN"},
            "Metadata": {"deployments": [{"name": f"d{i}", "group": "script",
                                          "config": "#!/bin/sh\necho hi\n" * 10,
                                          "inputs": [{"name": "x", "value": i}]}]}}
        resources[f"handle{i}"] = {"Type": "AWS::CloudFormation::WaitConditionHandle"}
        resources[f"wait{i}"] = {"Type": "AWS::CloudFormation::WaitCondition",
                                 "Properties": {"Handle": {"Ref": f"handle{i}"},
                                                "Timeout": 3600, "Count": 1000}}
    outputs = {f"url{i}": {"Value": {"Ref": f"handle{i}"}} for i in range(servers)}
    return {"AWSTemplateFormatVersion": "2010-09-09", "Resources": resources,
            "Outputs": outputs}


class Target:
    """Where the load goes and how each request is made."""

    def __init__(self, native: str, cfn: str, *, presigned: bool) -> None:
        self.presigned = presigned
        self.native = native.rstrip("/")     # .../v1/<project>
        self.cfn = cfn.rstrip("/") + "/"     # .../v1/
        self.stack_url = ""
        self.signal_urls: list[str] = []
        #: each server's (access key, secret), from its os_collect_config attribute
        self.keys: list[tuple[str, str]] = []

    def metadata_query(self, index: int) -> str:
        """A DescribeStackResource GET signed as the cfn collector signs it."""
        access, secret = self.keys[index]
        params = {"Action": "DescribeStackResource", "StackName": "bench",
                  "LogicalResourceId": f"server{index}", "AWSAccessKeyId": access,
                  "SignatureVersion": "2", "SignatureMethod": "HmacSHA256",
                  "Timestamp": dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")}
        parts = urlsplit(self.cfn)
        params["Signature"] = ec2sign.signature(
            secret, "HmacSHA256", "GET", parts.netloc.lower(), parts.path,
            ec2sign.canonical_query(params))
        return f"{self.cfn}?{urlencode(params)}"


async def setup(target: Target, servers: int) -> None:
    async with httpx.AsyncClient(timeout=120) as client:
        resp = await client.post(f"{target.native}/stacks", json={
            "stack_name": "bench", "template": template(servers), "timeout_mins": 120})
        resp.raise_for_status()
        target.stack_url = resp.json()["stack"]["links"][0]["href"]
        deadline = time.monotonic() + 300
        while True:
            stack = (await client.get(target.stack_url)).json()["stack"]
            urls = {o["output_key"]: o["output_value"] for o in stack.get("outputs") or []}
            ready = [urls.get(f"url{i}") for i in range(servers)]
            if target.presigned:
                if all(isinstance(u, str) and "Signature=" in u for u in ready):
                    target.signal_urls = [str(u) for u in ready]
                    break
            elif all(u is not None for u in ready):
                # Heat without Keystone issues no keypair and checks no signature: its
                # handles take a PUT to the bare ARN URL
                tenant = target.native.rsplit("/", 1)[1]
                target.signal_urls = [
                    f"{target.cfn}waitcondition/" + quote(
                        f"arn:openstack:heat::{tenant}:stacks/bench/{stack['id']}/"
                        f"resources/handle{i}", "")
                    for i in range(servers)]
                break
            if stack["stack_status"].endswith("FAILED"):
                raise SystemExit(f"stack failed: {stack.get('stack_status_reason')}")
            if time.monotonic() > deadline:
                raise SystemExit(f"stack not ready: {stack['stack_status']}")
            await asyncio.sleep(0.5)  # waiting for the stack; not measured
        for i in range(servers):
            # Heat shows the handles' URLs before the servers exist: wait for each
            while True:
                shown = (await client.get(f"{target.stack_url}/resources/server{i}")).json()
                occ = shown["resource"]["attributes"].get("os_collect_config") or {}
                if occ.get("cfn"):
                    break
                if time.monotonic() > deadline:
                    raise SystemExit(f"server{i} has no os_collect_config: {shown}")
                await asyncio.sleep(0.5)  # waiting for the stack; not measured
            cfn = occ["cfn"]
            target.keys.append((str(cfn["access_key_id"]), str(cfn["secret_access_key"])))


async def client_loop(target: Target, phase: str, index: int, clients: int, rate: float,
                      until: float, servers: int, latencies: list[float],
                      errors: list[str], drain: float) -> int:
    """One server's agent: its requests at fixed times until ``until``; how many it
    never sent (given up ``drain`` seconds after ``until``)."""
    interval = clients / rate
    due = time.monotonic() + (index / clients) * interval
    conn: Connection | None = None
    server = index % servers
    native = f"{target.stack_url}/resources/server{server}/metadata"
    body = json.dumps({"Status": "SUCCESS", "Reason": "bench", "UniqueId": f"c{index}",
                       "Data": "x"}).encode()
    while due < until:
        if time.monotonic() > until + drain:
            break
        delay = due - time.monotonic()
        if delay > 0:
            await asyncio.sleep(delay)  # open-loop schedule, not a synchronisation
        try:
            if conn is None or conn.closed:
                if conn is not None:
                    await conn.close()
                conn = await Connection.open(target.cfn if phase != "native-metadata"
                                             else target.native)
            if phase == "cfn-metadata":
                status, answer = await conn.get(target.metadata_query(server))
            elif phase == "native-metadata":
                status, answer = await conn.get(native)
            else:
                status, answer = await conn.request(
                    "PUT", target.signal_urls[index % servers], body, {"Content-Type": ""})
            if status != 200:
                errors.append(f"{status} {answer[:200]!r}")
        except (OSError, asyncio.IncompleteReadError, RuntimeError) as exc:
            errors.append(repr(exc))
            conn = None
        latencies.append((time.monotonic() - due) * 1000)
        due += interval
    if conn is not None:
        await conn.close()
    unsent = 0
    while due < until:
        unsent += 1
        due += interval
    return unsent


async def run_phase(target: Target, phase: str, args: argparse.Namespace) -> dict[str, Any]:
    latencies: list[float] = []
    errors: list[str] = []
    began = time.monotonic()
    until = began + args.seconds
    unsent = await asyncio.gather(*(
        client_loop(target, phase, i, args.clients, args.rate, until, args.servers,
                    latencies, errors, args.drain) for i in range(args.clients)))
    elapsed = time.monotonic() - began
    ordered = sorted(latencies)

    def pct(p: float) -> float:
        return round(ordered[min(len(ordered) - 1, int(len(ordered) * p))], 2)

    return {"phase": phase, "requests": len(ordered), "rate": round(len(ordered) / elapsed),
            "p50_ms": pct(0.50), "p90_ms": pct(0.90), "p99_ms": pct(0.99),
            "max_ms": round(ordered[-1], 2), "mean_ms": round(statistics.fmean(ordered), 2),
            "errors": len(errors), "unsent": sum(unsent),
            "first_errors": sorted(set(errors))[:3]}


PHASES = ("cfn-metadata", "native-metadata", "signal")


async def measure(target: Target, args: argparse.Namespace,
                  pid: int | None = None) -> list[dict[str, Any]]:
    await setup(target, args.servers)
    results = []
    profiler = Profiler(pid, args.py_spy)
    server = psutil.Process(pid) if pid is not None else None
    for phase in args.phases:
        profiler.start(phase)
        before = server.cpu_times() if server is not None else None
        try:
            result = await run_phase(target, phase, args)
        finally:
            profiler.stop()
        if server is not None and before is not None:
            # the server's own CPU per request: what the load average cannot distort
            after = server.cpu_times()
            used = (after.user - before.user) + (after.system - before.system)
            result["server_cpu_ms_per_request"] = round(1000 * used / result["requests"], 3)
        print(json.dumps(result), flush=True)
        results.append(result)
    async with httpx.AsyncClient(timeout=120) as client:
        await client.delete(target.stack_url)
    return results


def _commit() -> str:
    done = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                          text=True, check=False, cwd=Path(__file__).parent)
    return done.stdout.strip()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rate", type=float, default=500.0)
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--servers", type=int, default=50)
    parser.add_argument("--drain", type=float, default=30.0,
                        help="seconds after a phase's end before a client gives up")
    parser.add_argument("--target", choices=("kiln", "heat"), default="kiln")
    parser.add_argument("--heat-url", default="http://127.0.0.1:8130/v1/admin")
    parser.add_argument("--heat-cfn-url", default="http://127.0.0.1:8131/v1/")
    parser.add_argument("--phases", type=lambda v: [p for p in v.split(",") if p],
                        default=list(PHASES), help="comma-separated, of " + ",".join(PHASES))
    parser.add_argument("--py-spy", type=Path, metavar="DIR",
                        help="profile Kiln with py-spy during each phase, into DIR")
    parser.add_argument("--write", action="store_true")
    args = parser.parse_args()
    load_at_start = [round(x, 2) for x in os.getloadavg()]
    if args.target == "heat":
        results = asyncio.run(measure(Target(args.heat_url, args.heat_cfn_url,
                                             presigned=False), args))
    else:
        with tempfile.TemporaryDirectory() as tmp:
            # each client stands for many servers (10/s each, a server polls every 30 s):
            # the per-credential limits (bench/ratelimit_bench.py measures them) are off
            proc = start_kiln(Path(tmp) / "kiln", options={"kiln_api": {
                "agent_signal_rate": 0, "agent_metadata_rate": 0}})
            try:
                results = asyncio.run(measure(
                    Target(proc.endpoint("bench"), proc.cfn_url, presigned=True), args,
                    proc.proc.pid))
            finally:
                proc.stop()
    if args.write:
        path = Path(__file__).parent / "results" / "cfn.json"
        runs = json.loads(path.read_text()) if path.exists() else []
        runs.append({"target": args.target, "rate": args.rate, "clients": args.clients,
                     "seconds": args.seconds, "servers": args.servers,
                     "commit": _commit(),
                     "when": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
                     "machine": f"{platform.machine()} cpus={len(os.sched_getaffinity(0))}",
                     "load_average_at_start": load_at_start,
                     "load_average": [round(x, 2) for x in os.getloadavg()],
                     "results": results})
        path.write_text(json.dumps(runs, indent=1) + "\n")


if __name__ == "__main__":
    main()
