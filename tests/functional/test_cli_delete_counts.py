"""A delete that ends before `kiln stack delete --wait` reads its first event still
counts every resource it deleted (it printed "0 resources done" when the stack was gone,
or already DELETE_COMPLETE, by the watch's first read: seen on MariaDB, where a small
delete is quick)."""

from __future__ import annotations

import pytest

from kiln.client.api import HeatAPI, NotFound
from kiln.client.progress import stderr_console, summary
from kiln.client.watch import ActionWatch, wait
from tests.functional.api.heat_target import wait_for
from tests.functional.test_cli_stack import endpoint, name

__all__ = ["endpoint", "name"]

THREE = {"heat_template_version": "2018-08-31",
         "resources": {k: {"type": "OS::Heat::None"} for k in ("a", "b", "c")}}


@pytest.mark.parametrize("stream", [True, False], ids=["stream", "polling"])
def test_a_delete_finished_before_the_first_read_counts_its_resources(
        endpoint: str, name: str, stream: bool, capsys: pytest.CaptureFixture[str]) -> None:
    api = HeatAPI(endpoint, lambda: {})
    try:
        watch = _deleted_then_watched(api, name, stream)
    finally:
        api.close()
    assert watch.succeeded
    assert watch.counts()["done"] == 3, watch.counts()
    summary(watch, stderr_console())
    assert "3 resources done" in capsys.readouterr().err


def _deleted_then_watched(api: HeatAPI, name: str, stream: bool) -> ActionWatch:
    created = api.create_stack({"stack_name": name, "template": THREE})
    ref = f"{name}/{created['id']}"
    wait_for(lambda: api.get_stack(ref)["stack_status"],
             lambda status: status == "CREATE_COMPLETE", "the create")
    # what `kiln stack delete --wait` reads before it deletes
    marker = ActionWatch.last_event_id(api, ref)
    expected = {str(r["resource_name"]) for r in api.resources(ref)}
    api.delete_stack(ref)

    def gone() -> bool:
        try:
            return api.get_stack(ref)["stack_status"] == "DELETE_COMPLETE"
        except NotFound:
            return True

    wait_for(gone, bool, "the delete")   # it ended before the watch's first read
    watch = ActionWatch(api, ref, name, str(created["id"]), "DELETE", marker=marker,
                        expected=expected, stream=stream)
    wait(watch)
    watch.close()
    return watch
