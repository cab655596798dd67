"""An update with Heat's ``converge`` flag sent to a ``kiln api`` process that runs no
action: the flag reaches the update only in memory (nothing an engine resumes a handed-off
update from stores it), so the API hands the whole request to an engine, which reads the
cloud inside the update it runs. python-heatclient's PATCH, as `openstack stack update
--existing --converge` sends it, over the real broker and database; the plugin of
tests/functional/test_converge_nested.py (loaded by both processes through
``plugin_dirs``) stands in for a cloud whose object was changed behind Kiln's back."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from tests.functional.test_converge_nested import LEDGER_PLUGIN, _heat
from tests.integration.scaleout.conftest import Cluster
from tests.support.clients import wait_for_stack_status

TEMPLATE = """\
heat_template_version: 2018-08-31
parameters:
  book: {type: string}
resources:
  entry:
    type: Acme::Ledger
    properties: {book: {get_param: book}, value: kept}
"""


def test_converge_sent_to_an_api_process_runs_on_an_engine(
        db_url: str, cluster_factory: Callable[[str], Cluster], tmp_path: Path) -> None:
    plugins = tmp_path / "plugins"
    plugins.mkdir()
    (plugins / "ledger.py").write_text(LEDGER_PLUGIN)
    book = tmp_path / "book"
    book.mkdir()
    cluster = cluster_factory(db_url)
    cluster.extra = {"DEFAULT": {"plugin_dirs": str(plugins)}}
    cluster.engine()
    api = cluster.api()
    heat = _heat(api.endpoint("demo"), timeout=60)
    heat.stacks.create(stack_name="ledger", template=TEMPLATE,
                       parameters={"book": str(book)})
    assert wait_for_stack_status(heat, "ledger").stack_status == "CREATE_COMPLETE"
    (entry,) = book.iterdir()
    entry.write_text("tampered")   # behind Kiln's back

    heat.stacks.update("ledger", existing=True, converge=True)
    assert wait_for_stack_status(heat, "ledger").stack_status == "UPDATE_COMPLETE"
    assert entry.read_text() == "kept"
