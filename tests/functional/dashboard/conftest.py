"""One headless Chromium per test module (per xdist worker), a fresh page per test."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.support.browser import chromium_executable, launch_args
from tests.support.services import unavailable

#: how long a page action or an expect() waits (milliseconds)
EXPECT_TIMEOUT_MS = 60_000


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        unavailable("playwright (the test extra) is not installed")
    from playwright.sync_api import expect

    # expect()'s own default is 5 s, apart from the page's default timeout below: too
    # short for a page that waits on the API of a server at load 15+ on 2 CPUs
    expect.set_options(timeout=EXPECT_TIMEOUT_MS)
    executable = chromium_executable()
    with sync_playwright() as pw:
        chromium = pw.chromium.launch(executable_path=executable, args=launch_args())
        yield chromium
        chromium.close()


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.on("console", lambda msg: msg.type == "error"
            and not msg.text.startswith("Failed to load resource")  # an API 4xx, shown
            and errors.append(msg.text))
    page.set_default_timeout(EXPECT_TIMEOUT_MS)
    yield page
    context.close()
    # a script error or a CSP violation on any page is a failure of the test that saw it
    assert errors == [], errors
