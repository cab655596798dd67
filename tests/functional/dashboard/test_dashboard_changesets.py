"""Change sets and history in the dashboard (issue 28), in a real headless Chromium
against a real ``kiln serve``: the Update page's preview saved as a change set, opened by
a second person at its link, shown change by change (hidden values masked as the API
masks them) and executed; a stack's "Change sets" and "History" tabs, and going back to a
version through a change set."""

from __future__ import annotations

import re
import uuid
from typing import Any

import httpx

from tests.functional.dashboard.test_dashboard_polish import create
from tests.support.browser import save_screenshot
from tests.support.server import KilnProcess

TEMPLATE = {
    "heat_template_version": "2018-08-31",
    "parameters": {"length": {"type": "number", "default": 8},
                   "password": {"type": "string", "hidden": True, "default": "first-secret"}},
    "resources": {
        "token": {"type": "OS::Heat::RandomString",
                  "properties": {"length": {"get_param": "length"}}},
        "login": {"type": "OS::Heat::Value",
                  "properties": {"value": {"get_param": "password"}}},
    },
}


def test_preview_saved_as_a_change_set_reviewed_and_executed_elsewhere(
        browser: Any, page: Any, kiln_server: KilnProcess) -> None:
    from playwright.sync_api import expect

    proj = f"cs{uuid.uuid4().hex[:8]}"
    with httpx.Client(base_url=kiln_server.endpoint(proj), timeout=30) as api:
        sid = create(api, "shop", TEMPLATE)
        page.goto(f"{kiln_server.url}/#/p/{proj}/stacks/shop/{sid}")
        expect(page.locator("#stack-status")).to_have_text("CREATE_COMPLETE")
        page.click("a.button:has-text('Update')")
        expect(page.locator("#param-length")).to_have_value("8")
        page.fill("#param-length", "12")
        page.fill("#param-password", "second-secret")
        page.click("button[name=preview]")
        expect(page.locator(".change-kind[data-kind=replaced]")).to_contain_text("token")
        page.fill("input[name=changeset_name]", "longer-token")
        page.click("button[name=save_changeset]")
        expect(page).to_have_url(re.compile(rf"#/p/{proj}/stacks/shop/{sid}/changesets/[0-9a-f-]+$"))
        link = page.locator("#changeset-link").input_value()
        assert link == page.url
        # nothing ran: the stack is as it was
        assert api.get(f"/stacks/shop/{sid}").json()["stack"]["parameters"]["length"] == "8"

        # a second person opens the link in a browser of their own
        other = browser.new_context(viewport={"width": 1400, "height": 900})
        try:
            reviewer = other.new_page()
            reviewer.set_default_timeout(60_000)
            reviewer.goto(link)
            expect(reviewer.locator("h1")).to_contain_text("longer-token")
            expect(reviewer.locator("#execution-status")).to_have_text("AVAILABLE")
            token = reviewer.locator("#changes tr[data-resource=token]")
            expect(token).to_have_attribute("data-action", "Modify")
            expect(token.locator(".replacement")).to_have_text("True")
            expect(token.locator("li[data-property=length]")).to_contain_text("8 → 12")
            expect(token).to_contain_text("needs a new resource")
            login = reviewer.locator("#changes tr[data-resource=login]")
            expect(login.locator("li[data-property=value]")).to_contain_text("****** → ******")
            expect(reviewer.locator("#changeset-parameters tr[data-parameter=password]")
                   ).to_contain_text("******")
            assert "second-secret" not in reviewer.content()
            assert "first-secret" not in reviewer.content()
            save_screenshot(reviewer, "changeset-review")
            reviewer.once("dialog", lambda d: d.accept())
            reviewer.click("button[name=execute]")
            expect(reviewer).to_have_url(re.compile(rf"/stacks/shop/{sid}$"))
            expect(reviewer.locator("#stack-status")).to_have_text("UPDATE_COMPLETE")
        finally:
            other.close()
        assert api.get(f"/stacks/shop/{sid}").json()["stack"]["parameters"]["length"] == "12"

        # the stack's tabs: the executed change set, and two versions with a way back
        page.goto(f"{kiln_server.url}/#/p/{proj}/stacks/shop/{sid}?tab=changesets")
        row = page.locator("#changeset-list tr[data-changeset=longer-token]")
        expect(row).to_contain_text("EXECUTE_COMPLETE")
        page.click(".tabs >> text=History")
        expect(page.locator("#history tbody tr")).to_have_count(2)
        expect(page.locator("#history tr[data-version='1']")).to_contain_text("CREATE")
        page.once("dialog", lambda d: d.accept("back-to-eight"))
        page.click("#history tr[data-version='1'] button[name=restore]")
        expect(page.locator("h1")).to_contain_text("back-to-eight")
        expect(page.locator("#changes tr[data-resource=token] li[data-property=length]")
               ).to_contain_text("12 → 8")

        # deleting it from its page takes it off the stack's list
        page.once("dialog", lambda d: d.accept())
        page.click("button[name=delete-changeset]")
        expect(page.locator("#changeset-list")).to_be_visible()
        expect(page.locator("#changeset-list tr[data-changeset=back-to-eight]")).to_have_count(0)
        expect(page.locator("#changeset-list tr[data-changeset=longer-token]")).to_have_count(1)
