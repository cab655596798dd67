"""Nested change sets in the dashboard (issue 28), in a real headless Chromium against a
real ``kiln serve``: a change set made with ``include_nested_stacks`` opens, at its link,
a drill-down from each nested stack resource into that stack's own change set (hidden
values masked as the API masks them), a nested stack's change set opens at its own link
without Execute or Delete, and the root executes the whole tree; the Update page saves
its preview with nested change sets when asked."""

from __future__ import annotations

import json
import re
import uuid
from typing import Any

import httpx

from tests.functional.dashboard.test_dashboard_polish import create
from tests.support.browser import save_screenshot
from tests.support.clients import heat_client
from tests.support.server import KilnProcess

CHILD = {
    "heat_template_version": "2018-08-31",
    "parameters": {"length": {"type": "number"},
                   "password": {"type": "string", "hidden": True}},
    "resources": {
        "inner": {"type": "OS::Heat::RandomString",
                  "properties": {"length": {"get_param": "length"}}},
        "note": {"type": "OS::Heat::Value",
                 "properties": {"value": {"get_param": "password"}}},
    },
}
EXTRA = {"heat_template_version": "2018-08-31",
         "resources": {"flag": {"type": "OS::Heat::None"}}}


def parent(*, extra: bool = False) -> dict[str, Any]:
    resources: dict[str, Any] = {
        "kid": {"type": "OS::Heat::Stack",
                "properties": {"template": json.dumps(CHILD),
                               "parameters": {"length": {"get_param": "length"},
                                              "password": {"get_param": "password"}}}},
    }
    if extra:
        resources["extra"] = {"type": "OS::Heat::Stack",
                              "properties": {"template": json.dumps(EXTRA)}}
    return {
        "heat_template_version": "2018-08-31",
        "parameters": {"length": {"type": "number", "default": 8},
                       "password": {"type": "string", "hidden": True,
                                    "default": "first-secret"}},
        "resources": resources,
    }


def test_drill_down_into_nested_change_sets(page: Any, kiln_server: KilnProcess) -> None:
    from playwright.sync_api import expect

    proj = f"csn{uuid.uuid4().hex[:8]}"
    with httpx.Client(base_url=kiln_server.endpoint(proj), timeout=30) as api:
        sid = create(api, "web", parent())
        home = f"{kiln_server.url}/#/p/{proj}/stacks/web/{sid}"
        page.goto(home)
        expect(page.locator("#stack-status")).to_have_text("CREATE_COMPLETE")
        kid_stack = api.get(f"/stacks/web/{sid}/resources/kid").json()["resource"][
            "physical_resource_id"]
        made = api.post(f"/stacks/web/{sid}/changesets", json={
            "name": "deeper", "template": parent(extra=True), "include_nested_stacks": True,
            "parameters": {"length": 12, "password": "second-secret"}})
        assert made.status_code == 201, made.text
        root = made.json()["changeset"]

        page.goto(f"{home}/changesets/{root['id']}")
        expect(page.locator("h1")).to_contain_text("deeper")
        kid = page.locator("#changes > tbody > tr[data-resource=kid]")
        expect(kid).to_have_attribute("data-action", "Modify")
        expect(page.locator(".nested-changeset")).to_have_count(0)  # closed until asked
        kid.locator("button[name=nested]").click()
        nested = page.locator("tr.nested-changes[data-parent=kid] .nested-changeset")
        expect(nested).to_have_attribute("data-changeset", "deeper-kid")
        expect(nested.locator(".nested-stack")).not_to_be_empty()
        expect(nested.locator(".nested-head")).to_contain_text("(updated)")
        inner = nested.locator("tr[data-resource=inner]")
        expect(inner.locator("li[data-property=length]")).to_contain_text("8 → 12")
        expect(inner).to_contain_text("needs a new resource")
        expect(nested.locator("tr[data-resource=note] li[data-property=value]")
               ).to_contain_text("****** → ******")
        expect(nested.locator(".nested-parameters")).to_contain_text("password = ******")
        # the nested stack to be created: its own change set, all of it added
        page.locator("#changes > tbody > tr[data-resource=extra] button[name=nested]").click()
        added = page.locator("tr.nested-changes[data-parent=extra] .nested-changeset")
        expect(added.locator(".nested-head")).to_contain_text("(to be created)")
        expect(added.locator("tr[data-resource=flag]")).to_have_attribute("data-action", "Add")
        # closing and opening again keeps what was read
        kid.locator("button[name=nested]").click()
        expect(page.locator("tr.nested-changes[data-parent=kid]")).to_be_hidden()
        kid.locator("button[name=nested]").click()
        expect(nested).to_be_visible()
        for secret in ("first-secret", "second-secret"):
            assert secret not in page.content()
        save_screenshot(page, "changeset-nested")

        # a nested change set at its own link: shown, but executed only with its root
        nested.locator(".nested-head a").click()
        expect(page).to_have_url(re.compile(rf"/stacks/web/{sid}/changesets/[0-9a-f-]+$"))
        expect(page.locator("h1")).to_contain_text("deeper-kid")
        expect(page.locator("#changeset-root")).to_contain_text("deeper")
        expect(page.locator("#changes tr[data-resource=inner]")).to_have_count(1)
        expect(page.locator("button[name=execute]")).to_have_count(0)
        expect(page.locator("button[name=delete-changeset]")).to_have_count(0)
        assert "second-secret" not in page.content()
        page.locator("#changeset-root a").click()
        expect(page.locator("h1")).to_contain_text("deeper")
        page.once("dialog", lambda d: d.accept())
        page.click("button[name=execute]")
        expect(page).to_have_url(re.compile(rf"/stacks/web/{sid}$"))
        expect(page.locator("#stack-status")).to_have_text("UPDATE_COMPLETE")
        heat = heat_client(kiln_server.endpoint(proj))
        assert len(heat.resources.get(kid_stack, "inner").attributes["value"]) == 12
        assert {r.resource_name for r in heat.resources.list("web")} == {"kid", "extra"}

        # the Update page saves its preview with nested change sets when asked
        page.click("a.button:has-text('Update')")
        expect(page.locator("#param-length")).to_have_value("12")
        page.fill("#param-length", "16")
        page.click("button[name=preview]")
        expect(page.locator(".change-kind[data-kind=updated]")).to_contain_text("kid")
        page.fill("input[name=changeset_name]", "longest")
        page.check("input[name=include_nested]")
        page.click("button[name=save_changeset]")
        expect(page.locator("h1")).to_contain_text("longest")
        page.locator("#changes > tbody > tr[data-resource=kid] button[name=nested]").click()
        nested = page.locator("tr.nested-changes[data-parent=kid] .nested-changeset")
        expect(nested.locator("tr[data-resource=inner] li[data-property=length]")
               ).to_contain_text("12 → 16")
        expect(nested.locator("tr[data-resource=note]")).to_have_count(0)  # password kept
        assert "second-secret" not in page.content()
