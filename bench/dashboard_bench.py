"""The dashboard's topology at scale: a nested group of N resources opened in place.

    .venv-test/bin/python bench/dashboard_bench.py [--members 10000] [--runs 5] [--write]

Starts the installed ``kiln serve`` (max_resources_per_stack unlimited), creates a stack
whose ResourceGroup has ``--members`` members, opens its page in Debian's headless
chromium (Playwright, as the browser tests), double-clicks the group to open it in place
and then measures in the page: the layout of all nodes, a full frame at the fitted zoom
(everything in view: coloured blocks, no labels) and a frame zoomed in (labels and
edges of what is in view). Reports the median and worst of ``--runs`` each, and the
seconds from the double click to the opened graph (fetching the N resources included).
``--write`` records the result in bench/results/dashboard.json. Needs the test extra.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.support.browser import chromium_executable, launch_args
from tests.support.server import start_kiln

MEASURE = """(runs) => {
  const t = window.kilnDashboard.topology, out = {layout: [], fitted: [], zoomed: []};
  for (let i = 0; i < runs; i++) {
    let t0 = performance.now(); t.layout(); out.layout.push(performance.now() - t0);
    t.fit(); t0 = performance.now(); t.paint(); out.fitted.push(performance.now() - t0);
    t.scale = 1; t.tx = 0; t.ty = 0;
    t0 = performance.now(); t.paint(); out.zoomed.push(performance.now() - t0);
  }
  return {...out, nodes: t.placed.length};
}"""


def main() -> None:
    from playwright.sync_api import expect, sync_playwright

    parser = argparse.ArgumentParser()
    parser.add_argument("--members", type=int, default=10000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--write", action="store_true")
    args = parser.parse_args()
    load = os.getloadavg()[0]
    template = {"heat_template_version": "2018-08-31", "resources": {
        "many": {"type": "OS::Heat::ResourceGroup", "properties": {
            "count": args.members, "resource_def": {"type": "OS::Heat::None"}}},
        "after": {"type": "OS::Heat::None", "depends_on": ["many"]}}}
    with tempfile.TemporaryDirectory() as tmp:
        kiln = start_kiln(Path(tmp) / "kiln", options={"DEFAULT": {
            "max_resources_per_stack": -1, "max_template_size": 64 * 2**20}})
        try:
            r = httpx.post(kiln.endpoint("bench") + "/stacks", timeout=300,
                           json={"stack_name": "big", "template": template})
            r.raise_for_status()
            sid = r.json()["stack"]["id"]
            with sync_playwright() as pw:
                browser = pw.chromium.launch(executable_path=chromium_executable(),
                                             args=launch_args())
                page = browser.new_page(viewport={"width": 1400, "height": 900})
                page.goto(f"{kiln.url}/#/p/bench/stacks/big/{sid}")
                expect(page.locator("#stack-status")).to_have_text("CREATE_COMPLETE",
                                                                   timeout=900_000)
                expect(page.locator("#topology")).to_have_attribute("data-nodes", "2")
                point = page.evaluate(
                    f"window.kilnDashboard.topology.screenPoint('{sid}/many')")
                began = time.monotonic()
                page.mouse.dblclick(point["x"], point["y"])
                expect(page.locator("#topology")).to_have_attribute(
                    "data-nodes", str(args.members + 2), timeout=300_000)
                opened = time.monotonic() - began
                measured = page.evaluate(MEASURE, args.runs)
                browser.close()
        finally:
            kiln.stop()

    def summary(values: list[float]) -> dict[str, float]:
        return {"median_ms": round(statistics.median(values), 1),
                "max_ms": round(max(values), 1)}

    result = {
        "benchmark": "dashboard topology: a ResourceGroup opened in place",
        "python": platform.python_version(), "machine": platform.machine(),
        "cpus": os.cpu_count(), "load_average_at_start": round(load, 2),
        "members": args.members, "nodes": measured["nodes"], "runs": args.runs,
        "open_seconds": round(opened, 2), "layout": summary(measured["layout"]),
        "frame_fitted": summary(measured["fitted"]),
        "frame_zoomed_in": summary(measured["zoomed"]),
    }
    print(json.dumps(result, indent=2))
    if args.write:
        out = Path(__file__).with_name("results") / "dashboard.json"
        out.write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
