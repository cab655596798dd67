"""The dashboard in a real headless Chromium against a real ``kiln serve``: a user's
whole path (launch from a template with a generated parameter form, errors shown at
their field, the graph following the create live, a nested stack opened in place, the
timeline, an update with its preview, delete), the stack list's paging and filters,
and a 10,000-resource nested stack. Each page is saved as a screenshot."""

from __future__ import annotations

import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.support.browser import save_screenshot
from tests.support.server import KilnProcess

TEMPLATE = """\
heat_template_version: 2018-08-31
description: Web tier
parameter_groups:
- label: Sizing
  description: How many members and of what size
  parameters: [count, flavor]
parameters:
  count:
    type: number
    label: Members
    description: Size of the group
    default: 2
    constraints:
    - range: {min: 1, max: 5}
      description: between 1 and 5 members
  flavor:
    type: string
    default: small
    constraints:
    - allowed_values: [small, large]
  db_password:
    type: string
    hidden: true
  start:
    type: string
    default: '2024-01-01T00:00:00Z'
    constraints:
    - custom_constraint: iso_8601
resources:
  secret:
    type: OS::Heat::RandomString
    properties: {length: 10}
  group:
    type: OS::Heat::ResourceGroup
    properties:
      count: {get_param: count}
      resource_def:
        type: OS::Heat::Value
        properties: {value: {get_param: flavor}}
  gate:
    type: OS::Heat::None
    depends_on: [secret]
  app:
    type: OS::Heat::Value
    depends_on: [gate, group]
    properties: {value: {get_attr: [secret, value]}}
outputs:
  members:
    value: {get_attr: [group, refs]}
"""
HOOKS = "resource_registry:\n  resources:\n    gate: {hooks: pre-create}\n"


def project() -> str:
    return f"browser{uuid.uuid4().hex[:8]}"


def node_point(page: Any, stack_key: str) -> dict[str, float]:
    point = page.evaluate(f"window.kilnDashboard.topology.screenPoint({stack_key!r})")
    assert point, f"no node {stack_key} on the canvas"
    return dict(point)


def nested_point(page: Any, stack_key: str) -> dict[str, float]:
    """Where to double-click a nested stack, once the graph marks it as one (the ▸ a user
    looks for): the mark comes with the resource list reloaded after the action's events,
    which a loaded machine may deliver after the status badge already changed."""
    page.wait_for_function(
        "key => !!window.kilnDashboard.topology.nodes.get(key)?.nested", arg=stack_key,
        timeout=60_000)
    return node_point(page, stack_key)


def stack_key(page: Any, name: str) -> str:
    return str(page.evaluate("window.kilnDashboard.stackId")) + "/" + name


def test_launch_watch_nested_update_delete(page: Any, kiln_server: KilnProcess,
                                           tmp_path: Path) -> None:
    from playwright.sync_api import expect

    proj = project()
    env_file = tmp_path / "hooks.yaml"
    env_file.write_text(HOOKS)
    page.goto(f"{kiln_server.url}/")
    expect(page.locator("h1")).to_have_text("Stacks")   # / is the dashboard to a browser
    page.fill("#project", proj)
    page.press("#project", "Enter")
    expect(page.locator("table.stacks")).to_contain_text("No stacks.")
    page.click("text=Launch stack")

    # -- launch: the parameter form comes from the template --------------------------------
    page.fill("input[name=stack_name]", "web")
    page.fill("textarea[name=template]", TEMPLATE)
    page.click("summary:has-text('Environment')")
    page.set_input_files("input[name=environment_files]", str(env_file))
    page.click("text=Load parameters")
    group = page.locator("fieldset.param-group", has_text="Sizing")
    expect(group).to_contain_text("How many members and of what size")
    expect(group.locator("label[for=param-count]")).to_contain_text("Members")
    expect(page.locator("#param-count")).to_have_value("2")
    expect(page.locator("#param-count")).to_have_attribute("type", "number")
    assert page.locator("#param-flavor option").all_inner_texts() == ["small", "large"]
    expect(page.locator("#param-db_password")).to_have_attribute("type", "password")
    expect(page.locator(".param[data-param=count] .hint")).to_contain_text(
        "between 1 and 5 members")

    # errors are shown at their field, before anything is created
    page.fill("#param-count", "9")
    page.click("button[name=submit]")
    expect(page.locator(".field-error[data-for=count]")).to_have_text(
        "between 1 and 5 members")
    expect(page.locator(".field-error[data-for=db_password]")).to_have_text(
        "A value is required.")
    page.fill("#param-count", "2")
    page.fill("#param-db_password", "s3cret")
    page.fill("#param-start", "not a date")   # only the server knows iso_8601
    page.click("button[name=submit]")
    expect(page.locator(".field-error[data-for=start]")).to_contain_text(
        "Parameter 'start' is invalid")
    save_screenshot(page, "01-launch-form-errors")
    with httpx.Client(base_url=kiln_server.endpoint(proj), timeout=10) as api:
        assert api.get("/stacks").json()["stacks"] == []
    page.fill("#param-start", "2025-05-05T05:05:05Z")
    page.click("button[name=submit]")

    # -- the graph follows the create live: paused at the hook, then complete --------------
    expect(page.locator("#stack-status")).to_have_text("CREATE_IN_PROGRESS")
    expect(page.locator("#topology")).to_have_attribute("data-nodes", "4")
    legend = page.locator("#legend")
    expect(legend.locator("[data-status=HOOK_PAUSED]")).to_have_text("HOOK_PAUSED 1")
    expect(page.locator("#live")).to_have_text("● live")
    page.evaluate("window.kilnDashboard.notReloaded = true")
    save_screenshot(page, "02-topology-in-progress")
    gate = node_point(page, stack_key(page, "gate"))
    page.mouse.click(gate["x"], gate["y"])
    side = page.locator("aside.side")
    expect(side.locator("h2")).to_have_text("gate")
    side.locator("button[name='Clear hook']").click()
    expect(page.locator("#stack-status")).to_have_text("CREATE_COMPLETE")
    expect(legend.locator("[data-status=CREATE_COMPLETE]")).to_have_text("CREATE_COMPLETE 4")
    assert page.evaluate("window.kilnDashboard.notReloaded") is True  # no reload happened
    page.click(".tabs >> text=Outputs")
    expect(page.locator("tr[data-output=members]")).to_contain_text("web-group-")

    # -- the nested group opens in place ------------------------------------------------
    page.click(".tabs >> text=Topology")
    grp = nested_point(page, stack_key(page, "group"))
    page.mouse.dblclick(grp["x"], grp["y"])
    expect(page.locator("#topology")).to_have_attribute("data-expanded", "group")
    expect(page.locator("#topology")).to_have_attribute("data-nodes", "6")
    expect(legend.locator("[data-status=CREATE_COMPLETE]")).to_have_text("CREATE_COMPLETE 6")
    page.click("text=Fit")
    save_screenshot(page, "03-topology-nested-open")
    page.click(".tabs >> text=Timeline")
    # the stack, its 4 resources and the group's 2 members (the nested stack's own
    # state is its resource's row)
    expect(page.locator("#timeline")).to_have_attribute("data-rows", "7")
    save_screenshot(page, "04-timeline")

    # -- update: preview first, then confirm ---------------------------------------------
    page.click("a.button:has-text('Update')")
    expect(page.locator("#param-count")).to_have_value("2")
    page.fill("#param-count", "3")
    page.fill("#param-db_password", "s3cret")
    expect(page.locator("button[name=submit]")).to_be_disabled()
    page.click("button[name=preview]")
    updated = page.locator(".change-kind[data-kind=updated]")
    expect(updated).to_contain_text("group")
    expect(page.locator(".change-kind[data-kind=unchanged]")).to_contain_text("secret")
    page.locator(".preview").scroll_into_view_if_needed()
    save_screenshot(page, "05-update-preview")
    page.click("button[name=submit]")
    expect(page.locator("#stack-status")).to_have_text("UPDATE_COMPLETE")
    grp = nested_point(page, stack_key(page, "group"))
    page.mouse.dblclick(grp["x"], grp["y"])
    expect(page.locator("#topology")).to_have_attribute("data-nodes", "7")

    # -- delete --------------------------------------------------------------------------
    page.once("dialog", lambda dialog: dialog.accept())
    page.click("button[name=delete]")
    expect(page.locator("#live")).to_have_text("deleted")
    save_screenshot(page, "06-deleted")
    page.click("header >> text=Stacks")
    expect(page.locator("table.stacks")).to_contain_text("No stacks.")


def test_stack_list_pages_filters_and_sorts(page: Any, kiln_server: KilnProcess) -> None:
    from playwright.sync_api import expect

    proj = project()
    template = {"heat_template_version": "2018-08-31",
                "resources": {"r": {"type": "OS::Heat::None"}}}
    with httpx.Client(base_url=kiln_server.endpoint(proj), timeout=30) as api:
        def create(i: int) -> None:
            r = api.post("/stacks", json={"stack_name": f"s{i:03d}", "template": template,
                                          "tags": "even" if i % 2 == 0 else "odd"})
            assert r.status_code == 201, r.text
        with ThreadPoolExecutor(4) as pool:
            list(pool.map(create, range(57)))
    page.goto(f"{kiln_server.url}/#/p/{proj}/stacks?sort=stack_name&dir=asc")
    rows = page.locator("table.stacks tbody tr")
    expect(page.locator("#list-info")).to_have_text("1\u201350 of 57")
    expect(rows).to_have_count(50)
    expect(rows.first).to_have_attribute("data-stack", "s000")
    save_screenshot(page, "07-stack-list")
    page.click("button[name=next]")
    expect(page.locator("#list-info")).to_have_text("51\u201357 of 57")
    expect(rows.first).to_have_attribute("data-stack", "s050")
    page.click("button[name=previous]")
    expect(rows.first).to_have_attribute("data-stack", "s000")
    page.click("th >> text=Name")            # the same column again: descending
    expect(rows.first).to_have_attribute("data-stack", "s056")
    page.fill("input[name=name]", "s042")
    page.click("text=Search")
    expect(rows).to_have_count(1)
    expect(rows.first).to_have_attribute("data-stack", "s042")
    page.fill("input[name=name]", "S04")     # any part of the name, in any case
    page.click("text=Search")
    expect(page.locator("#list-info")).to_have_text("1\u201310 of 10")
    expect(rows.first).to_have_attribute("data-stack", "s049")
    page.fill("input[name=name]", "")
    page.fill("input[name=tag]", "even")
    page.click("text=Search")
    expect(page.locator("#list-info")).to_have_text("1\u201329 of 29")
    page.select_option("select[name=status]", "FAILED")
    expect(page.locator("table.stacks")).to_contain_text("No stacks.")
    page.select_option("select[name=status]", "COMPLETE")
    page.select_option("select[name=action]", "CREATE")
    expect(page.locator("#list-info")).to_have_text("1\u201329 of 29")


ACTIONS_TEMPLATE = {
    "heat_template_version": "2018-08-31",
    "parameters": {"v": {"type": "string", "default": "a"}},
    "resources": {
        "handle": {"type": "OS::Heat::WaitConditionHandle"},
        "r": {"type": "OS::Heat::TestResource", "properties": {"value": {"get_param": "v"}}},
    },
}


def test_stack_and_resource_actions(page: Any, kiln_server: KilnProcess) -> None:
    from playwright.sync_api import expect

    proj = project()
    with httpx.Client(base_url=kiln_server.endpoint(proj), timeout=30) as api:
        r = api.post("/stacks", json={"stack_name": "acts", "template": ACTIONS_TEMPLATE})
        assert r.status_code == 201, r.text
        sid = r.json()["stack"]["id"]
        page.goto(f"{kiln_server.url}/#/p/{proj}/stacks/acts/{sid}")
        status = page.locator("#stack-status")
        expect(status).to_have_text("CREATE_COMPLETE")
        for button, done in (("suspend", "SUSPEND_COMPLETE"), ("resume", "RESUME_COMPLETE"),
                             ("check", "CHECK_COMPLETE")):
            page.click(f"button[name={button}]")
            expect(status).to_have_text(done)
        # snapshot (its name asked in a prompt), then restore it
        page.once("dialog", lambda dialog: dialog.accept("snap1"))
        page.click("button[name=snapshot]")
        page.click(".tabs >> text=Snapshots")
        expect(page.locator("section[data-tab=snapshots]")).to_contain_text("snap1")
        expect(page.locator("section[data-tab=snapshots]")).to_contain_text("COMPLETE")
        page.once("dialog", lambda dialog: dialog.accept())
        page.click("section[data-tab=snapshots] >> text=Restore")
        expect(status).to_have_text("RESTORE_COMPLETE")
        # a signal to a resource, seen in its metadata
        page.click(".tabs >> text=Resources")
        page.click("table.resources >> text=handle")
        side = page.locator("aside.side")
        side.locator("textarea[name=signal]").fill(
            '{"status": "SUCCESS", "data": "hello", "id": "1"}')
        side.locator("button[name=Signal]").click()
        expect(side.locator("pre").last).to_contain_text("hello")
        # mark unhealthy
        page.click("table.resources >> text=TestResource")
        side.locator("input[name=unhealthy_reason]").fill("broken disk")
        side.locator("button[name='Mark unhealthy']").click()
        expect(side).to_contain_text("CHECK_FAILED")
        save_screenshot(page, "08-resource-actions")
        # cancel an update held at a pre-update hook: it rolls back
        r = api.patch(f"/stacks/acts/{sid}", json={
            "parameters": {"v": "b"},
            "environment": {"resource_registry": {"resources": {
                "r": {"hooks": "pre-update"}}}}})
        assert r.status_code == 202, r.text
        expect(status).to_have_text("UPDATE_IN_PROGRESS")
        page.click("button[name=cancel_update]")
        expect(status).to_have_text("ROLLBACK_COMPLETE")


@pytest.mark.slow
def test_ten_thousand_resources_stay_usable(page: Any, start_kiln_factory: Any) -> None:
    """A group of 10,000 members opened in place: laid out and drawn, and the page still
    answers (pan, zoom, select) at once."""
    from playwright.sync_api import expect

    kiln = start_kiln_factory(options={"DEFAULT": {"max_resources_per_stack": -1,
                                                   "max_template_size": 8 * 2**20}})
    proj = project()
    template = {"heat_template_version": "2018-08-31", "resources": {
        "many": {"type": "OS::Heat::ResourceGroup", "properties": {
            "count": 10000, "resource_def": {"type": "OS::Heat::None"}}},
        "after": {"type": "OS::Heat::None", "depends_on": ["many"]}}}
    with httpx.Client(base_url=kiln.endpoint(proj), timeout=120) as api:
        r = api.post("/stacks", json={"stack_name": "big", "template": template})
        assert r.status_code == 201, r.text
        sid = r.json()["stack"]["id"]
        page.goto(f"{kiln.url}/#/p/{proj}/stacks/big/{sid}")
        expect(page.locator("#stack-status")).to_have_text("CREATE_COMPLETE", timeout=200_000)
    expect(page.locator("#topology")).to_have_attribute("data-nodes", "2")
    many = nested_point(page, f"{sid}/many")
    page.mouse.dblclick(many["x"], many["y"])
    expect(page.locator("#topology")).to_have_attribute("data-nodes", "10002",
                                                        timeout=120_000)
    page.click("text=Fit")
    canvas = page.locator("#topology").bounding_box()
    page.mouse.move(canvas["x"] + 300, canvas["y"] + 200)
    for _ in range(8):                        # zoom in on the grid, then pan
        page.mouse.wheel(0, -400)
    page.mouse.down()
    page.mouse.move(canvas["x"] + 100, canvas["y"] + 100, steps=5)
    page.mouse.up()
    timing = page.evaluate("""() => {
        const t = window.kilnDashboard.topology, t0 = performance.now();
        t.paint();
        const paint = performance.now() - t0, t1 = performance.now();
        t.layout();
        return {paint, layout: performance.now() - t1, nodes: t.placed.length};
    }""")
    print(f"10,002 nodes: layout {timing['layout']:.0f} ms, paint {timing['paint']:.0f} ms")
    assert timing["nodes"] == 10002
    save_screenshot(page, "09-ten-thousand")
