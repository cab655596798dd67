""""Why has this resource not started yet?" (issue 28): a resource's details in the
dashboard list what it is waiting for in the running action, and what each of those is
doing, followed live; seen in a real headless Chromium against a real ``kiln serve``."""

from __future__ import annotations

import uuid
from typing import Any

import httpx

from tests.functional.dashboard.test_dashboard_polish import HOOKED, PRE_CREATE, create
from tests.support.browser import save_screenshot
from tests.support.server import KilnProcess


def test_a_waiting_resource_names_what_it_waits_for(page: Any,
                                                    kiln_server: KilnProcess) -> None:
    from playwright.sync_api import expect

    proj = f"waiting{uuid.uuid4().hex[:8]}"
    with httpx.Client(base_url=kiln_server.endpoint(proj), timeout=30) as api:
        # `last` needs `first` (done) and `gate` (held at its pre-create hook)
        sid = create(api, "held", HOOKED, PRE_CREATE)
        page.goto(f"{kiln_server.url}/#/p/{proj}/stacks/held/{sid}?tab=resources")
        expect(page.locator("#stack-status")).to_have_text("CREATE_IN_PROGRESS")
        page.click("table.resources tr[data-resource=last]")
        side = page.locator("aside.side")
        waiting = side.locator(".waiting")
        expect(waiting).to_contain_text("Not started: waiting for")
        expect(waiting.locator("li")).to_have_count(1)
        gate = waiting.locator("li[data-resource=gate]")
        expect(gate).to_contain_text("HOOK_PAUSED")
        expect(gate).to_contain_text("paused until hook pre-create is cleared")
        expect(side).to_contain_text("Depends on")
        deps = side.locator("dt:has-text('Depends on') + dd")
        expect(deps).to_have_text("first, gate")
        save_screenshot(page, "waiting-for-hook")

        # following the link opens the blocker, which offers to clear its hook
        gate.locator("button").click()
        expect(side.locator("h2")).to_have_text("gate")
        expect(side.locator(".waiting")).to_have_count(0)
        side.locator("button[name='Clear hook']").click()
        expect(page.locator("#stack-status")).to_have_text("CREATE_COMPLETE")

        # once the action is over nothing waits
        page.click("table.resources tr[data-resource=last]")
        expect(side.locator("h2")).to_have_text("last")
        expect(side.locator("p .badge").first).to_have_text("CREATE_COMPLETE")
        expect(side.locator(".waiting")).to_have_count(0)
