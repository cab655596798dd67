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


def test_a_queued_detection_is_claimed_once_until_its_claim_lapses(tx: Tx) -> None:
    """Durable work (kiln.engine.service.drift_work): a whole-stack detection nobody
    runs is claimed by one process; renewed, it stays that process's; a claim not
    renewed for the lease is taken over; a settled one or a one-resource one never."""
    st = new_stack(tx, name="claimed")
    queued, single = str(uuid.uuid4()), str(uuid.uuid4())
    with tx() as s:
        drift.add_detection(s, queued, st.id, scope="stack",
                            status="DETECTION_IN_PROGRESS", keep=10)
        drift.add_detection(s, single, st.id, scope="resource",
                            status="DETECTION_IN_PROGRESS", keep=10)
    claim = {"status": "DETECTION_IN_PROGRESS", "lease": 60.0}
    with tx() as s:
        assert drift.claimable_detections(s, **claim) == [queued]
        assert drift.claimable_detections(s, **claim, stack_id="other") == []
        assert drift.claim_detection(s, queued, **claim)
        assert not drift.claim_detection(s, queued, **claim)  # taken
        assert not drift.claim_detection(s, single, **claim)
        assert drift.claimable_detections(s, **claim) == []
        drift.renew_detections(s, [queued], status="DETECTION_IN_PROGRESS")
    with tx() as s:
        # a lease shorter than the claim's age: its process stopped, take it over
        stale = {"status": "DETECTION_IN_PROGRESS", "lease": -1.0}
        assert drift.claimable_detections(s, **stale, stack_id=st.id) == [queued]
        assert drift.claim_detection(s, queued, **stale)
        drift.settle_detection(s, queued, status="DETECTION_COMPLETE", drift_status="IN_SYNC",
                               drifted_count=0, status_reason="", resources=[])
    with tx() as s:
        assert not drift.claim_detection(s, queued, status="DETECTION_IN_PROGRESS",
                                         lease=-1.0)
