"""Resource data a plugin declares secret is encrypted in the database (Heat's redacted
resource data), and still reads back as the value everywhere a user may see it."""

from __future__ import annotations

import sqlalchemy as sa

from kiln.db import crypt
from kiln.engine.service import EngineService, RequestContext
from tests.unit.engine.support import create, hot


def _rows(url: str) -> dict[str, tuple[str, bool]]:
    engine = sa.create_engine(url)
    try:
        with engine.connect() as conn:
            rows = conn.execute(sa.text(
                "SELECT r.name, d.key, d.value, d.redact FROM resource_data d "
                "JOIN resource r ON r.id = d.resource_id")).all()
    finally:
        engine.dispose()
    return {f"{name}.{key}": (value, bool(redact)) for name, key, value, redact in rows}


async def test_random_string_value_is_encrypted_at_rest(
        service: EngineService, ctx: RequestContext, sqlite_url: str) -> None:
    stack = await create(service, ctx, "secret", hot(
        {"pw": {"type": "OS::Heat::RandomString", "properties": {"length": 24}},
         "tr": {"type": "OS::Heat::TestResource", "properties": {"value": "plain"}}},
        outputs={"pw": {"value": {"get_attr": ["pw", "value"]}}}))
    assert stack["stack_status"] == "CREATE_COMPLETE", stack["stack_status_reason"]
    password = stack["outputs"][0]["output_value"]
    assert len(password) == 24
    rows = _rows(sqlite_url)
    stored, redact = rows["pw.value"]
    assert redact and password not in stored and stored != password
    assert crypt.decrypt(stored) == password
    # TestResource declares its value secret (it is often a hidden parameter's)
    stored, redact = rows["tr.value"]
    assert redact and crypt.decrypt(stored) == "plain"
    # the engine reads it back decrypted (a later stack read resolves the same output)
    again = await service.show_stack(ctx, stack["stack_identity"])
    assert again["outputs"][0]["output_value"] == password
