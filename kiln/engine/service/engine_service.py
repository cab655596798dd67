"""EngineService: the one interface the APIs call (docs/contracts.md §5).

The signatures and their documentation are in :mod:`kiln.engine.service.interface`; the
implementations live in small mixins, one concern each (:mod:`kiln.engine.service.reads`,
:mod:`kiln.engine.service.stack_changes`, ...).
"""

from __future__ import annotations

from kiln.engine.service.adopt import AdoptOps
from kiln.engine.service.agent_reads import AgentReads
from kiln.engine.service.catalog import CatalogOps
from kiln.engine.service.drift import DriftOps
from kiln.engine.service.history import HistoryOps
from kiln.engine.service.keypairs import KeypairOps
from kiln.engine.service.reads import Reads
from kiln.engine.service.recovery import RecoveryOps
from kiln.engine.service.signals import SignalOps
from kiln.engine.service.snapshots import SnapshotOps
from kiln.engine.service.software import SoftwareOps
from kiln.engine.service.stack_changes import StackOps
from kiln.engine.service.stack_users import StackUserOps
from kiln.engine.service.tempurls import TempUrlOps


class EngineService(DriftOps, CatalogOps, RecoveryOps, SnapshotOps, AdoptOps, SignalOps,
                    SoftwareOps, TempUrlOps, StackUserOps, KeypairOps, AgentReads, HistoryOps,
                    StackOps, Reads):
    """The engine behind the API: construct, ``await start()``, call, ``await stop()``.

    ``EngineService(conf=None, *, db=None, db_url=None, engine_id=None)``: ``db`` is an
    open :class:`kiln.db.facade.Database`; otherwise one is opened on ``db_url`` (default
    ``[database] connection`` or the SQLite file under ``state_path``).
    """
