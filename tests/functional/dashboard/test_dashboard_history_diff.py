"""The History tab's "Compare" (issue 28: versions diffable between any two), in a real
headless Chromium against a real ``kiln serve``: two chosen versions shown as the API's
diff of template, environment and parameters, with hidden values masked."""

from __future__ import annotations

import copy
import re
import uuid
from typing import Any

import httpx

from tests.support.browser import save_screenshot
from tests.support.server import KilnProcess

TEMPLATE: dict[str, Any] = {
    "heat_template_version": "2018-08-31",
    "parameters": {"length": {"type": "number", "default": 8},
                   "pw": {"type": "string", "hidden": True}},
    "resources": {
        "token": {"type": "OS::Heat::RandomString",
                  "properties": {"length": {"get_param": "length"}}},
        "login": {"type": "OS::Heat::Value", "properties": {"value": {"get_param": "pw"}}},
    },
}


def test_two_versions_compared_with_hidden_values_masked(
        page: Any, kiln_server: KilnProcess) -> None:
    from playwright.sync_api import expect

    proj = f"hd{uuid.uuid4().hex[:8]}"
    with httpx.Client(base_url=kiln_server.endpoint(proj), timeout=30) as api:
        r = api.post("/stacks", json={"stack_name": "hist", "template": TEMPLATE,
                                      "parameters": {"length": 9, "pw": "first-pw-value"}})
        assert r.status_code == 201, r.text
        sid = r.json()["stack"]["id"]
        stack_page = f"{kiln_server.url}/#/p/{proj}/stacks/hist/{sid}"
        page.goto(stack_page)
        expect(page.locator("#stack-status")).to_have_text("CREATE_COMPLETE")
        # version 2: new values for both parameters
        r = api.put(f"/stacks/hist/{sid}", json={
            "template": TEMPLATE, "parameters": {"length": 12, "pw": "second-pw-value"}})
        assert r.status_code == 202, r.text
        page.goto(stack_page + "?tab=events")
        expect(page.locator("#stack-status")).to_have_text("UPDATE_COMPLETE")
        # version 3: a resource more, the parameters as they were
        grown = copy.deepcopy(TEMPLATE)
        grown["resources"]["extra"] = {"type": "OS::Heat::None"}
        r = api.patch(f"/stacks/hist/{sid}", json={"template": grown})
        assert r.status_code == 202, r.text
        page.goto(stack_page)
        expect(page.locator("#stack-status")).to_have_text("UPDATE_COMPLETE")
        assert len(api.get(f"/stacks/hist/{sid}/versions").json()["versions"]) == 3

        page.goto(stack_page + "?tab=history")
        expect(page.locator("#history tbody tr")).to_have_count(3)
        # by default the newest against the one before: only the template changed
        expect(page.locator("select[name=diff_from]")).to_have_value("2")
        expect(page.locator("select[name=diff_to]")).to_have_value("3")
        page.click("button[name=compare]")
        diff = page.locator("#version-diff")
        expect(diff).to_have_attribute("data-from", "2")
        expect(diff.locator(".diff-add", has_text="extra:")).to_have_count(1)
        expect(diff.locator(".diff-add", has_text="OS::Heat::None")).to_have_count(1)
        expect(diff.locator(".diff-del")).to_have_count(0)

        # any two: the first against the newest, the parameters too, the hidden one masked
        page.select_option("select[name=diff_from]", "1")
        page.click("button[name=compare]")
        expect(diff).to_have_attribute("data-from", "1")
        expect(diff.locator(".diff-del", has_text=re.compile(r"length: '?9"))).to_have_count(1)
        expect(diff.locator(".diff-add", has_text=re.compile(r"length: '?12"))).to_have_count(1)
        expect(diff.locator(".diff-add", has_text="extra:")).to_have_count(1)
        expect(diff).to_contain_text("pw:")
        expect(diff.locator(".diff-add, .diff-del", has_text="pw:")).to_have_count(0)
        content = page.content()
        assert "first-pw-value" not in content and "second-pw-value" not in content
        save_screenshot(page, "history-compare")

        # a version against itself
        page.select_option("select[name=diff_from]", "3")
        page.click("button[name=compare]")
        expect(page.locator("#version-diff")).to_have_text("Versions 3 and 3 are the same.")
