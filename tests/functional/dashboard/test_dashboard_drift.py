"""Drift in the dashboard (issue 28), in a real headless Chromium against a real
``kiln serve``: "Detect drift" on a stack's page, the drifted resource marked on the
topology and in the resources table, and its property differences in its side panel. A
plugin whose object always reads back changed stands in for a cloud (the page shows what
the API found; reading a real cloud is tests/cloud/test_drift_cloud.py's)."""

from __future__ import annotations

import textwrap
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.functional.dashboard.test_dashboard_polish import create
from tests.support.browser import save_screenshot
from tests.support.fixtures import kiln_with_plugin
from tests.support.server import KilnProcess

CHANGED_PLUGIN = textwrap.dedent('''
    from kiln.resources.base import Resource
    from kiln.resources.live_state import LiveState

    class Changed(Resource):
        """A resource whose object was recoloured behind Kiln's back."""
        type_name = "Acme::Changed"

        async def handle_create(self):
            self.resource_id = self.physical_resource_name()

        async def live_state(self, expected):
            return LiveState(expected={"colour": "blue", "size": 3},
                             actual={"colour": "red", "size": 3})
''')

TEMPLATE = {
    "heat_template_version": "2018-08-31",
    "resources": {
        "changed": {"type": "Acme::Changed"},
        "steady": {"type": "OS::Heat::None", "depends_on": ["changed"]},
    },
}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KilnProcess]:
    yield from kiln_with_plugin(tmp_path_factory.mktemp("drift-dashboard"), "changed.py",
                                CHANGED_PLUGIN)


def test_detect_drift_marks_the_drifted_resource(page: Any, server: KilnProcess,
                                                 tmp_path: Path) -> None:
    from playwright.sync_api import expect

    proj = f"drift{uuid.uuid4().hex[:8]}"
    with httpx.Client(base_url=server.endpoint(proj), timeout=30) as api:
        sid = create(api, "painted", TEMPLATE)
        page.goto(f"{server.url}/#/p/{proj}/stacks/painted/{sid}")
        expect(page.locator("#stack-status")).to_have_text("CREATE_COMPLETE")
        expect(page.locator("#topology")).to_have_attribute("data-nodes", "2")
        # never checked: nothing is marked
        expect(page.locator("#drift-status")).to_have_attribute("data-checked", "never")
        expect(page.locator("#drift-status")).to_have_text("Drift: never detected")
        expect(page.locator("#topology")).to_have_attribute("data-drifted", "")

        page.click("button[name=drift]")
        expect(page.locator("#drift-status")).to_have_attribute("data-drift", "DRIFTED")
        expect(page.locator("#drift-status")).to_contain_text("1 resource(s)")
        expect(page.locator("#topology")).to_have_attribute("data-drifted", "changed")
        save_screenshot(page, "drift-topology")

        page.click(".tabs >> text=Resources")
        row = page.locator("table.resources tr[data-resource=changed]")
        expect(row).to_have_attribute("data-drift", "MODIFIED")
        expect(row).to_contain_text("drifted: MODIFIED")
        steady = page.locator("table.resources tr[data-resource=steady]")
        expect(steady).not_to_have_attribute("data-drift", "MODIFIED")

        row.click()
        section = page.locator("aside.side #resource-drift")
        expect(section).to_have_attribute("data-status", "MODIFIED")
        diff = section.locator("tr[data-path='/colour']")
        expect(diff).to_contain_text("NOT_EQUAL")
        expect(diff).to_contain_text("blue")
        expect(diff).to_contain_text("red")
        expect(section.locator("tbody tr")).to_have_count(1)  # /size did not change
        save_screenshot(page, "drift-side-panel")

        # the result is kept: a fresh page shows it without detecting again
        page.reload()
        expect(page.locator("#drift-status")).to_have_attribute("data-drift", "DRIFTED")
        expect(page.locator("#topology")).to_have_attribute("data-drifted", "changed")
        runs = api.get(f"/stacks/painted/{sid}/drift").json()["drift"]
        assert runs["stack_drift_status"] == "DRIFTED"
