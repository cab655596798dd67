"""The dashboard's Load parameters (POST /validate?all_errors=true) in a real headless
Chromium against a real ``kiln serve``: every resource's error with Kiln's hint under
it, a warning for a map spelt like a function (``get_parm``), which stays when the
errors are fixed, and a YAML error named by the file the template was loaded from."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

from tests.support.browser import save_screenshot
from tests.support.server import KilnProcess

MISTAKES = """\
heat_template_version: 2018-08-31
parameters:
  size: {type: number, default: 8}
resources:
  a:
    type: OS::Heat::RandomStrin
  b:
    type: OS::Heat::RandomString
    properties: {lenght: 8}
  c:
    type: OS::Heat::RandomString
    properties:
      length: {get_parm: size}
"""
WARNING = ('Warning: resources.c.properties.length: {get_parm: "size"} is a map, not a '
           "function: did you mean get_param?")


def _launch_form(page: Any, kiln_server: KilnProcess) -> None:
    page.goto(f"{kiln_server.url}/")
    page.fill("#project", f"errors{uuid.uuid4().hex[:8]}")
    page.press("#project", "Enter")
    page.click("text=Launch stack")


def test_load_parameters_shows_every_error_and_the_warnings(page: Any,
                                                            kiln_server: KilnProcess) -> None:
    from playwright.sync_api import expect

    _launch_form(page, kiln_server)
    page.fill("textarea[name=template]", MISTAKES)
    page.click("text=Load parameters")
    expect(page.locator(".field-error[data-for=template]")).to_have_text(
        "The Resource Type (OS::Heat::RandomStrin) could not be found.\n"
        "  hint: resources.a.type: did you mean OS::Heat::RandomString?\n"
        "Property error: resources.b.properties: Unknown Property lenght\n"
        "  hint: did you mean length?")
    warnings = page.locator(".field-warning[data-for=template-warnings]")
    expect(warnings).to_have_text(WARNING)
    save_screenshot(page, "load-parameters-every-error")

    page.fill("textarea[name=template]",
              MISTAKES.replace("RandomStrin\n", "RandomString\n").replace("lenght", "length"))
    page.click("text=Load parameters")
    expect(page.locator("#param-size")).to_have_value("8")
    expect(page.locator(".field-error[data-for=template]")).to_have_text("")
    expect(warnings).to_have_text(WARNING)


def test_a_yaml_error_names_the_file_the_template_came_from(
        page: Any, kiln_server: KilnProcess, tmp_path: Path) -> None:
    from playwright.sync_api import expect

    broken = tmp_path / "web.yaml"
    broken.write_text(MISTAKES + "outputs: {o: {value: 1}\n")
    _launch_form(page, kiln_server)
    page.set_input_files("input[name=template_file]", str(broken))
    expect(page.locator("textarea[name=template]")).to_have_value(broken.read_text())
    page.click("text=Load parameters")
    expect(page.locator(".field-error[data-for=template]")).to_contain_text(
        "  hint: web.yaml, line 15, column 1: expected ',' or '}', but got '<stream end>' "
        "(while parsing a flow mapping at line 14, column 10)")
