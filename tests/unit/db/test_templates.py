"""Raw templates read without their body (the engine holds the parsed template)."""

from __future__ import annotations

import pytest

from kiln import errors
from kiln.db import stacks, templates
from tests.unit.db.support import Tx, new_stack


def test_environment_and_files_without_the_body(tx: Tx) -> None:
    env = {"parameters": {"password": "s3cret-value", "flavor": "m1.small"},
           "resource_registry": {"My::T": "t.yaml"}}
    files = {"t.yaml": "heat_template_version: 2018-08-31"}
    st = new_stack(tx, "raw", environment=env, files=files, hidden_params=["password"])
    with tx() as s:
        full = stacks.get_raw_template(s, st.raw_template_id)
        bare = templates.get_raw_template_without_body(s, st.raw_template_id)
    assert bare.id == st.raw_template_id
    assert bare.template == {}
    assert bare.environment == full.environment
    assert bare.environment["parameters"]["password"] == "s3cret-value"
    assert bare.files == files


def test_missing_raw_template_is_not_found(tx: Tx) -> None:
    with tx() as s, pytest.raises(errors.EntityNotFound):
        templates.get_raw_template_without_body(s, 987654)
