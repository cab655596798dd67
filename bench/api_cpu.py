"""In-process CPU time of one GET /stacks (list of N) and one GET stack show.

    .venv/bin/python bench/api_cpu.py [--stacks 500] [--tree PATH]

Latency on a shared, loaded machine mostly measures the other load; CPU seconds spent
per call in this process (every thread: event loop, database readers) do not. Creates
``--stacks`` one-resource stacks on a fresh SQLite file through EngineService, then times
the engine calls alone and the same requests through the ASGI app (httpx's in-process
transport, so the client's own parsing is included in the HTTP figures). ``--tree``
measures another checkout of Kiln (e.g. ``git archive <commit>`` unpacked) for a
before/after comparison under the same load.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

TEMPLATE = {"heat_template_version": "2018-08-31",
            "resources": {"x": {"type": "OS::Heat::None"}},
            "outputs": {"ref": {"value": {"get_resource": "x"}}}}


async def timed(label: str, call: Callable[[], Awaitable[Any]], count: int) -> float:
    for _ in range(3):
        await call()
    began = time.process_time()
    for _ in range(count):
        await call()
    ms = (time.process_time() - began) / count * 1000
    print(f"{label:22s} {ms:7.2f} ms CPU per call")
    return ms


async def run(stacks: int) -> None:
    import httpx

    from kiln.api.app import create_app
    from kiln.conf import CONF
    from kiln.engine.service import EngineService, RequestContext

    CONF([], project="kiln", default_config_files=[])
    with tempfile.TemporaryDirectory() as tmp:
        svc = EngineService(db_url=f"sqlite:///{tmp}/kiln.db")
        await svc.start()
        ctx = RequestContext(project_id="bench", is_admin=False, roles=("member",),
                             username="bench", user_id="bench-user")
        try:
            ids = [await svc.create_stack(ctx, f"bench_{i:04d}", TEMPLATE, {}, {}, {})
                   for i in range(stacks)]
            for ident in ids:
                await svc.wait_for_stack(ident["stack_id"])
            one = ids[len(ids) // 2]
            show_url = f"/v1/bench/stacks/{one['stack_name']}/{one['stack_id']}"
            # Host "localhost": without authentication a server answers only its own
            # names (kiln.api.host_guard)
            transport = httpx.ASGITransport(app=create_app(svc, CONF))
            async with httpx.AsyncClient(transport=transport, base_url="http://localhost") as c:
                listed = (await c.get("/v1/bench/stacks")).json()["stacks"]
                assert len(listed) == stacks, len(listed)
                await timed("engine list_stacks", lambda: svc.list_stacks(ctx), 30)
                await timed("engine show_stack", lambda: svc.show_stack(ctx, one), 300)
                await timed("HTTP GET /stacks", lambda: c.get("/v1/bench/stacks"), 30)
                await timed("HTTP GET stack show", lambda: c.get(show_url), 300)
        finally:
            await svc.stop()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--stacks", type=int, default=500)
    parser.add_argument("--tree", type=Path, default=Path(__file__).resolve().parents[1])
    args = parser.parse_args()
    sys.path.insert(0, str(args.tree))
    asyncio.run(run(args.stacks))


if __name__ == "__main__":
    main()
