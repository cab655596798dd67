"""yaql's LALR parser tables, computed once and shipped, instead of at each server's first
yaql expression.

Building a yaql parser (``YaqlFactory().create``) is almost all ply computing the LALR
tables of yaql's grammar: ~60 ms of CPU on a quiet machine, ~0.17 s on a loaded one,
paid by the first stack using yaql after every start (issue 26: a third of a 100-link
yaql chain's create). yaql's vendored ply no longer writes or reads ``parsetab`` files,
so this module does it: :func:`create` builds the parser as yaql does, but when the
grammar yaql hands to ply is the one the shipped tables were computed from (same
productions, precedences and start symbol, compared by a SHA-256 fingerprint) ply's
table builder is given the shipped action and goto tables; with any other grammar (a
newer yaql) ply computes them as usual. The tables are data, not code: a state number
per terminal and non-terminal.

Regenerate after upgrading yaql (a unit test fails while they are stale)::

    python -m kiln.template.yaql_tables --write
"""

from __future__ import annotations

import collections.abc  # noqa: F401  (yaql 3 uses collections.abc without importing it)
import hashlib
import json
import sys
import threading
from functools import lru_cache
from pathlib import Path
from typing import Any

#: The shipped tables, next to this module (package data).
TABLES_PATH = Path(__file__).with_name("yaql_tables.json")

#: ply's LRTable is swapped while a parser is built: one build at a time.
_build_lock = threading.Lock()


def fingerprint(grammar: Any) -> str:
    """What ply's tables follow from: the productions in order with their precedence,
    the declared precedences and the start symbol."""
    described = {"productions": [[str(p), list(p.prec)] for p in grammar.Productions],
                 "precedence": sorted([k, list(v)] for k, v in grammar.Precedence.items()),
                 "start": grammar.Start}
    return hashlib.sha256(json.dumps(described, sort_keys=True).encode()).hexdigest()


@lru_cache(maxsize=1)
def shipped() -> dict[str, Any] | None:
    """The shipped tables (``fingerprint``, ``action``, ``goto``), or None if unreadable."""
    try:
        loaded: dict[str, Any] = json.loads(TABLES_PATH.read_text())
    except (OSError, ValueError):
        return None
    return loaded


def _tables_for(grammar: Any) -> tuple[dict[int, Any], dict[int, Any]] | None:
    tables = shipped()
    if tables is None or tables.get("fingerprint") != fingerprint(grammar):
        return None
    return ({int(k): v for k, v in tables["action"].items()},
            {int(k): v for k, v in tables["goto"].items()})


def _cached_table_class(original: type) -> type:
    class CachedLRTable(original):  # type: ignore[misc]
        """ply's LRTable, given the shipped tables when the grammar is theirs."""

        def __init__(self, grammar: Any, log: Any = None) -> None:
            tables = _tables_for(grammar)
            if tables is None:
                super().__init__(grammar, log)
                return
            self.grammar = grammar
            self.log = log
            self.lr_action, self.lr_goto = tables
            self.lr_productions = grammar.Productions
            self.sr_conflicts: list[Any] = []
            self.rr_conflicts: list[Any] = []
            self.conflicts: list[Any] = []

    return CachedLRTable


def create(options: dict[str, Any]) -> Any:
    """``yaql.YaqlFactory().create(options)``, with the shipped tables when they fit."""
    with _build_lock:  # importing yaql too: a warming thread may be doing it
        import yaql
        from yaql._ply import yacc

        original = yacc.LRTable
        yacc.LRTable = _cached_table_class(original)
        try:
            return yaql.YaqlFactory().create(options)
        finally:
            yacc.LRTable = original


def compute() -> dict[str, Any]:
    """The tables of the installed yaql's grammar, computed by ply."""
    import yaql
    from yaql._ply import yacc

    seen: dict[str, Any] = {}

    class Recording(yacc.LRTable):  # type: ignore[misc]
        def __init__(self, grammar: Any, log: Any = None) -> None:
            super().__init__(grammar, log)
            seen.update(fingerprint=fingerprint(grammar),
                        action={str(k): v for k, v in sorted(self.lr_action.items())},
                        goto={str(k): v for k, v in sorted(self.lr_goto.items())})

    with _build_lock:
        original = yacc.LRTable
        yacc.LRTable = Recording
        try:
            yaql.YaqlFactory().create({})
        finally:
            yacc.LRTable = original
    return {"yaql": yaql.__version__, **seen}


def main(argv: list[str] | None = None) -> int:
    """``--write`` regenerates the shipped file; without it, exits 1 if it is stale."""
    args = sys.argv[1:] if argv is None else argv
    tables = compute()
    if "--write" in args:
        TABLES_PATH.write_text(json.dumps(tables, separators=(",", ":")) + "\n")
        return 0
    current = shipped()
    fresh = current is not None and all(current.get(k) == tables[k]
                                        for k in ("fingerprint", "action", "goto"))
    print("up to date" if fresh else f"stale: run python -m {__spec__.name} --write")
    return 0 if fresh else 1


if __name__ == "__main__":
    raise SystemExit(main())
