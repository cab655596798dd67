"""POST /validate in the engine: Heat's shallow check vs Kiln's deep one.

    .venv/bin/python bench/validate_bench.py [--resources 1000] [--runs 5]

The template has N resources (RandomString, Value with get_attr/get_param/list_join,
a provider template every 50th), 20 parameters and 50 outputs. Prints the best and
median wall time and CPU time of EngineService.validate_template, shallow, deep, and
shallow with show_nested, on a fresh SQLite database (validation itself writes nothing).
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from kiln.engine.service import EngineService, RequestContext

PROVIDER = """heat_template_version: 2018-08-31
parameters:
  name: {type: string, default: x}
resources:
  r: {type: OS::Heat::RandomString, properties: {length: 8}}
outputs:
  out: {value: {get_attr: [r, value]}}
"""


def template(n: int) -> dict[str, Any]:
    params = {f"p{i}": {"type": "string", "default": f"v{i}"} for i in range(20)}
    resources: dict[str, Any] = {}
    for i in range(n):
        if i % 50 == 49:
            resources[f"r{i}"] = {"type": "prov.yaml",
                                  "properties": {"name": {"get_param": f"p{i % 20}"}}}
        elif i % 2 == 0:
            resources[f"r{i}"] = {"type": "OS::Heat::RandomString",
                                  "properties": {"length": 8 + i % 5}}
        else:
            resources[f"r{i}"] = {"type": "OS::Heat::Value", "properties": {"value": {
                "list_join": ["-", [{"get_attr": [f"r{i - 1}", "value"]},
                                    {"get_param": f"p{i % 20}"}]]}}}
    outputs = {f"o{i}": {"value": {"get_attr": [f"r{(i * 2) % n}", "value"]}}
               for i in range(50)}
    return {"heat_template_version": "2018-08-31", "parameters": params,
            "resources": resources, "outputs": outputs}


async def run(n: int, runs: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        svc = EngineService(db_url=f"sqlite:///{tmp}/bench.sqlite")
        await svc.start()
        ctx = RequestContext(project_id="bench")
        body = template(n)
        env: dict[str, Any] = {"parameters": {}, "parameter_defaults": {},
                               "resource_registry": {}, "event_sinks": []}
        files = {"prov.yaml": PROVIDER}
        modes = {"shallow": (False, False), "deep": (True, False),
                 "show_nested": (False, True)}
        for mode, (deep, show_nested) in modes.items():
            walls, cpus = [], []
            for _ in range(runs):
                wall, cpu = time.perf_counter(), time.process_time()
                await svc.validate_template(ctx, body, env, files, show_nested=show_nested,
                                            deep=deep)
                walls.append(time.perf_counter() - wall)
                cpus.append(time.process_time() - cpu)
            print(f"{n} resources {mode:12s} wall best {min(walls) * 1000:7.1f} ms "
                  f"median {statistics.median(walls) * 1000:7.1f} ms | cpu best "
                  f"{min(cpus) * 1000:7.1f} ms")
        await svc.stop()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--resources", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    asyncio.run(run(args.resources, args.runs))


if __name__ == "__main__":
    main()
