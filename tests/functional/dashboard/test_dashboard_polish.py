"""The dashboard's finishing touches (issue 27), each seen in a real headless Chromium
against a real ``kiln serve``: actions offered only when the stack's state allows them,
the resources' status reasons, arrows on the topology's edges, dates in the browser's
locale with the ISO time in a tooltip, nested members named by their path in the
timeline, and the stack list's descriptions."""

from __future__ import annotations

import re
import uuid
from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo

import httpx

from tests.support.browser import save_screenshot
from tests.support.server import KilnProcess

HOOKED = {
    "heat_template_version": "2018-08-31",
    "description": "Held at a hook",
    "resources": {
        "first": {"type": "OS::Heat::None"},
        "gate": {"type": "OS::Heat::None", "depends_on": ["first"]},
        "last": {"type": "OS::Heat::Value", "depends_on": ["gate"],
                 "properties": {"value": {"get_attr": ["first", "show"]}}},
    },
}
PRE_CREATE = {"resource_registry": {"resources": {"gate": {"hooks": "pre-create"}}}}
PLAIN = {"heat_template_version": "2018-08-31", "description": "Plain and simple",
         "resources": {"r": {"type": "OS::Heat::None"}}}


def project() -> str:
    return f"polish{uuid.uuid4().hex[:8]}"


def create(api: httpx.Client, name: str, template: dict[str, Any],
           environment: dict[str, Any] | None = None) -> str:
    body: dict[str, Any] = {"stack_name": name, "template": template}
    if environment:
        body["environment"] = environment
    r = api.post("/stacks", json=body)
    assert r.status_code == 201, r.text
    return str(r.json()["stack"]["id"])


def shown_actions(page: Any) -> set[str]:
    names = page.locator(".actions button").evaluate_all("bs => bs.map(b => b.name)")
    update = page.locator(".actions a.button:has-text('Update')").count()
    return set(names) | ({"update"} if update else set())


def test_actions_follow_the_stack_state(page: Any, kiln_server: KilnProcess) -> None:
    from playwright.sync_api import expect

    proj = project()
    with httpx.Client(base_url=kiln_server.endpoint(proj), timeout=30) as api:
        # held at a pre-create hook: only delete is possible while it runs
        held = create(api, "held", HOOKED, PRE_CREATE)
        page.goto(f"{kiln_server.url}/#/p/{proj}/stacks/held/{held}")
        status = page.locator("#stack-status")
        expect(status).to_have_text("CREATE_IN_PROGRESS")
        expect(page.locator(".actions button[name=delete]")).to_be_visible()
        assert shown_actions(page) == {"delete"}
        r = api.post(f"/stacks/held/{held}/resources/gate/signal",
                     json={"unset_hook": "pre-create"})
        assert r.status_code == 200, r.text
        expect(status).to_have_text("CREATE_COMPLETE")
        expect(page.locator(".actions button[name=suspend]")).to_be_visible()

        sid = create(api, "plain", PLAIN)
        page.goto(f"{kiln_server.url}/#/p/{proj}/stacks/plain/{sid}")
        expect(status).to_have_text("CREATE_COMPLETE")
        expect(page.locator(".actions button[name=delete]")).to_be_visible()
        assert shown_actions(page) == {"update", "suspend", "check", "drift", "snapshot",
                                       "delete"}
        page.click("button[name=suspend]")
        expect(status).to_have_text("SUSPEND_COMPLETE")
        expect(page.locator(".actions button[name=resume]")).to_be_visible()
        # suspended: no second suspend, no update (the API refuses both)
        assert shown_actions(page) == {"resume", "check", "drift", "snapshot", "delete"}
        page.click("button[name=resume]")
        expect(status).to_have_text("RESUME_COMPLETE")
        expect(page.locator(".actions button[name=suspend]")).to_be_visible()
        assert "resume" not in shown_actions(page)


def test_resources_show_their_status_reason(page: Any, kiln_server: KilnProcess) -> None:
    from playwright.sync_api import expect

    proj = project()
    with httpx.Client(base_url=kiln_server.endpoint(proj), timeout=30) as api:
        sid = create(api, "plain", PLAIN)
        page.goto(f"{kiln_server.url}/#/p/{proj}/stacks/plain/{sid}?tab=resources")
        expect(page.locator("table.resources thead")).to_contain_text("Reason")
        reason = page.locator("table.resources tr[data-resource=r] td.reason")
        expect(reason).to_have_text("state changed")
        r = api.patch(f"/stacks/plain/{sid}/resources/r",
                      json={"mark_unhealthy": True, "resource_status_reason": "broken disk"})
        assert r.status_code == 200, r.text
        page.reload()
        expect(reason).to_have_text("broken disk")
        expect(reason).to_have_attribute("title", "broken disk")


def test_topology_edges_have_arrows(page: Any, kiln_server: KilnProcess) -> None:
    """Each dependency is drawn as an arrow from the resource to its dependent."""
    from playwright.sync_api import expect

    proj = project()
    with httpx.Client(base_url=kiln_server.endpoint(proj), timeout=30) as api:
        sid = create(api, "arrows", HOOKED)
        page.goto(f"{kiln_server.url}/#/p/{proj}/stacks/arrows/{sid}")
        expect(page.locator("#stack-status")).to_have_text("CREATE_COMPLETE")
    expect(page.locator("#topology")).to_have_attribute("data-nodes", "3")
    page.click("text=Fit")
    expect(page.locator("#topology")).to_have_attribute("data-arrows", "3")
    arrows = page.evaluate("window.kilnDashboard.topology.arrows")
    assert sorted((a["from"].split("/")[-1], a["to"].split("/")[-1]) for a in arrows) == [
        ("first", "gate"), ("first", "last"), ("gate", "last")]
    expect(page.locator("section[data-tab=topology]")).to_contain_text(
        "An arrow points from a resource to the resources that depend on it.")
    save_screenshot(page, "polish-arrows")


def test_dates_in_the_browser_locale_with_iso_tooltip(browser: Any,
                                                      kiln_server: KilnProcess) -> None:
    """A German browser in Berlin reads German dates in its own time zone; the exact UTC
    time is in the tooltip."""
    from playwright.sync_api import expect

    proj = project()
    with httpx.Client(base_url=kiln_server.endpoint(proj), timeout=30) as api:
        sid = create(api, "dated", PLAIN)
    context = browser.new_context(locale="de-DE", timezone_id="Europe/Berlin")
    try:
        page = context.new_page()
        page.goto(f"{kiln_server.url}/#/p/{proj}/stacks")
        created = page.locator("table.stacks tr[data-stack=dated] time").first
        expect(created).to_have_attribute(
            "title", re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$"))
        iso = created.get_attribute("title")
        assert created.get_attribute("datetime") == iso
        berlin = datetime.fromisoformat(iso.replace("Z", "+00:00")).astimezone(
            ZoneInfo("Europe/Berlin"))
        expect(created).to_have_text(berlin.strftime("%d.%m.%Y, %H:%M:%S"))
        # the stack's own page and its events say it the same way
        page.goto(f"{kiln_server.url}/#/p/{proj}/stacks/dated/{sid}?tab=events")
        expect(page.locator(".stack-head time").first).to_have_attribute("title", iso)
        expect(page.locator(".stack-head time").first).to_have_text(
            berlin.strftime("%d.%m.%Y, %H:%M:%S"))
        expect(page.locator("table.events time").first).to_have_text(
            re.compile(r"^\d\d\.\d\d\.\d{4}, \d\d:\d\d:\d\d$"))
    finally:
        context.close()


NESTED = {
    "heat_template_version": "2018-08-31",
    "resources": {
        "group": {"type": "OS::Heat::ResourceGroup", "properties": {
            "count": 2, "resource_def": {"type": "OS::Heat::ResourceGroup", "properties": {
                "count": 1, "resource_def": {"type": "OS::Heat::None"}}}}},
        "after": {"type": "OS::Heat::None", "depends_on": ["group"]},
    },
}


def test_timeline_names_nested_members_by_path(page: Any, kiln_server: KilnProcess) -> None:
    """``outer.group.0.0`` as the CLI says it, not by the generated nested stack names."""
    from playwright.sync_api import expect

    proj = project()
    page.goto(f"{kiln_server.url}/#/p/{proj}/stacks")
    with httpx.Client(base_url=kiln_server.endpoint(proj), timeout=30) as api:
        sid = create(api, "outer", NESTED)
        page.goto(f"{kiln_server.url}/#/p/{proj}/stacks/outer/{sid}?tab=timeline")
        expect(page.locator("#stack-status")).to_have_text("CREATE_COMPLETE")
    # the stack, its two resources, two members and the member of each (nested stacks'
    # own states are their resources' rows)
    expect(page.locator("#timeline")).to_have_attribute("data-rows", "7")
    labels = page.evaluate("window.kilnDashboard.timeline.labels()")
    assert sorted(labels) == sorted(["outer", "group", "after", "outer.group.0",
                                     "outer.group.1", "outer.group.0.0",
                                     "outer.group.1.0"]), labels
    save_screenshot(page, "polish-timeline-paths")


def test_stack_list_has_no_empty_description_column(page: Any,
                                                    kiln_server: KilnProcess) -> None:
    """The list API, as Heat's, gives no description: no column stays empty for it."""
    from playwright.sync_api import expect

    proj = project()
    with httpx.Client(base_url=kiln_server.endpoint(proj), timeout=30) as api:
        create(api, "described", PLAIN)
        listed = api.get("/stacks").json()["stacks"]
        assert [s.get("description") for s in listed] == [""]
    page.goto(f"{kiln_server.url}/#/p/{proj}/stacks")
    row = page.locator("table.stacks tr[data-stack=described]")
    expect(row).to_be_visible()
    expect(page.locator("table.stacks thead th")).to_have_count(4)
    expect(page.locator("table.stacks thead")).not_to_contain_text("Description")
    expect(row.locator("td")).to_have_count(4)
    # an empty project: the one cell spans the table
    page.goto(f"{kiln_server.url}/#/p/{project()}/stacks")
    expect(page.locator("table.stacks")).to_contain_text("No stacks.")
    expect(page.locator("table.stacks tbody td")).to_have_attribute("colspan", "4")
