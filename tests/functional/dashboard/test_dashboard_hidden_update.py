"""A hidden parameter on the dashboard's Update page, in a real headless Chromium against a
real ``kiln serve``. The API shows a hidden value masked (``******``); the page must never
send that mask back as the value. An untouched hidden field is left out of the request and
the stack keeps its value (PATCH, Heat's ``existing`` update), on the update itself, on its
preview and on a change set saved from it; a value typed in is sent."""

from __future__ import annotations

import re
import uuid
from typing import Any

import httpx

from tests.support.server import KilnProcess

TEMPLATE = {
    "heat_template_version": "2018-08-31",
    "parameters": {"size": {"type": "number", "default": 1},
                   "secret": {"type": "string", "hidden": True}},
    "resources": {
        "sized": {"type": "OS::Heat::Value", "properties": {"value": {"get_param": "size"}}},
        "kept": {"type": "OS::Heat::Value", "properties": {"value": {"get_param": "secret"}}},
    },
    "outputs": {"secret": {"value": {"get_attr": ["kept", "value"]}},
                "size": {"value": {"get_attr": ["sized", "value"]}}},
}


def output(api: httpx.Client, path: str, key: str) -> Any:
    r = api.get(f"{path}/outputs/{key}")
    assert r.status_code == 200, r.text
    return r.json()["output"]["output_value"]


def open_update(page: Any, base: str, proj: str, sid: str, status: str) -> None:
    """The stack's page once *status* shows, then its Update page with parameters loaded."""
    from playwright.sync_api import expect

    page.goto(f"{base}/#/p/{proj}/stacks/vault/{sid}")
    expect(page.locator("#stack-status")).to_have_text(status)
    page.click("a.button:has-text('Update')")
    expect(page.locator("#param-size")).to_be_visible()


def test_an_untouched_hidden_parameter_keeps_its_value(
        page: Any, kiln_server: KilnProcess) -> None:
    from playwright.sync_api import expect

    proj = f"hid{uuid.uuid4().hex[:8]}"
    base = kiln_server.url
    with httpx.Client(base_url=kiln_server.endpoint(proj), timeout=30) as api:
        r = api.post("/stacks", json={"stack_name": "vault", "template": TEMPLATE,
                                      "parameters": {"secret": "first-secret"}})
        assert r.status_code == 201, r.text
        sid = r.json()["stack"]["id"]
        path = f"/stacks/vault/{sid}"
        open_update(page, base, proj, sid, "CREATE_COMPLETE")
        secret = page.locator("#param-secret")
        # shown empty, saying the current value stays; never the API's mask
        expect(secret).to_have_value("")
        expect(secret).to_have_attribute("placeholder", re.compile("current value is kept"))

        # the preview: only the size changes, the hidden value's resource does not
        page.fill("#param-size", "2")
        page.click("button[name=preview]")
        expect(page.locator(".change-kind[data-kind=updated]")).to_contain_text("sized")
        expect(page.locator(".change-kind[data-kind=unchanged]")).to_contain_text("kept")
        expect(page.locator(".change-kind[data-kind=updated]")).not_to_contain_text("kept")

        # saved as a change set: the plan changes only "sized"; executed, the secret stays
        page.fill("input[name=changeset_name]", "grow")
        page.click("button[name=save_changeset]")
        expect(page).to_have_url(re.compile(r"/changesets/[0-9a-f-]+$"))
        cs = page.url.rsplit("/", 1)[1]
        shown = api.get(f"{path}/changesets/{cs}").json()["changeset"]
        assert [c["logical_resource_id"] for c in shown["changes"]] == ["sized"], shown
        assert api.post(f"{path}/changesets/{cs}/execute").status_code == 202
        page.goto(f"{base}/#/p/{proj}/stacks/vault/{sid}")
        expect(page.locator("#stack-status")).to_have_text("UPDATE_COMPLETE")
        assert output(api, path, "size") == 2
        assert output(api, path, "secret") == "first-secret"

        # the update itself
        open_update(page, base, proj, sid, "UPDATE_COMPLETE")
        expect(page.locator("#param-size")).to_have_value("2")
        expect(page.locator("#param-secret")).to_have_value("")
        page.fill("#param-size", "3")
        page.click("button[name=preview]")
        expect(page.locator(".change-kind[data-kind=unchanged]")).to_contain_text("kept")
        page.click("button[name=submit]")
        expect(page).to_have_url(re.compile(rf"/stacks/vault/{sid}$"))
        expect(page.locator("#stack-status")).to_have_text("UPDATE_COMPLETE")
        assert output(api, path, "size") == 3
        kept = output(api, path, "secret")
        assert kept == "first-secret" and kept != "******"

        # a value typed in is the new value
        open_update(page, base, proj, sid, "UPDATE_COMPLETE")
        page.fill("#param-secret", "second-secret")
        page.click("button[name=preview]")
        expect(page.locator(".change-kind[data-kind=updated]")).to_contain_text("kept")
        page.click("button[name=submit]")
        expect(page).to_have_url(re.compile(rf"/stacks/vault/{sid}$"))
        expect(page.locator("#stack-status")).to_have_text("UPDATE_COMPLETE")
        assert output(api, path, "secret") == "second-secret"
        assert output(api, path, "size") == 3
        # still hidden where the API shows parameters (the output shows it: it is an output)
        assert api.get(path).json()["stack"]["parameters"]["secret"] == "******"

        # a field emptied goes back to its default, as it would without a kept field
        open_update(page, base, proj, sid, "UPDATE_COMPLETE")
        page.fill("#param-size", "")
        page.click("button[name=preview]")
        expect(page.locator(".change-kind[data-kind=updated]")).to_contain_text("sized")
        expect(page.locator(".change-kind[data-kind=unchanged]")).to_contain_text("kept")
        page.click("button[name=submit]")
        expect(page).to_have_url(re.compile(rf"/stacks/vault/{sid}$"))
        expect(page.locator("#stack-status")).to_have_text("UPDATE_COMPLETE")
        assert output(api, path, "size") == 1
        assert output(api, path, "secret") == "second-secret"
