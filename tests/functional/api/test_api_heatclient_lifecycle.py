"""Longer stack lifecycles through heatclient: cancel an update, abandon then adopt."""

from __future__ import annotations

import json
import uuid
from typing import Any

from tests.functional.api.heat_target import settled, wait_for


def unique(prefix: str) -> str:
    return f"api_{prefix}_{uuid.uuid4().hex[:8]}"


def slow_template(value: str, update_wait: int) -> dict[str, Any]:
    return {"heat_template_version": "2018-08-31",
            "resources": {"t": {"type": "OS::Heat::TestResource", "properties": {
                "value": value, "action_wait_secs": {"update": update_wait}}}},
            "outputs": {"v": {"value": {"get_attr": ["t", "output"]}}}}


def test_cancel_update_rolls_back(hc: Any) -> None:
    name = unique("cancel")
    sid = hc.stacks.create(stack_name=name, template=slow_template("a", 0),
                           disable_rollback=False)["stack"]["id"]
    try:
        assert settled(hc, sid).stack_status == "CREATE_COMPLETE"
        hc.stacks.update(sid, template=slow_template("b", 15))
        wait_for(lambda: hc.stacks.get(sid).stack_status,
                 lambda s: s == "UPDATE_IN_PROGRESS", "the update to start")
        hc.actions.cancel_update(sid)
        final = wait_for(lambda: hc.stacks.get(sid),
                         lambda s: s.stack_status.startswith("ROLLBACK_")
                         and not s.stack_status.endswith("IN_PROGRESS"), "the rollback",
                         deadline=120)
        assert final.stack_status == "ROLLBACK_COMPLETE"
        assert hc.stacks.output_show(sid, "v")["output"]["output_value"] == "a"
    finally:
        hc.stacks.delete(sid)


def test_cancel_without_an_update_is_refused(hc: Any) -> None:
    import pytest
    from heatclient import exc as heat_exc

    name = unique("nocancel")
    sid = hc.stacks.create(stack_name=name, template=slow_template("a", 0))["stack"]["id"]
    try:
        settled(hc, sid)
        with pytest.raises(heat_exc.HTTPBadRequest) as info:
            hc.actions.cancel_update(sid)
        assert ("Cancelling update when stack is CREATE_COMPLETE is not supported."
                in str(info.value))
    finally:
        hc.stacks.delete(sid)


def test_abandon_then_adopt(hc: Any) -> None:
    """Heat 27 refuses abandon unless ``enable_stack_abandon`` is set; Kiln allows it. The
    abandon data's shape is Heat's (name, id, template, resources by name with type)."""
    name = unique("aband")
    tpl = {"heat_template_version": "2018-08-31",
           "resources": {"r": {"type": "OS::Heat::RandomString", "properties": {"length": 9}}},
           "outputs": {"v": {"value": {"get_attr": ["r", "value"]}}}}
    sid = hc.stacks.create(stack_name=name, template=tpl)["stack"]["id"]
    settled(hc, sid)
    value = hc.stacks.output_show(sid, "v")["output"]["output_value"]
    try:
        data = hc.stacks.abandon(sid)
    except Exception:
        hc.stacks.delete(sid)  # Heat with abandon disabled keeps the stack
        raise
    assert data["name"] == name
    assert data["id"] == sid
    assert data["resources"]["r"]["type"] == "OS::Heat::RandomString"
    wait_for(lambda: [s.id for s in hc.stacks.list()], lambda ids: sid not in ids,
             "the abandoned stack to leave the list")
    adopted = hc.stacks.create(stack_name=name + "_2", adopt_stack_data=json.dumps(data),
                               template=tpl)["stack"]["id"]
    try:
        final = settled(hc, adopted)
        assert final.stack_status == "ADOPT_COMPLETE"
        assert hc.stacks.output_show(adopted, "v")["output"]["output_value"] == value
    finally:
        hc.stacks.delete(adopted)
