"""Engine throughput through EngineService on SQLite (no HTTP).

    .venv/bin/python bench/engine_bench.py [--flat 1000] [--chain 100] [--runs 3] [--write]

Scenarios: a flat stack of N OS::Heat::RandomString created then deleted; a chain of M
OS::Heat::Value each referring to the previous one, created then deleted. Times are
from the call to create_stack/delete_stack to the end of the action (best of --runs);
``*_cpu_s`` is the process CPU time over the same span (all threads, so the database
writer is included), which a loaded shared machine distorts far less than wall clock.
``--write`` records the result in bench/results/engine.json.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from kiln.conf import CONF
from kiln.engine.service import EngineService, RequestContext


def flat(n: int) -> dict[str, Any]:
    return {"heat_template_version": "2018-08-31",
            "resources": {f"r{i}": {"type": "OS::Heat::RandomString"} for i in range(n)}}


def chain(n: int) -> dict[str, Any]:
    res: dict[str, Any] = {"v0": {"type": "OS::Heat::Value", "properties": {"value": "x"}}}
    for i in range(1, n):
        res[f"v{i}"] = {"type": "OS::Heat::Value",
                        "properties": {"value": {"get_attr": [f"v{i - 1}", "value"]}}}
    return {"heat_template_version": "2018-08-31", "resources": res}


async def one(svc: EngineService, ctx: RequestContext, name: str,
              template: dict[str, Any]) -> tuple[float, float, float, float]:
    c0 = time.process_time()
    t0 = time.perf_counter()
    ident = await svc.create_stack(ctx, name, template, {}, {}, {})
    await svc.wait_for_stack(ident["stack_id"])
    t1 = time.perf_counter()
    c1 = time.process_time()
    shown = await svc.show_stack(ctx, ident)
    assert shown["stack_status"] == "CREATE_COMPLETE", shown["stack_status_reason"]
    t2 = time.perf_counter()
    c2 = time.process_time()
    await svc.delete_stack(ctx, ident)
    await svc.wait_for_stack(ident["stack_id"])
    t3 = time.perf_counter()
    c3 = time.process_time()
    shown = await svc.show_stack(ctx, ident)
    assert shown["stack_status"] == "DELETE_COMPLETE", shown["stack_status_reason"]
    return t1 - t0, t3 - t2, c1 - c0, c3 - c2


async def main(args: argparse.Namespace) -> dict[str, Any]:
    CONF([], project="kiln")
    CONF.set_override("max_resources_per_stack", -1)
    results: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as tmp:
        svc = EngineService(db_url=f"sqlite:///{tmp}/bench.sqlite")
        await svc.start()
        ctx = RequestContext(project_id="bench")
        for label, template in ((f"flat_{args.flat}_random_string", flat(args.flat)),
                                (f"chain_{args.chain}_value", chain(args.chain))):
            creates, deletes, ccpu, dcpu = [], [], [], []
            for run in range(args.runs):
                c, d, cc, dc = await one(svc, ctx, f"{label}-{run}", template)
                creates.append(c)
                deletes.append(d)
                ccpu.append(cc)
                dcpu.append(dc)
            results[label] = {"create_s": round(min(creates), 4),
                              "delete_s": round(min(deletes), 4),
                              "create_cpu_s": round(min(ccpu), 4),
                              "delete_cpu_s": round(min(dcpu), 4),
                              "create_all_s": [round(x, 4) for x in creates],
                              "delete_all_s": [round(x, 4) for x in deletes]}
        await svc.stop()
    return results


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--flat", type=int, default=1000)
    parser.add_argument("--chain", type=int, default=100)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--write", action="store_true")
    ns = parser.parse_args()
    out = asyncio.run(main(ns))
    record = {"command": "python bench/engine_bench.py " + " ".join(sys.argv[1:]),
              "python": platform.python_version(), "machine": platform.machine(),
              "database": "sqlite (file, WAL)", "through": "EngineService (no HTTP)",
              "cpus": os.cpu_count(), "load_average_after": list(os.getloadavg()),
              "results": out}
    print(json.dumps(record, indent=2))
    if ns.write:
        path = Path(__file__).parent / "results" / "engine.json"
        path.write_text(json.dumps(record, indent=2) + "\n")
