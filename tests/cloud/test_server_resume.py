"""Kiln SIGKILLed between the steps of a multi-step server update, in the real Nova.

A new flavor and a new image make one update of two steps: resize (then confirm), then
rebuild. Each request Kiln sends moves the resource's token on, and the engine persists
every new token (issue 23: the plugin changed its token in place and only the first was
persisted, so a resumed update started again from step 0). Here Kiln is killed once the
token says the rebuild was sent; the Kiln started after it takes the update over and
finishes it from there: Nova records one resize and one rebuild, never a second.

The kill lands between two checks deterministically: the first Kiln waits
``POLL_DELAY`` seconds between checks, and the test kills it as soon as the database
shows the rebuild's token, so the next check (which would finish the update) is still
that far away. The wait for the token is a condition polled against a deadline.
"""

from __future__ import annotations

import signal
import time
import uuid
from pathlib import Path
from typing import Any

import sqlalchemy as sa

from kiln.db.models import Resource
from tests.cloud.conftest import cloud_options
from tests.cloud.helpers import delete_and_wait, physical_ids, settled
from tests.support.clients import heat_client
from tests.support.cloud import Cloud
from tests.support.server import KilnProcess, merge_sections, start_kiln

#: seconds the first Kiln waits between two checks of the update: the time it leaves
#: the test to kill it after a step's token is persisted (detected within 0.1 s)
POLL_DELAY = 8.0
TAKEOVER = {
    "DEFAULT": {"periodic_interval": 1},
    "kiln_engine": {"heartbeat_interval": 0.15, "engine_dead_after": 0.8},
}


def template(flavor: str, image: str) -> dict[str, Any]:
    return {
        "heat_template_version": "2018-08-31",
        "resources": {
            "server": {
                "type": "OS::Nova::Server",
                "properties": {
                    "flavor": flavor,
                    "image": image,
                    "networks": [{"network": "public"}],
                    "user_data_format": "RAW",
                },
            }
        },
    }


def start(workdir: Path, cloud: Cloud, poll: dict[str, float]) -> KilnProcess:
    options = merge_sections(cloud_options(cloud), TAKEOVER, {"kiln_engine": poll})
    return start_kiln(workdir, options=options)


def progress(workdir: Path, stack_id: str) -> tuple[str | None, Any]:
    """The server's (action in progress, token) as the engine last persisted them."""
    db = sa.create_engine(
        f"sqlite:///{workdir / 'state' / 'kiln.sqlite'}", poolclass=sa.pool.NullPool
    )
    try:
        with db.connect() as conn:
            row = conn.execute(
                sa.select(Resource.progress_action, Resource.progress).where(
                    Resource.stack_id == stack_id,
                    Resource.name == "server",
                    Resource.replaced_by.is_(None),
                )
            ).first()
    finally:
        db.dispose()
    return (None, None) if row is None else (row[0], row[1])


def wait_for_token(
    workdir: Path, stack_id: str, wanted: dict[str, Any], deadline: float = 240.0
) -> Any:
    """The persisted token once it has every item of *wanted*."""
    end = time.monotonic() + deadline
    while True:
        action, token = progress(workdir, stack_id)
        if (
            action == "UPDATE"
            and isinstance(token, dict)
            and all(token.get(k) == v for k, v in wanted.items())
        ):
            return token
        assert time.monotonic() < end, (
            f"no persisted token with {wanted} within {deadline}s (last: {action} {token}):"
            " a crash now would resume the update from an earlier step"
        )
        time.sleep(0.1)  # reading another process's database, bounded by the deadline


def test_a_server_update_killed_between_steps_resumes_from_the_persisted_step(
    cloud: Cloud, sdk: Any, tmp_path: Path
) -> None:
    image = sdk.image.find_image("cirros-kiln")
    workdir = tmp_path / "kiln"
    first = start(workdir, cloud, {"poll_initial_delay": POLL_DELAY, "poll_max_delay": POLL_DELAY})
    heat = heat_client(first.endpoint("demo"))
    name = f"resume-{uuid.uuid4().hex[:8]}"
    second: KilnProcess | None = None
    stack_id = ""
    try:
        heat.stacks.create(stack_name=name, template=template("m1.tiny", "cirros-kiln"))
        stack_id = settled(heat, name, "CREATE_COMPLETE", timeout=300).id
        server_id = physical_ids(heat, stack_id)["server"]
        # the same image by its ID: a changed property, so a rebuild step after the resize
        heat.stacks.update(stack_id, template=template("m1.small", image.id))
        token = wait_for_token(workdir, stack_id, {"at": 1, "started": True})
        assert [s["do"] for s in token["steps"]] == ["resize", "rebuild"]
        first.proc.send_signal(signal.SIGKILL)
        first.proc.wait()
        first.stop()
        # killed between the steps: the update is still in progress, at the rebuild
        assert progress(workdir, stack_id)[0] == "UPDATE"

        second = start(workdir, cloud, {"poll_initial_delay": 0.2, "poll_max_delay": 1.0})
        heat = heat_client(second.endpoint("demo"))
        settled(heat, stack_id, "UPDATE_COMPLETE", timeout=300)
        actions = [a.action for a in sdk.compute.server_actions(server_id)]
        assert actions.count("resize") == 1, actions
        assert actions.count("rebuild") == 1, actions
        server = sdk.compute.get_server(server_id)
        assert (server.status, server.flavor.original_name) == ("ACTIVE", "m1.small")
    finally:
        live = second if second is not None else first
        if stack_id and live.proc.poll() is None:
            delete_and_wait(heat_client(live.endpoint("demo")), stack_id, timeout=300)
        for proc in (first, second):
            if proc is not None:
                proc.stop()
