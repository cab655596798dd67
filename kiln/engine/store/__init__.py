"""The engine's one door to the database (:class:`~kiln.engine.store.store.Store` and
its rooms), and between a live stack and its rows: building one from them
(:mod:`.loader`), writing its transitions (:mod:`.recorder`), the parsed-template cache."""

from kiln.db.facade import Database, open_database
from kiln.db.signals import SignalWrite
from kiln.engine.store.store import DATABASE_ERRORS, Store, utcnow

__all__ = ["DATABASE_ERRORS", "Database", "SignalWrite", "Store", "open_database", "utcnow"]
