"""Raw templates read without their body.

A raw template row is never changed in place, so an engine that already holds the parsed
template for an id needs only the row's environment and files. Decoding the body again
would build a second copy of the whole template (about 5 MB for 10,000 resources) just to
throw it away.
"""

from __future__ import annotations

from typing import Any, cast

import sqlalchemy as sa
from sqlalchemy.orm import Session

from kiln import errors
from kiln.db.models import RawTemplate
from kiln.db.records import RawTemplateRecord
from kiln.db.stacks import decrypt_env

_TABLE = cast(sa.Table, RawTemplate.__table__)
_WITHOUT_BODY = sa.select(_TABLE.c.environment, _TABLE.c.files).where(
    _TABLE.c.id == sa.bindparam("template_id"))


def get_raw_template_without_body(s: Session, template_id: int) -> RawTemplateRecord:
    """:func:`kiln.db.stacks.get_raw_template` with an empty ``template``."""
    row = s.connection().execute(_WITHOUT_BODY, {"template_id": template_id}).first()
    if row is None:
        raise errors.EntityNotFound(f"The Raw Template ({template_id}) could not be found.")
    environment, files = cast(tuple[Any, Any], tuple(row))
    return RawTemplateRecord(id=template_id, template={},
                             environment=decrypt_env(environment or {}), files=files or {})
