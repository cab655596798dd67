"""Drift detections (kiln.db.drift): added, settled, read back newest first, the
stack's newest few kept, the newest complete whole-stack result per stack, removed with
the stack's purge."""

from __future__ import annotations

import datetime as dt
import uuid

from kiln.db import drift, stacks
from tests.unit.db.support import Tx, new_stack

ENTRY = {"resource_name": "net", "status": "MODIFIED", "expected": {"name": "a"},
         "actual": {"name": "b"},
         "differences": [{"path": "/name", "expected": "a", "actual": "b",
                          "type": "NOT_EQUAL"}]}


def test_detections_are_kept_settled_and_bounded(tx: Tx) -> None:
    st = new_stack(tx)
    ids = [str(uuid.uuid4()) for _ in range(4)]
    for detection_id in ids:
        with tx() as s:
            added = drift.add_detection(s, detection_id, st.id, scope="stack",
                                        status="DETECTION_IN_PROGRESS", keep=3)
            assert added["status"] == "DETECTION_IN_PROGRESS"
    with tx() as s:
        kept = [d["id"] for d in drift.list_detections(s, st.id)]
        assert kept == list(reversed(ids[1:]))  # newest first, the oldest gone
        assert drift.get_detection(s, ids[0]) is None
        assert drift.settle_detection(s, ids[3], status="DETECTION_COMPLETE",
                                      drift_status="DRIFTED", drifted_count=1,
                                      status_reason="", resources=[ENTRY])
        assert not drift.settle_detection(s, "missing", status="DETECTION_COMPLETE",
                                          drift_status=None, drifted_count=0,
                                          status_reason="", resources=None)
    with tx() as s:
        got = drift.get_detection(s, ids[3])
        assert got is not None and got["resources"] == [ENTRY]
        assert got["drifted_count"] == 1 and got["updated_at"] is not None
        complete = drift.list_detections(s, st.id, status="DETECTION_COMPLETE")
        assert [d["id"] for d in complete] == [ids[3]]
        latest = drift.latest_stack_status(s, [st.id, "other"], "DETECTION_COMPLETE")
        assert set(latest) == {st.id} and latest[st.id][0] == "DRIFTED"
        assert drift.latest_stack_status(s, [], "DETECTION_COMPLETE") == {}


def test_detections_go_with_their_stack(tx: Tx) -> None:
    st = new_stack(tx, name="gone")
    with tx() as s:
        drift.add_detection(s, str(uuid.uuid4()), st.id, scope="resource",
                            status="DETECTION_IN_PROGRESS", keep=10)
        stacks.soft_delete_stack(s, st.id)
    with tx() as s:
        assert stacks.purge_deleted_stacks(s, dt.timedelta(0)) == 1
        assert drift.list_detections(s, st.id) == []
