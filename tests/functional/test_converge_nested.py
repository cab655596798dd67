"""Heat's ``converge`` flag reaching nested stacks, and read in the update, not in its
request, through a real `kiln serve` with real clients (the `kiln` CLI, heatclient).

A plugin loaded through ``plugin_dirs`` stands in for a cloud: each resource is a file
in a directory (the "book") holding the resource's ``value``; a test rewrites the files
behind Kiln's back, as someone would change an object with the cloud's own tools. An
update with converge must put every value back, whether the resource is in the stack
itself, in an OS::Heat::Stack, in a ResourceGroup member or in a provider template's
stack. While a ``HOLD`` file is in the book, the plugin's read of the cloud waits: the
update request must be answered meanwhile (202, UPDATE_IN_PROGRESS), as Heat's is."""

from __future__ import annotations

import contextlib
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.functional.test_cli_stack import kiln_stack, ok
from tests.support.clients import wait_for_stack_status
from tests.support.fixtures import kiln_with_plugin

LEDGER_PLUGIN = textwrap.dedent('''
    import asyncio
    import os

    from kiln.resources.base import Resource
    from kiln.resources.live_state import GONE, LiveState
    from kiln.resources.schema import Property

    class Ledger(Resource):
        """One line in a file: the file is the physical object, its text the value."""
        type_name = "Acme::Ledger"
        properties_schema = {
            "book": Property("string", required=True),
            "value": Property("string", required=True, update_allowed=True),
        }

        def _path(self):
            return os.path.join(self.properties["book"], self.resource_id)

        async def handle_create(self):
            self.resource_id = self.physical_resource_name()
            with open(self._path(), "w") as f:
                f.write(self.properties["value"])

        async def handle_update(self, new_definition, new_properties, prop_diff):
            if "value" in prop_diff:
                with open(self._path(), "w") as f:
                    f.write(prop_diff["value"])

        async def handle_delete(self):
            if self.resource_id:
                try:
                    os.remove(self._path())
                except FileNotFoundError:
                    pass

        async def live_state(self, expected):
            hold = os.path.join(self.properties["book"], "HOLD")
            for _ in range(1200):   # a slow cloud, for at most a minute
                if not os.path.exists(hold):
                    break
                await asyncio.sleep(0.05)
            try:
                with open(self._path()) as f:
                    actual = f.read()
            except FileNotFoundError:
                return GONE
            return LiveState(expected={"value": expected.get("value")},
                             actual={"value": actual})
''')

INNER = """\
heat_template_version: 2018-08-31
parameters:
  book: {type: string}
resources:
  entry:
    type: Acme::Ledger
    properties: {book: {get_param: book}, value: inner}
"""

PROVIDED = """\
heat_template_version: 2018-08-31
parameters:
  book: {type: string}
resources:
  entry:
    type: Acme::Ledger
    properties: {book: {get_param: book}, value: provided}
"""

TEMPLATE = """\
heat_template_version: 2018-08-31
parameters:
  book: {type: string}
resources:
  top:
    type: Acme::Ledger
    properties: {book: {get_param: book}, value: top}
  group:
    type: OS::Heat::ResourceGroup
    properties:
      count: 2
      resource_def:
        type: Acme::Ledger
        properties: {book: {get_param: book}, value: member}
  inner:
    type: OS::Heat::Stack
    properties:
      parameters: {book: {get_param: book}}
      template: {get_file: inner.yaml}
  provided:
    type: provided.yaml
    properties: {book: {get_param: book}}
"""

WANTED = sorted(["top", "member", "member", "inner", "provided"])


@pytest.fixture(scope="module")
def endpoint(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    for proc in kiln_with_plugin(tmp_path_factory.mktemp("converge-nested"), "ledger.py",
                                 LEDGER_PLUGIN):
        yield proc.endpoint("demo")


def _values(book: Path) -> list[str]:
    return sorted(p.read_text() for p in book.iterdir() if p.name != "HOLD")


def _tamper(book: Path) -> None:
    """Every object changed behind Kiln's back."""
    for p in book.iterdir():
        p.write_text("tampered")


def _stack(endpoint: str, tmp_path: Path, name: str) -> Path:
    book = tmp_path / "book"
    book.mkdir()
    (tmp_path / "t.yaml").write_text(TEMPLATE)
    (tmp_path / "provided.yaml").write_text(PROVIDED)
    (tmp_path / "inner.yaml").write_text(INNER)
    ok(kiln_stack(endpoint, tmp_path, "create", "-t", "t.yaml", "--parameter",
                  f"book={book}", "--wait", name))
    assert _values(book) == WANTED
    return book


def test_converge_brings_nested_resources_back(endpoint: str, tmp_path: Path) -> None:
    name = "nested-converge"
    book = _stack(endpoint, tmp_path, name)
    _tamper(book)

    # without converge nothing is read: the update leaves the drifted objects alone
    ok(kiln_stack(endpoint, tmp_path, "update", "--existing", "--yes", "--wait", name))
    assert _values(book) == ["tampered"] * 5

    done = ok(kiln_stack(endpoint, tmp_path, "update", "--existing", "--converge", "--yes",
                         "--wait", name))
    assert "UPDATE_COMPLETE" in done.stdout
    # the stack's own resource, the OS::Heat::Stack's, both group members and the
    # provider template's: every one back to what its template says
    assert _values(book) == WANTED
    ok(kiln_stack(endpoint, tmp_path, "delete", "--yes", "--wait", name))
    assert _values(book) == []


def _heat(endpoint: str, timeout: float) -> Any:
    """heatclient as in tests.support.clients, with a bound on each request."""
    from heatclient import client as heat
    from keystoneauth1 import session
    from keystoneauth1.noauth import NoAuth

    sess = session.Session(auth=NoAuth(endpoint=endpoint), timeout=timeout)
    return heat.Client("1", session=sess, endpoint_override=endpoint)


def test_converge_reads_the_cloud_after_answering(endpoint: str, tmp_path: Path) -> None:
    name = "slow-cloud"
    book = _stack(endpoint, tmp_path, name)
    _tamper(book)
    heat = _heat(endpoint, timeout=20)
    hold = book / "HOLD"
    hold.touch()   # every read of the cloud waits until it is gone
    try:
        # heatclient's PATCH with converge, as `openstack stack update --existing
        # --converge` sends it: answered while the reads still wait
        heat.stacks.update(name, existing=True, converge=True)
        assert heat.stacks.get(name).stack_status == "UPDATE_IN_PROGRESS"
        assert _values(book) == ["tampered"] * 5   # nothing read, nothing changed yet
    finally:
        with contextlib.suppress(FileNotFoundError):
            hold.unlink()
    assert wait_for_stack_status(heat, name, timeout=120).stack_status == "UPDATE_COMPLETE"
    assert _values(book) == WANTED
    ok(kiln_stack(endpoint, tmp_path, "delete", "--yes", "--wait", name))
