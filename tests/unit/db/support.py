"""Fixtures and helpers shared by the database tests.

The unit suite binds ``url`` to a fresh SQLite file; tests/integration/db binds it to a
fresh database on each backend and re-runs the same test modules.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import Any

import pytest
import sqlalchemy as sa
from sqlalchemy.orm import Session

from kiln.db import stacks
from kiln.db.engine import make_engine
from kiln.db.facade import Database
from kiln.db.migrate import ensure_schema
from kiln.db.records import NewStack, StackRecord

Tx = Callable[[], AbstractContextManager[Session]]
TEMPLATE = {"heat_template_version": "2018-08-31", "resources": {}}


@pytest.fixture
def engine(url: str) -> Iterator[sa.Engine]:
    eng = make_engine(url)
    ensure_schema(eng)
    yield eng
    eng.dispose()


@pytest.fixture
def tx(engine: sa.Engine) -> Tx:
    """``with tx() as s:`` — one committed transaction, like a repository caller."""
    @contextmanager
    def _tx() -> Iterator[Session]:
        with Session(engine, expire_on_commit=False) as s, s.begin():
            yield s
    return _tx


@pytest.fixture
async def db(engine: sa.Engine) -> AsyncIterator[Database]:
    database = Database(engine)
    yield database
    await database.close()


def new_stack(tx: Tx, name: str = "s1", project_id: str = "p1", **kw: Any) -> StackRecord:
    with tx() as s:
        return stacks.create_stack(s, NewStack(name=name, project_id=project_id,
                                               template=kw.pop("template", TEMPLATE), **kw))
