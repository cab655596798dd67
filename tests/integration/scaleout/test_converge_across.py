"""An update with Heat's ``converge`` flag across processes: the flag is stored with the
update (the stack's ``converge`` column, migration 0011), so a ``kiln api`` process that
runs no action admits it and hands it to an engine through the database like any other
update, and an engine that takes it over from an engine killed mid-update converges too.
python-heatclient's PATCH, as `openstack stack update --existing --converge` sends it,
over the real broker and database (SQLite, PostgreSQL and MariaDB); the plugin of
tests/functional/test_converge_nested.py (loaded by every process through
``plugin_dirs``) stands in for a cloud whose object was changed behind Kiln's back."""

from __future__ import annotations

import signal
from collections.abc import Callable
from pathlib import Path

from tests.functional.test_converge_nested import LEDGER_PLUGIN, _heat
from tests.integration.scaleout.conftest import Cluster, wait_for
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

#: the ledger plugin, which also leaves a ``reading-<pid>`` file beside the book when a
#: process starts reading the cloud (then waits while ``HOLD`` is in the book)
READING_PLUGIN = LEDGER_PLUGIN.replace(
    '        hold = os.path.join(self.properties["book"], "HOLD")\n',
    '        hold = os.path.join(self.properties["book"], "HOLD")\n'
    '        reading = os.path.join(os.path.dirname(self.properties["book"]),\n'
    '                               "reading-%d" % os.getpid())\n'
    '        open(reading, "w").close()\n')


def _setup(cluster: Cluster, tmp_path: Path) -> Path:
    assert READING_PLUGIN != LEDGER_PLUGIN
    plugins = tmp_path / "plugins"
    plugins.mkdir()
    (plugins / "ledger.py").write_text(READING_PLUGIN)
    book = tmp_path / "book"
    book.mkdir()
    cluster.extra = {"DEFAULT": {"plugin_dirs": str(plugins)}}
    return book


def _readers(tmp_path: Path) -> set[str]:
    return {p.name.removeprefix("reading-") for p in tmp_path.glob("reading-*")}


def test_converge_sent_to_an_api_process_runs_on_an_engine(
        db_url: str, cluster_factory: Callable[[str], Cluster], tmp_path: Path) -> None:
    cluster = cluster_factory(db_url)
    book = _setup(cluster, tmp_path)
    engine = cluster.engine()
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
    assert _readers(tmp_path) == {str(engine.proc.pid)}   # read by the engine


def test_an_engine_killed_mid_converge_has_it_taken_over_with_the_flag(
        db_url: str, cluster_factory: Callable[[str], Cluster], tmp_path: Path) -> None:
    """The first engine dies while it reads the cloud; the engine that takes the update
    over reads it again and puts the drifted value back (before the flag was stored, it
    finished the update without converge and left the value drifted)."""
    cluster = cluster_factory(db_url)
    book = _setup(cluster, tmp_path)
    first = cluster.engine()
    api = cluster.api()
    heat = _heat(api.endpoint("demo"), timeout=60)
    heat.stacks.create(stack_name="ledger", template=TEMPLATE,
                       parameters={"book": str(book)})
    assert wait_for_stack_status(heat, "ledger").stack_status == "CREATE_COMPLETE"
    (entry,) = book.iterdir()
    entry.write_text("tampered")   # behind Kiln's back
    hold = book / "HOLD"
    hold.touch()

    heat.stacks.update("ledger", existing=True, converge=True)
    wait_for(lambda: str(first.proc.pid) in _readers(tmp_path), 30,
             "the first engine to read the cloud")
    first.stop(signal.SIGKILL)
    hold.unlink()
    second = cluster.engine()
    stack = wait_for_stack_status(heat, "ledger")
    assert stack.stack_status == "UPDATE_COMPLETE", stack.stack_status_reason
    assert str(second.proc.pid) in _readers(tmp_path)
    assert entry.read_text() == "kept"
