"""What an operator can diagnose from a real ``kiln serve``'s log when a resource fails in
a way its plugin did not intend (a bug rather than a ResourceFailure)."""

from __future__ import annotations

import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.clients import heat_client, wait_for_stack_status
from tests.support.fixtures import report_errors
from tests.support.server import KilnProcess, start_kiln

CRASHING_PLUGIN = textwrap.dedent('''
    from kiln.resources.base import Resource

    class Crashing(Resource):
        type_name = "Acme::Crashing"

        async def handle_create(self):
            return {"parts": []}["missing"]
''')


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KilnProcess]:
    workdir = tmp_path_factory.mktemp("diagnostics")
    plugins = workdir / "plugins"
    plugins.mkdir()
    (plugins / "crashing.py").write_text(CRASHING_PLUGIN)
    proc = start_kiln(workdir, options={"DEFAULT": {"plugin_dirs": str(plugins)}})
    yield proc
    proc.stop()
    report_errors(proc)


def test_an_unexpected_plugin_error_is_logged_with_its_traceback(
        server: KilnProcess, tmp_path: Path) -> None:
    heat: Any = heat_client(server.endpoint("demo"))
    created = heat.stacks.create(stack_name="crash", template={
        "heat_template_version": "2018-08-31",
        "resources": {"boom": {"type": "Acme::Crashing"}}})
    stack = wait_for_stack_status(heat, "crash")
    assert stack.stack_status == "CREATE_FAILED"
    assert stack.stack_status_reason == (
        "Resource CREATE failed: KeyError: resources.boom: 'missing'")
    records = [r for r in server.log_records() if r.get("resource_name") == "boom"]
    assert len(records) == 1, records
    record = records[0]
    assert record["level"] == "ERROR"
    assert record["stack_id"] == created["stack"]["id"]
    assert (record["stack_name"], record["action"]) == ("crash", "CREATE")
    assert record["exception"].startswith("Traceback (most recent call last):")
    assert 'return {"parts": []}["missing"]' in record["exception"]
    assert record["exception"].endswith("KeyError: 'missing'")
