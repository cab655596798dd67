"""What servers do to the API all day: metadata polls and signals, at a fixed rate.

    .venv/bin/python bench/cfn_bench.py [--rate 500] [--clients 50] [--seconds 20]
        [--servers 50] [--target kiln|heat] [--heat-url URL --heat-cfn-url URL] [--write]

10,000 servers polling every 30 s is 333 requests/s; this sends ``--rate`` requests/s
(open loop: each of ``--clients`` keep-alive clients sends at its own fixed times, and a
request's latency counts from when it was due, so a stalled server cannot hide its
backlog) for ``--seconds`` per phase:

- ``cfn-metadata``: ``GET /v1/?Action=DescribeStackResource`` signed with SigV2 as
  os-collect-config's cfn collector signs it (a fresh Timestamp each request; Kiln
  checks every signature against the keypair it issued);
- ``native-metadata``: ``GET /v1/{project}/stacks/{name}/{id}/resources/{r}/metadata``
  (the heat collector);
- ``signal``: ``PUT`` to each server's pre-signed wait-condition URL (cfn-signal), while
  the conditions wait (each client re-sends its own UniqueId, so no condition completes).

The stack has ``--servers`` resources with metadata (what the agents read) and as many
AWS wait-condition handles and conditions. ``--target heat`` runs the same load against
Heat 27 (``../shared/peer-heat``: its native API and heat-api-cfn, which in that set-up
checks no signature). Reports p50/p90/p99/max in ms, the achieved rate and errors;
``--write`` adds the run to bench/results/cfn.json.
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

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.loadgen import Connection
from kiln import ec2sign
from tests.support.server import kiln_command, start_kiln


def template(servers: int) -> dict[str, Any]:
    resources: dict[str, Any] = {}
    for i in range(servers):
        resources[f"server{i}"] = {
            "Type": "OS::Heat::None",
            "Metadata": {"os-collect-config": {"cfn": {"stack_name": "bench"}},
                         "deployments": [{"name": f"d{i}", "group": "script",
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

    def __init__(self, native: str, cfn: str, access: str, secret: str, *,
                 presigned: bool) -> None:
        self.presigned = presigned
        self.native = native.rstrip("/")     # .../v1/<project>
        self.cfn = cfn.rstrip("/") + "/"     # .../v1/
        self.access, self.secret = access, secret
        self.stack_url = ""
        self.signal_urls: list[str] = []

    def metadata_query(self, resource: str) -> str:
        """A DescribeStackResource GET signed as the cfn collector signs it."""
        params = {"Action": "DescribeStackResource", "StackName": "bench",
                  "LogicalResourceId": resource, "AWSAccessKeyId": self.access,
                  "SignatureVersion": "2", "SignatureMethod": "HmacSHA256",
                  "Timestamp": dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")}
        parts = urlsplit(self.cfn)
        params["Signature"] = ec2sign.signature(
            self.secret, "HmacSHA256", "GET", parts.netloc.lower(), parts.path,
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
                    return
            elif all(u is not None for u in ready):
                # Heat without Keystone issues no keypair and checks no signature: its
                # handles take a PUT to the bare ARN URL
                tenant = target.native.rsplit("/", 1)[1]
                target.signal_urls = [
                    f"{target.cfn}waitcondition/" + quote(
                        f"arn:openstack:heat::{tenant}:stacks/bench/{stack['id']}/"
                        f"resources/handle{i}", "")
                    for i in range(servers)]
                return
            if time.monotonic() > deadline:
                raise SystemExit(f"stack not ready: {stack['stack_status']}")
            await asyncio.sleep(0.5)  # waiting for the stack; not measured


async def client_loop(target: Target, phase: str, index: int, clients: int, rate: float,
                      until: float, servers: int, latencies: list[float],
                      errors: list[str]) -> None:
    interval = clients / rate
    due = time.monotonic() + (index / clients) * interval
    conn: Connection | None = None
    resource = f"server{index % servers}"
    native = f"{target.stack_url}/resources/{resource}/metadata"
    body = json.dumps({"Status": "SUCCESS", "Reason": "bench", "UniqueId": f"c{index}",
                       "Data": "x"}).encode()
    while due < until:
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
                status, answer = await conn.get(target.metadata_query(resource))
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


async def run_phase(target: Target, phase: str, args: argparse.Namespace) -> dict[str, Any]:
    latencies: list[float] = []
    errors: list[str] = []
    began = time.monotonic()
    until = began + args.seconds
    await asyncio.gather(*(client_loop(target, phase, i, args.clients, args.rate, until,
                                       args.servers, latencies, errors)
                           for i in range(args.clients)))
    elapsed = time.monotonic() - began
    ordered = sorted(latencies)

    def pct(p: float) -> float:
        return round(ordered[min(len(ordered) - 1, int(len(ordered) * p))], 2)

    return {"phase": phase, "requests": len(ordered), "rate": round(len(ordered) / elapsed),
            "p50_ms": pct(0.50), "p90_ms": pct(0.90), "p99_ms": pct(0.99),
            "max_ms": round(ordered[-1], 2), "mean_ms": round(statistics.fmean(ordered), 2),
            "errors": len(errors), "first_errors": sorted(set(errors))[:3]}


def kiln_keypair(config_file: Path, workdir: Path) -> tuple[str, str]:
    made = subprocess.run([*kiln_command(), "ec2-credentials", "create", "--config-file",
                           str(config_file), "--project", "bench"], capture_output=True,
                          text=True, check=True, cwd=workdir)
    issued = json.loads(made.stdout)
    return issued["access"], issued["secret"]


async def measure(target: Target, args: argparse.Namespace) -> list[dict[str, Any]]:
    await setup(target, args.servers)
    results = []
    for phase in ("cfn-metadata", "native-metadata", "signal"):
        result = await run_phase(target, phase, args)
        print(json.dumps(result), flush=True)
        results.append(result)
    async with httpx.AsyncClient(timeout=120) as client:
        await client.delete(target.stack_url)
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rate", type=float, default=500.0)
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--servers", type=int, default=50)
    parser.add_argument("--target", choices=("kiln", "heat"), default="kiln")
    parser.add_argument("--heat-url", default="http://127.0.0.1:8130/v1/admin")
    parser.add_argument("--heat-cfn-url", default="http://127.0.0.1:8131/v1/")
    parser.add_argument("--write", action="store_true")
    args = parser.parse_args()
    if args.target == "heat":
        results = asyncio.run(measure(Target(args.heat_url, args.heat_cfn_url, "AK", "SK",
                                             presigned=False),
                                      args))
    else:
        with tempfile.TemporaryDirectory() as tmp:
            proc = start_kiln(Path(tmp) / "kiln")
            try:
                access, secret = kiln_keypair(proc.config_file, proc.workdir)
                results = asyncio.run(measure(
                    Target(proc.endpoint("bench"), proc.cfn_url, access, secret,
                           presigned=True), args))
            finally:
                proc.stop()
    if args.write:
        path = Path(__file__).parent / "results" / "cfn.json"
        runs = json.loads(path.read_text()) if path.exists() else []
        runs.append({"target": args.target, "rate": args.rate, "clients": args.clients,
                     "seconds": args.seconds, "servers": args.servers,
                     "when": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
                     "machine": f"{platform.machine()} cpus={len(os.sched_getaffinity(0))}",
                     "load_average": [round(x, 2) for x in os.getloadavg()],
                     "results": results})
        path.write_text(json.dumps(runs, indent=1) + "\n")


if __name__ == "__main__":
    main()
