"""What Keystone authentication costs a request: show and list latency in keystone mode
against noauth, and how often Keystone is asked (issue 12).

    .venv-test/bin/python bench/keystone_bench.py [--stacks 100] [--clients 20]
                                                  [--requests 2000] [--rounds 3] [--write]

Starts the test suite's real Keystone (tests/support/keystone.py) and two `kiln serve`
processes on fresh SQLite directories: one with no authentication, one with
``[paste_deploy] flavor = keystone``. Each gets ``--stacks`` one-resource stacks. Then
``--rounds`` rounds, each running, on one server after the other, ``--requests`` GETs of
random stacks (show) and a quarter as many GETs of the stack list, from ``--clients``
concurrent keep-alive clients (bench/loadgen.py). In keystone mode every client sends a
token of its own (``--clients`` users), so Keystone is asked at least once per token;
the count of ``GET /v3/auth/tokens`` in Keystone's access log over the whole run is
reported beside the number of tokens. Alternating the servers within each round keeps
the machine's other load from favouring one mode. Target: p99 in keystone mode within
2 ms of noauth; at most one validation per token per token_cache_time (300 s, longer
than the run). ``--write`` records bench/results/keystone_auth.json.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import random
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.loadgen import Connection
from tests.support.keystone import start_keystone
from tests.support.server import start_kiln

TEMPLATE = {"heat_template_version": "2018-08-31",
            "resources": {"x": {"type": "OS::Heat::None"}},
            "outputs": {"ref": {"value": {"get_resource": "x"}}}}


async def create_stacks(endpoint: str, count: int, headers: dict[str, str]) -> list[str]:
    async with httpx.AsyncClient(timeout=60, headers=headers) as client:
        sem = asyncio.Semaphore(10)
        urls: list[str] = []

        async def one(i: int) -> None:
            async with sem:
                reply = await client.post(endpoint + "/stacks", json={
                    "stack_name": f"bench_{i:04d}", "template": TEMPLATE})
                reply.raise_for_status()
                urls.append(reply.json()["stack"]["links"][0]["href"])

        await asyncio.gather(*(one(i) for i in range(count)))
        deadline = time.monotonic() + 300
        while True:
            states = [s["stack_status"] for s in
                      (await client.get(endpoint + "/stacks")).json()["stacks"]]
            if len(states) == count and all(s == "CREATE_COMPLETE" for s in states):
                return urls
            if time.monotonic() > deadline:
                raise SystemExit(f"stacks did not complete: {sorted(set(states))}")
            await asyncio.sleep(0.2)  # waiting on the engine; not part of any measurement


async def phase(pick: Callable[[], str], requests: int,
                tokens: list[str | None]) -> list[float]:
    latencies: list[float] = []

    async def client(token: str | None) -> None:
        conn = await Connection.open(pick(), {"X-Auth-Token": token} if token else None)
        try:
            await conn.get(pick())  # warm the connection (and, once, the token)
            for _ in range(max(1, requests // len(tokens))):
                url = pick()
                began = time.perf_counter()
                status, body = await conn.get(url)
                latencies.append((time.perf_counter() - began) * 1000)
                if status != 200:
                    raise SystemExit(f"GET {url} -> {status}: {body[:200]!r}")
        finally:
            await conn.close()

    await asyncio.gather(*(client(t) for t in tokens))
    return latencies


def summary(latencies: list[float]) -> dict[str, float]:
    ordered = sorted(latencies)

    def pct(p: float) -> float:
        return round(ordered[min(len(ordered) - 1, int(len(ordered) * p))], 2)

    return {"requests": len(ordered), "p50_ms": pct(0.5), "p90_ms": pct(0.9),
            "p99_ms": pct(0.99), "max_ms": round(ordered[-1], 2)}


async def measure(args: argparse.Namespace, servers: dict[str, tuple[str, list[str | None],
                                                                     list[str]]]
                  ) -> dict[str, dict[str, list[float]]]:
    samples: dict[str, dict[str, list[float]]] = {
        mode: {"show": [], "list": []} for mode in servers}
    for _ in range(args.rounds):
        for op in ("show", "list"):
            for mode, (endpoint, tokens, urls) in servers.items():
                if op == "show":
                    got = await phase(lambda urls=urls: random.choice(urls), args.requests,
                                      tokens)
                else:
                    got = await phase(lambda endpoint=endpoint: endpoint + "/stacks",
                                      max(len(tokens), args.requests // 4), tokens)
                samples[mode][op] += got
    return samples


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--stacks", type=int, default=100)
    parser.add_argument("--clients", type=int, default=20)
    parser.add_argument("--requests", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--write", action="store_true")
    args = parser.parse_args()
    load = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        keystone = start_keystone(root / "keystone")
        started = []
        try:
            noauth = start_kiln(root / "noauth")
            started.append(noauth)
            secured = start_kiln(root / "keystone-mode", options=keystone.kiln_options())
            started.append(secured)
            owner = keystone.account(("member",), prefix="bench")
            users = [keystone.account(("reader",), project=owner.project, prefix="client")
                     for _ in range(args.clients)]
            tokens: list[str | None] = [u.token().id for u in users]
            before = keystone.validations()
            noauth_end = noauth.endpoint("bench")
            secured_end = secured.endpoint(owner.project_id)
            noauth_urls = asyncio.run(create_stacks(noauth_end, args.stacks, {}))
            secured_urls = asyncio.run(create_stacks(
                secured_end, args.stacks, {"X-Auth-Token": owner.token().id}))
            samples = asyncio.run(measure(args, {
                "noauth": (noauth_end, [None] * args.clients, noauth_urls),
                "keystone": (secured_end, tokens, secured_urls)}))
            validations = keystone.validations() - before
        finally:
            for proc in started:
                proc.stop()
            keystone.stop()
    result: dict[str, Any] = {
        "benchmark": f"show and list p99 with Keystone tokens vs noauth: {args.stacks} "
                     f"stacks, {args.clients} concurrent keep-alive clients, "
                     f"{args.rounds} alternating rounds",
        "command": "python bench/keystone_bench.py " + " ".join(sys.argv[1:]),
        "python": platform.python_version(), "cpus": os.cpu_count(),
        "load_average_at_start": round(load, 2),
        "targets": {"p99_difference_ms": 2, "validations_per_token": 1},
    }
    for mode, ops in samples.items():
        result[mode] = {op: summary(values) for op, values in ops.items()}
    result["p99_difference_ms"] = {
        op: round(result["keystone"][op]["p99_ms"] - result["noauth"][op]["p99_ms"], 2)
        for op in ("show", "list")}
    # the stack creator's token and the client tokens: one validation each at most
    result["keystone_validations"] = validations
    result["tokens_used"] = args.clients + 1
    print(json.dumps(result, indent=2))
    if args.write:
        out = Path(__file__).parent / "results" / "keystone_auth.json"
        out.write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
