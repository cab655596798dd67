"""The dashboard in Firefox (Debian's firefox-esr over WebDriver BiDi, see
tests/support/firefox.py): the same modules, canvas and event stream the Chromium tests
drive, in the other engine. The page loads without a script error or CSP violation, the
stack list and a stack's topology render, a nested group opens in place on a real double
click, an update started elsewhere is followed live, and the launch form is built from
the template."""

from __future__ import annotations

import json
import uuid

import httpx

from tests.support.browser import SESSION_MARKER, artifacts_dir
from tests.support.firefox import Firefox, firefox
from tests.support.server import KilnProcess

GROUP = {"heat_template_version": "2018-08-31",
         "parameters": {"count": {"type": "number", "default": 3}},
         "resources": {
             "group": {"type": "OS::Heat::ResourceGroup", "properties": {
                 "count": {"get_param": "count"},
                 "resource_def": {"type": "OS::Heat::RandomString"}}},
             "after": {"type": "OS::Heat::None", "depends_on": ["group"]}}}
LAUNCH = """heat_template_version: 2018-08-31
parameters:
  size:
    type: number
    label: Size
    default: 2
    constraints: [{range: {min: 1, max: 4}}]
  colour: {type: string, constraints: [{allowed_values: [red, blue]}]}
resources:
  n: {type: OS::Heat::None}
"""


def _shot(ff: Firefox, name: str) -> None:
    folder = artifacts_dir()
    ff.screenshot(folder / f"{name}.png")
    with (folder / SESSION_MARKER).open("a") as index:
        index.write(f"{name}.png\n")


def _double_click(ff: Firefox, x: float, y: float) -> None:
    """Two real mouse clicks through the browser's input stack (BiDi input actions)."""
    click = [{"type": "pointerDown", "button": 0}, {"type": "pointerUp", "button": 0}]
    ff.send("input.performActions", {"context": ff.context, "actions": [{
        "type": "pointer", "id": "mouse", "parameters": {"pointerType": "mouse"},
        "actions": [{"type": "pointerMove", "x": round(x), "y": round(y)}, *click, *click]}]})


def test_the_dashboard_works_in_firefox(kiln_server: KilnProcess) -> None:
    proj = f"firefox{uuid.uuid4().hex[:8]}"
    with httpx.Client(base_url=kiln_server.endpoint(proj), timeout=30) as api:
        created = api.post("/stacks", json={"stack_name": "ff", "template": GROUP})
        assert created.status_code == 201, created.text
        sid = created.json()["stack"]["id"]
        with firefox() as ff:
            ff.navigate(f"{kiln_server.url}/#/p/{proj}/stacks")
            ff.wait_for("document.querySelector('table.stacks tr[data-stack=\"ff\"]')")
            assert ff.evaluate("document.querySelector('h1').textContent") == "Stacks"
            ff.evaluate("document.querySelector('tr[data-stack=\"ff\"] a').click()")
            ff.wait_for("document.querySelector('#stack-status')?.textContent"
                        " === 'CREATE_COMPLETE'")
            ff.wait_for("document.querySelector('#topology')?.dataset.nodes === '2'")
            # a real double click on the group (once the graph marks it nested) opens it
            key = json.dumps(f"{sid}/group")
            ff.wait_for(f"window.kilnDashboard.topology.nodes.get({key})?.nested")
            point = ff.evaluate(f"window.kilnDashboard.topology.screenPoint({key})")
            _double_click(ff, point["x"], point["y"])
            ff.wait_for("document.querySelector('#topology').dataset.expanded === 'group'")
            ff.wait_for("document.querySelector('#topology').dataset.nodes === '5'")
            _shot(ff, "firefox-topology")

            # an update started by another client is followed live (the event stream)
            updated = api.patch(f"/stacks/ff/{sid}", json={"parameters": {"count": 4}})
            assert updated.status_code == 202, updated.text
            ff.wait_for("document.querySelector('#stack-status')?.textContent"
                        " === 'UPDATE_COMPLETE'", timeout=60)
            ff.wait_for("document.querySelector('#topology').dataset.nodes === '6'")

            # the launch form is generated from the template's parameters
            ff.navigate(f"{kiln_server.url}/#/p/{proj}/launch")
            ff.wait_for("document.querySelector('textarea[name=template]')")
            ff.evaluate(f"""(() => {{
                const area = document.querySelector('textarea[name=template]');
                area.value = {json.dumps(LAUNCH)};
                area.dispatchEvent(new Event('input', {{bubbles: true}}));
                [...document.querySelectorAll('button')]
                    .find(b => b.textContent === 'Load parameters').click();
            }})()""")
            ff.wait_for("document.querySelector('#param-size')")
            assert ff.evaluate("document.querySelector('#param-size').value") == "2"
            # no default: an empty choice first, then the allowed values
            assert ff.evaluate("[...document.querySelectorAll('#param-colour option')]"
                               ".map(o => o.textContent)") == ["", "red", "blue"]
            _shot(ff, "firefox-launch")
            assert ff.errors == [], ff.errors


def test_firefox_reports_script_errors(kiln_server: KilnProcess) -> None:
    """The error collection the test above relies on does see a page's errors."""
    with firefox() as ff:
        ff.navigate(f"{kiln_server.url}/")
        ff.wait_for("document.querySelector('h1')")
        ff.evaluate("setTimeout(() => { throw new Error('boom from the page'); }, 0)")
        assert "boom from the page" in ff.wait_for_error("boom from the page")
