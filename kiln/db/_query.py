"""Shared query helpers: exact filters, Heat's list ordering and keyset (marker) pagination.

Ordering treats NULL as the smallest value on every backend (PostgreSQL would otherwise put
NULLs last when ascending while SQLite and MariaDB put them first), so a page boundary on a
NULL ``updated_at`` means the same thing everywhere.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import sqlalchemy as sa
from sqlalchemy.orm import InstrumentedAttribute

Column = InstrumentedAttribute[Any]


def exact_filters(stmt: sa.Select[Any], model: type[Any],
                  filters: Mapping[str, Any]) -> sa.Select[Any]:
    """A list/tuple/set value matches any of its members, anything else matches exactly."""
    for key, value in filters.items():
        col = getattr(model, key, None)
        if not isinstance(col, InstrumentedAttribute):
            raise ValueError(f"unknown filter column {key!r} on {model.__name__}")
        if isinstance(value, list | tuple | set | frozenset):
            stmt = stmt.where(col.in_(list(value)))
        elif value is None:
            stmt = stmt.where(col.is_(None))
        else:
            stmt = stmt.where(col == value)
    return stmt


def sort_order(requested: Sequence[str], sort_dir: str | None, columns: Mapping[str, Column],
               newest: Column, tiebreak: Column) -> tuple[list[Column], bool]:
    """Heat's list ordering: unknown keys are ignored; explicit keys ascend unless
    ``sort_dir`` is "desc"; with none, ``newest`` descends unless ``sort_dir`` is "asc".
    ``tiebreak`` (a unique column) goes last so pages never overlap or skip."""
    keys = [columns[k] for k in requested if k in columns]
    if keys:
        desc = sort_dir == "desc"
    else:
        keys = [newest]
        desc = sort_dir != "asc"
    keys.append(tiebreak)
    return keys, desc


def page(stmt: sa.Select[Any], keys: Sequence[Column], desc: bool, marker: Any,
         limit: int | None) -> sa.Select[Any]:
    """Order ``stmt`` by ``keys`` and keep the ``limit`` rows after the ``marker`` row (an
    ORM object, or None to start at the beginning)."""
    if marker is not None:
        stmt = after_marker(stmt, keys, [getattr(marker, k.key) for k in keys], desc)
    stmt = order_by(stmt, keys, desc)
    return stmt if limit is None else stmt.limit(limit)


def _null_rank(col: Column) -> sa.ColumnElement[int]:
    return sa.case((col.is_(None), 0), else_=1)


def order_by(stmt: sa.Select[Any], keys: Sequence[Column], desc: bool) -> sa.Select[Any]:
    for col in keys:
        if _nullable(col):
            rank = _null_rank(col)
            stmt = stmt.order_by(rank.desc() if desc else rank.asc())
        stmt = stmt.order_by(col.desc() if desc else col.asc())
    return stmt


def _nullable(col: Column) -> bool:
    return bool(getattr(col.property.columns[0], "nullable", True))


def after_marker(stmt: sa.Select[Any], keys: Sequence[Column], values: Sequence[Any],
                 desc: bool) -> sa.Select[Any]:
    """Rows strictly after the marker row (whose key values are ``values``) in the order
    that ``order_by(stmt, keys, desc)`` produces."""
    clauses: list[sa.ColumnElement[bool]] = []
    for i, (col, value) in enumerate(zip(keys, values, strict=True)):
        equal_before = [_equal(c, v) for c, v in zip(keys[:i], values[:i], strict=True)]
        beyond = _beyond(col, value, desc)
        if beyond is None:
            continue
        clauses.append(sa.and_(*equal_before, beyond))
    if not clauses:
        return stmt.where(sa.false())
    return stmt.where(sa.or_(*clauses))


def _equal(col: Column, value: Any) -> sa.ColumnElement[bool]:
    return col.is_(None) if value is None else col == value


def _beyond(col: Column, value: Any, desc: bool) -> sa.ColumnElement[bool] | None:
    if not desc:  # ascending, NULL first
        return col.is_not(None) if value is None else col > value
    if value is None:  # descending, NULL last: nothing comes after a NULL
        return None
    return sa.or_(col < value, col.is_(None)) if _nullable(col) else col < value
