"""``kiln stack drift NAME``: what changed behind Kiln's back. It starts a drift
detection of the stack (nested stacks included), waits for it, then lists every
difference: the resource, its status (MODIFIED, DELETED), the property's path, what the
template says and what the cloud has. ``--no-detect`` shows the newest result without
detecting again; ``--all`` lists resources in sync and those not checked too;
``--exit-code`` exits 2 when the stack drifted (for scripts and CI)."""

from __future__ import annotations

import sys
import time
from typing import Any

import click

from kiln.client.api import JSON, HeatAPI, stack_ref
from kiln.client.commands import EXIT_FAILED, _api, _call, _lookup, fail, stack
from kiln.client.output import _dump, format_option, show_list

#: the table's columns
COLUMNS = ("resource", "stack", "status", "path", "difference", "expected", "actual")
#: exit status with --exit-code when the stack drifted (Terraform's -detailed-exitcode)
EXIT_DRIFTED = 2


def _wait(api: HeatAPI, ref: str, detection_id: str, timeout: float) -> JSON:
    """Poll the detection until it ends (bounded by *timeout*)."""
    deadline = time.monotonic() + timeout
    delay = 0.1
    while True:
        found: JSON = _call(lambda: api.request(
            "GET", f"/stacks/{ref}/drift", params={"detection_id": detection_id}))["drift"]
        if found.get("detection_status") != "DETECTION_IN_PROGRESS":
            return found
        if time.monotonic() > deadline:
            fail(f"the drift detection {detection_id} did not end within {timeout:g} s")
        time.sleep(delay)  # the API's own way to follow a detection: poll its status
        delay = min(delay * 2, 2.0)


def rows_of(drift: JSON, show_all: bool) -> list[dict[str, Any]]:
    """One row per difference of each drifted resource (and, with *show_all*, one per
    resource in sync or not checked)."""
    rows: list[dict[str, Any]] = []
    for entry in drift.get("resources") or []:
        status = entry.get("status")
        base = {"resource": entry.get("resource_name"), "stack": entry.get("stack_name"),
                "status": status}
        diffs = entry.get("differences") or []
        if diffs:
            rows += [{**base, "path": d.get("path"), "difference": d.get("type"),
                      "expected": d.get("expected"), "actual": d.get("actual")}
                     for d in diffs]
        elif status == "DELETED" or show_all:
            rows.append({**base, "path": None, "difference": None,
                         "expected": None, "actual": entry.get("reason") or None})
    return rows


@stack.command("drift")
@click.argument("name")
@click.option("--no-detect", is_flag=True,
              help="Show the newest result without detecting again.")
@click.option("--all", "show_all", is_flag=True,
              help="List resources in sync and those not checked too.")
@click.option("--exit-code", is_flag=True,
              help=f"Exit {EXIT_DRIFTED} when the stack drifted.")
@click.option("--timeout", type=click.FloatRange(min=1), default=600.0, show_default=True,
              metavar="SECONDS", help="How long to wait for the detection.")
@format_option
@click.pass_context
def drift(ctx: click.Context, name: str, no_detect: bool, show_all: bool, exit_code: bool,
          timeout: float, fmt: str) -> None:
    """Detect and show how stack NAME differs from its template."""
    api = _api(ctx)
    ref = stack_ref(_lookup(api, name))
    if no_detect:
        shown: JSON = _call(lambda: api.request("GET", f"/stacks/{ref}/drift"))["drift"]
    else:
        started = _call(lambda: api.request("POST", f"/stacks/{ref}/drift"))["drift"]
        shown = _wait(api, ref, str(started["detection_id"]), timeout)
    status = shown.get("detection_status")
    if fmt in ("json", "yaml"):
        _dump(shown, fmt)
    else:
        drift_status = shown.get("stack_drift_status")
        count = shown.get("drifted_resource_count") or 0
        when = shown.get("timestamp") or "never"
        click.echo(f"Stack {name}: {drift_status} ({count} resource(s) drifted), "
                   f"checked {when}", err=fmt == "value")
        show_list(rows_of(shown, show_all), COLUMNS, fmt)
    if status == "DETECTION_FAILED":
        click.echo(f"ERROR: the drift detection failed: "
                   f"{shown.get('detection_status_reason')}", err=True)
        sys.exit(EXIT_FAILED)
    if exit_code and shown.get("stack_drift_status") == "DRIFTED":
        sys.exit(EXIT_DRIFTED)
