"""EngineService: the one interface the APIs call (docs/contracts.md §5).

The signatures and their documentation are in :mod:`kiln.engine.interface`; the
implementations live in small mixins, one concern each (:mod:`kiln.engine.reads`,
:mod:`kiln.engine.stack_ops`, ...).
"""

from __future__ import annotations

from kiln.engine.adopt import AdoptOps
from kiln.engine.catalog import CatalogOps
from kiln.engine.interface import EngineServiceAPI, Identity
from kiln.engine.reads import Reads
from kiln.engine.recovery import RecoveryOps
from kiln.engine.signals import SignalOps
from kiln.engine.snapshots import SnapshotOps
from kiln.engine.software import SoftwareOps
from kiln.engine.stack_ops import StackOps


class EngineService(CatalogOps, RecoveryOps, SnapshotOps, AdoptOps, SignalOps, SoftwareOps,
                    StackOps, Reads):
    """The engine behind the API: construct, ``await start()``, call, ``await stop()``.

    ``EngineService(conf=None, *, db=None, db_url=None, engine_id=None)``: ``db`` is an
    open :class:`kiln.db.facade.Database`; otherwise one is opened on ``db_url`` (default
    ``[database] connection`` or the SQLite file under ``state_path``).
    """


__all__ = ["EngineService", "EngineServiceAPI", "Identity"]
