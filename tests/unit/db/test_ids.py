"""Resource and event uuids sort in the order their rows were made (kiln.db.ids): their
unique index then takes each write batch at its right-hand edge, not a random page per
row (what made a 100,000-resource stack cost more per resource than a 10,000 one)."""

from __future__ import annotations

import uuid

from kiln.db import events, resources
from kiln.db.ids import ordered_uuid
from kiln.db.records import NewEvent, NewResource
from tests.unit.db.support import Tx, new_stack


def test_an_ordered_uuid_is_an_rfc_uuid_of_version_7() -> None:
    made = [ordered_uuid() for _ in range(2000)]
    for text in made[:50]:
        parsed = uuid.UUID(text)
        assert str(parsed) == text
        assert parsed.version == 7
        assert parsed.variant == uuid.RFC_4122
    assert len(set(made)) == len(made)
    assert made == sorted(made)


def test_the_random_part_differs_within_one_millisecond() -> None:
    a, b = ordered_uuid(), ordered_uuid()
    assert a[19:] != b[19:]  # 62 random bits after the time: never guessable from it


def test_resource_rows_get_uuids_in_insertion_order(tx: Tx) -> None:
    st = new_stack(tx)
    with tx() as s:
        made = resources.insert_resources(s, [NewResource(st.id, st.id, f"r{i:03d}", "T")
                                              for i in range(300)])
    by_id = [u for _, u, _ in sorted(made.values())]
    assert by_id == sorted(by_id)
    with tx() as s:
        (one,) = resources.create_resources(s, [NewResource(st.id, st.id, "last", "T")])
    assert one.uuid > by_id[-1]


def test_event_rows_get_uuids_in_insertion_order(tx: Tx) -> None:
    st = new_stack(tx)
    uuids: list[str] = []
    for batch in range(3):
        with tx() as s:
            uuids += events.add_events(s, [NewEvent(st.id, f"r{batch}-{i}", "T", "CREATE",
                                                    "COMPLETE") for i in range(100)])
    assert uuids == sorted(uuids)
    assert len(set(uuids)) == 300
