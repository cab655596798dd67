"""`kiln stack update --converge`, as a real process against a real `kiln serve`: the flag
reaches the engine, which reads each resource's live state before the update. A plugin
whose physical object is always gone stands in for a cloud (no cloud is needed to show
that the live state was read): only an update with converge marks it CHECK_FAILED with
the converge reason and replaces it."""

from __future__ import annotations

import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from kiln.engine.actions.converge import GONE_REASON
from tests.functional.test_cli_stack import api_get, kiln_stack, ok
from tests.support.fixtures import kiln_with_plugin

VANISHING_PLUGIN = textwrap.dedent('''
    from kiln.resources.base import Resource
    from kiln.resources.live_state import GONE

    class Vanishing(Resource):
        """A resource whose physical object is always found gone behind Kiln's back."""
        type_name = "Acme::Vanishing"

        async def handle_create(self):
            self.resource_id = self.physical_resource_name()

        async def live_state(self, expected):
            return GONE
''')

TEMPLATE = """\
heat_template_version: 2018-08-31
resources:
  thing: {type: Acme::Vanishing}
"""


@pytest.fixture(scope="module")
def endpoint(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    for proc in kiln_with_plugin(tmp_path_factory.mktemp("converge"), "vanishing.py",
                                 VANISHING_PLUGIN):
        yield proc.endpoint("demo")


def _ref(endpoint: str, name: str) -> str:
    return f"{name}/{api_get(endpoint, f'/stacks/{name}')['stack']['id']}"


def _reasons(endpoint: str, name: str) -> list[str]:
    events = api_get(endpoint, f"/stacks/{_ref(endpoint, name)}/resources/thing/events")["events"]
    return [e.get("resource_status_reason") or "" for e in events]


def _physical_id(endpoint: str, name: str) -> str:
    return str(api_get(endpoint, f"/stacks/{_ref(endpoint, name)}/resources/thing")["resource"]
               ["physical_resource_id"])


def test_update_with_converge_reads_the_live_state(endpoint: str, tmp_path: Path) -> None:
    (tmp_path / "t.yaml").write_text(TEMPLATE)
    name = "converging"
    ok(kiln_stack(endpoint, tmp_path, "create", "-t", "t.yaml", "--wait", name))
    first = _physical_id(endpoint, name)

    # without the flag the live state is not read: nothing to do, nothing replaced
    ok(kiln_stack(endpoint, tmp_path, "update", "--existing", "--yes", "--wait", name))
    assert GONE_REASON not in _reasons(endpoint, name)
    assert _physical_id(endpoint, name) == first

    done = ok(kiln_stack(endpoint, tmp_path, "update", "--existing", "--converge", "--yes",
                         "--wait", name))
    assert "UPDATE_COMPLETE" in done.stdout
    assert GONE_REASON in _reasons(endpoint, name)
    assert _physical_id(endpoint, name) != first  # replaced, as the template wants it

    # a change set is a plan, not an update: the flag is refused there
    refused = kiln_stack(endpoint, tmp_path, "update", "--existing", "--converge",
                         "--save-as", "cs1", name)
    assert refused.returncode == 2
    assert "--converge applies to an update" in refused.stderr
    ok(kiln_stack(endpoint, tmp_path, "delete", "--yes", "--wait", name))
