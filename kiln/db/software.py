"""Software configs (immutable scripts/config documents) and deployments (a config applied
to one server, looked up by the server's agent through ``server_id``)."""

from __future__ import annotations

import uuid as uuidlib
from typing import Any

import sqlalchemy as sa
from sqlalchemy.orm import Session

from kiln import errors
from kiln.db import _query
from kiln.db.models import SoftwareConfig, SoftwareDeployment, utcnow
from kiln.db.records import (
    SoftwareConfigRecord,
    SoftwareDeploymentRecord,
    SoftwareDeploymentValues,
)

_CFG_FIELDS = [c.key for c in SoftwareConfig.__table__.columns]
_DEP_FIELDS = [c.key for c in SoftwareDeployment.__table__.columns]


def _cfg(row: SoftwareConfig) -> SoftwareConfigRecord:
    return SoftwareConfigRecord(**{k: getattr(row, k) for k in _CFG_FIELDS})


def _dep(row: SoftwareDeployment) -> SoftwareDeploymentRecord:
    return SoftwareDeploymentRecord(**{k: getattr(row, k) for k in _DEP_FIELDS})


def create_software_config(s: Session, project_id: str, *, name: str | None,
                           group: str | None, config: Any,
                           id: str | None = None) -> SoftwareConfigRecord:
    row = SoftwareConfig(id=id or str(uuidlib.uuid4()), project_id=project_id, name=name,
                         group=group, config=config, created_at=utcnow())
    s.add(row)
    s.flush()
    return _cfg(row)


def get_software_config(s: Session, config_id: str) -> SoftwareConfigRecord | None:
    row = s.get(SoftwareConfig, config_id)
    return None if row is None else _cfg(row)


def list_software_configs(s: Session, project_id: str | None, *, limit: int | None = None,
                          marker: str | None = None) -> list[SoftwareConfigRecord]:
    """Newest first, as Heat lists them; ``project_id=None`` lists every project's."""
    keys = [SoftwareConfig.created_at, SoftwareConfig.id]
    stmt = sa.select(SoftwareConfig)
    if project_id is not None:
        stmt = stmt.where(SoftwareConfig.project_id == project_id)
    m = s.get(SoftwareConfig, marker) if marker else None
    stmt = _query.page(stmt, keys, True, m, limit)
    return [_cfg(r) for r in s.execute(stmt).scalars()]


def delete_software_config(s: Session, config_id: str) -> bool:
    """Refuses (Heat's InvalidRestrictedAction, a 409 there) while a deployment uses it."""
    used = s.execute(sa.select(SoftwareDeployment.id)
                     .where(SoftwareDeployment.config_id == config_id).limit(1)).first()
    if used is not None:
        raise errors.Conflict(f"Software config with id {config_id} can not be deleted as "
                              "it is referenced.")
    result = s.execute(sa.delete(SoftwareConfig).where(SoftwareConfig.id == config_id))
    return bool(result.rowcount)  # type: ignore[attr-defined]


def create_software_deployment(s: Session, project_id: str, *, config_id: str,
                               server_id: str, action: str, status: str,
                               status_reason: str = "", input_values: Any = None,
                               output_values: Any = None,
                               stack_user_project_id: str | None = None,
                               id: str | None = None) -> SoftwareDeploymentRecord:
    if s.get(SoftwareConfig, config_id) is None:
        raise errors.EntityNotFound(f"Software config with id {config_id} not found")
    row = SoftwareDeployment(id=id or str(uuidlib.uuid4()), project_id=project_id,
                             config_id=config_id, server_id=server_id,
                             input_values=input_values, output_values=output_values,
                             stack_user_project_id=stack_user_project_id, action=action,
                             status=status, status_reason=status_reason,
                             created_at=utcnow())
    s.add(row)
    s.flush()
    return _dep(row)


def get_software_deployment(s: Session, deployment_id: str) -> SoftwareDeploymentRecord | None:
    row = s.get(SoftwareDeployment, deployment_id)
    return None if row is None else _dep(row)


def list_software_deployments(s: Session, project_id: str | None, *,
                              server_id: str | None = None) -> list[SoftwareDeploymentRecord]:
    """Oldest first; a project sees its own and those of its stack-user project."""
    stmt = sa.select(SoftwareDeployment)
    if project_id is not None:
        stmt = stmt.where(sa.or_(SoftwareDeployment.project_id == project_id,
                                 SoftwareDeployment.stack_user_project_id == project_id))
    if server_id is not None:
        stmt = stmt.where(SoftwareDeployment.server_id == server_id)
    stmt = stmt.order_by(SoftwareDeployment.created_at, SoftwareDeployment.id)
    return [_dep(r) for r in s.execute(stmt).scalars()]


def update_software_deployment(s: Session, deployment_id: str,
                               values: SoftwareDeploymentValues
                               ) -> SoftwareDeploymentRecord | None:
    if "config_id" in values and s.get(SoftwareConfig, values["config_id"]) is None:
        raise errors.EntityNotFound(f"Software config with id {values['config_id']} not found")
    result = s.execute(sa.update(SoftwareDeployment)
                       .where(SoftwareDeployment.id == deployment_id)
                       .values(**values, updated_at=utcnow()))
    if not result.rowcount:  # type: ignore[attr-defined]
        return None
    row = s.execute(sa.select(SoftwareDeployment).where(SoftwareDeployment.id == deployment_id)
                    .execution_options(populate_existing=True)).scalar_one()
    return _dep(row)


def delete_software_deployment(s: Session, deployment_id: str) -> bool:
    result = s.execute(sa.delete(SoftwareDeployment)
                       .where(SoftwareDeployment.id == deployment_id))
    return bool(result.rowcount)  # type: ignore[attr-defined]
