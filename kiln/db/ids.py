"""Row uuids that sort in the order the rows are made (RFC 9562 version 7).

Resources and events are found by their ``uuid`` (Heat's event and resource ids), so the
column has a unique index. With random (version 4) uuids every insert, and every delete
of an old row, lands on a random page of that index: once a table outgrows SQLite's page
cache, each write batch dirties a page per row, each written again to the WAL at the
commit. A 100,000-resource stack then paid ~2.5x per inserted row what a 10,000-resource
one did (22 against 9 µs, bench/README.md, "100 x 1,000 and the uuid index"), and that
is what grew faster than the work. A uuid whose first 60 bits are the time it was made
goes to the right-hand edge of the index, as the integer primary key does: the pages a
batch touches are the last few, whatever the table's size.

The text is still a UUID (8-4-4-4-12 hex, RFC 4122 variant, version 7) with 62 random
bits, so ids stay unguessable and unique across processes; only their order changes.
"""

from __future__ import annotations

import os
import time

_VARIANT = 0x8000000000000000  # RFC 4122/9562 variant bits (10) over 62 random bits
_RANDOM = 0x3FFFFFFFFFFFFFFF


def ordered_uuid() -> str:
    """A version 7 uuid: Unix milliseconds (48 bits), the version, the fraction of the
    millisecond (12 bits, RFC 9562's method 3, so ids made within a millisecond keep
    their order too), the variant and 62 random bits."""
    ns = time.time_ns()
    ms, sub = divmod(ns, 1_000_000)
    rand = int.from_bytes(os.urandom(8), "big") & _RANDOM | _VARIANT
    h = f"{ms & 0xFFFFFFFFFFFF:012x}7{sub * 4096 // 1_000_000:03x}{rand:016x}"
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"
