"""Resource-plugin micro benchmarks.

    .venv/bin/python bench/resources_bench.py

1. N OS::Heat::TestResource with wait_secs=1 driven like the engine's scheduler does
   (handle, check, sleep for the plugin's poll_delay hint): all finish in ~1 s in total,
   with at most two checks each.
2. Property validation throughput (make_properties), which the engine runs once per
   resource per action.
"""

from __future__ import annotations

import asyncio
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from kiln.resources.registry import build_registry
from tests.unit.resources.fakes import make
from tests.unit.resources.test_test_resource import WallClock, _run_real_time


async def waiting(n: int, wait: float) -> None:
    rt = WallClock()
    resources = [make(rt, f"t{i}", "OS::Heat::TestResource", {"wait_secs": wait})
                 for i in range(n)]
    started = time.monotonic()
    checks = await asyncio.gather(*(_run_real_time(r) for r in resources))
    print(f"{n} TestResources wait_secs={wait}: {time.monotonic() - started:.3f} s total, "
          f"max checks per resource {max(checks)}")


def validation(n: int = 20000) -> None:
    reg = build_registry(use_entry_points=False)
    cases = {
        "OS::Heat::TestResource": {"value": "v", "wait_secs": 1,
                                   "action_wait_secs": {"create": 2}},
        "OS::Heat::RandomString": {"length": 16,
                                   "character_classes": [{"class": "digits", "min": 2}]},
    }
    for type_name, props in cases.items():
        cls = reg.get(type_name)
        started = time.perf_counter()
        for _ in range(n):
            cls.make_properties("r", props)
        took = time.perf_counter() - started
        print(f"{type_name} make_properties: {n / took:,.0f}/s ({took / n * 1e6:.1f} us each)")


if __name__ == "__main__":
    asyncio.run(waiting(100, 1.0))
    asyncio.run(waiting(1000, 1.0))
    validation()
