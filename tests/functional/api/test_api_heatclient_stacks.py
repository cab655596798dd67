"""Stacks, outputs, resources, events, actions and snapshots through python-heatclient.

Expected values are Heat's observable behaviour (run with KILN_API_COMPARE_URL pointing at a
real Heat to check them there).
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from heatclient import exc as heat_exc

from tests.functional.api.heat_target import settled, wait_for
from tests.support.server import HTTP_TIMEOUT

NESTED = """heat_template_version: 2018-08-31
parameters:
  len: {type: number, default: 4}
resources:
  r: {type: OS::Heat::RandomString, properties: {length: {get_param: len}}}
outputs:
  val: {value: {get_attr: [r, value]}}
"""
TEMPLATE: dict[str, Any] = {
    "heat_template_version": "2018-08-31",
    "description": "api test",
    "parameters": {"p": {"type": "string", "default": "hello"},
                   "secret": {"type": "string", "hidden": True, "default": "s"}},
    "resources": {"v": {"type": "OS::Heat::Value",
                        "properties": {"value": {"get_param": "p"}}},
                  "r": {"type": "OS::Heat::RandomString", "properties": {"length": 4}}},
    "outputs": {"o": {"value": {"get_attr": ["v", "value"]}, "description": "out o"}},
}


def unique(prefix: str) -> str:
    return f"api_{prefix}_{uuid.uuid4().hex[:8]}"


@pytest.fixture(scope="module")
def stack(hc: Any) -> Iterator[Any]:
    name = unique("main")
    body = hc.stacks.create(stack_name=name, template=TEMPLATE, tags="t1,t2", timeout_mins=7,
                            files={"unused.yaml": NESTED})
    created = settled(hc, body["stack"]["id"])
    yield created
    hc.stacks.delete(created.id)


def test_create_returns_id_and_self_link(hc: Any, heat_endpoint: str) -> None:
    name = unique("create")
    body = hc.stacks.create(stack_name=name, template=TEMPLATE)
    try:
        sid = body["stack"]["id"]
        assert body["stack"]["links"] == [
            {"href": f"{heat_endpoint}/stacks/{name}/{sid}", "rel": "self"}]
    finally:
        settled(hc, sid)
        hc.stacks.delete(sid)


def test_create_answers_201_with_location(heat_endpoint: str, hc: Any) -> None:
    name = unique("loc")
    resp = httpx.post(heat_endpoint + "/stacks",
                      json={"stack_name": name, "template": {
                          "heat_template_version": "2018-08-31",
                          "resources": {"x": {"type": "OS::Heat::None"}}}}, timeout=HTTP_TIMEOUT)
    assert resp.status_code == 201
    sid = resp.json()["stack"]["id"]
    assert resp.headers["location"] == f"{heat_endpoint}/stacks/{name}/{sid}"
    settled(hc, sid)
    hc.stacks.delete(sid)


def test_duplicate_name_is_409(hc: Any, stack: Any) -> None:
    with pytest.raises(heat_exc.HTTPConflict) as info:
        hc.stacks.create(stack_name=stack.stack_name, template=TEMPLATE)
    assert f"The Stack ({stack.stack_name}) already exists." in str(info.value)


def test_show_by_name_redirects_to_the_full_stack(hc: Any, stack: Any, heat_endpoint: str
                                                  ) -> None:
    shown = hc.stacks.get(stack.stack_name)
    assert shown.id == stack.id
    assert shown.stack_status == "CREATE_COMPLETE"
    assert shown.stack_status_reason == "Stack CREATE completed successfully"
    assert shown.description == "api test"
    assert shown.tags == ["t1", "t2"]
    assert shown.timeout_mins == 7
    assert shown.disable_rollback is True
    params = shown.parameters
    assert params["p"] == "hello"
    assert params["secret"] == "******"
    assert params["OS::stack_name"] == stack.stack_name
    assert params["OS::stack_id"] == stack.id
    assert shown.outputs == [{"output_key": "o", "description": "out o",
                              "output_value": "hello"}]
    assert shown.links == [{"href": f"{heat_endpoint}/stacks/{stack.stack_name}/{stack.id}",
                            "rel": "self"}]


def test_show_without_resolving_outputs(hc: Any, stack: Any) -> None:
    shown = hc.stacks.get(stack.id, resolve_outputs=False)
    assert not hasattr(shown, "outputs")


def test_lookup_redirects_keep_subpath_and_query(heat_endpoint: str, stack: Any) -> None:
    canonical = f"{heat_endpoint}/stacks/{stack.stack_name}/{stack.id}"
    for path, expected in ((stack.stack_name, canonical),
                           (stack.id, canonical),
                           (f"{stack.stack_name}/resources?nested_depth=1",
                            canonical + "/resources?nested_depth=1"),
                           (f"{stack.stack_name}/events", canonical + "/events")):
        resp = httpx.get(f"{heat_endpoint}/stacks/{path}", follow_redirects=False,
                         timeout=HTTP_TIMEOUT)
        assert resp.status_code == 302, resp.text
        assert resp.headers["location"] == expected


def test_unknown_stack_is_404_entity_not_found(heat_endpoint: str) -> None:
    resp = httpx.get(heat_endpoint + "/stacks/api_nope_missing", timeout=HTTP_TIMEOUT)
    assert resp.status_code == 404
    assert resp.json()["error"] == {"type": "EntityNotFound", "traceback": None,
                                    "message": "The Stack (api_nope_missing) could not be "
                                               "found."}


def test_list_and_filters(hc: Any, stack: Any) -> None:
    listed = {s.id: s for s in hc.stacks.list()}
    assert stack.id in listed
    summary = listed[stack.id]
    assert summary.stack_name == stack.stack_name
    assert summary.stack_status == "CREATE_COMPLETE"
    assert not hasattr(summary, "parameters")
    named = list(hc.stacks.list(filters={"name": stack.stack_name}))
    assert [s.id for s in named] == [stack.id]
    assert list(hc.stacks.list(filters={"name": "api_nope_missing"})) == []
    tagged = [s.id for s in hc.stacks.list(tags="t1,t2")]
    assert stack.id in tagged
    assert stack.id not in [s.id for s in hc.stacks.list(not_tags="t1")]


def test_list_limit_gives_next_link(heat_endpoint: str, stack: Any) -> None:
    resp = httpx.get(heat_endpoint + "/stacks", params={"limit": 1}, timeout=HTTP_TIMEOUT)
    body = resp.json()
    assert len(body["stacks"]) == 1
    marker = body["stacks"][0]["id"]
    assert body["links"] == [{"rel": "next",
                              "href": f"{heat_endpoint}/stacks?limit=1&marker={marker}"}]
    counted = httpx.get(heat_endpoint + "/stacks", params={"with_count": "true"},
                        timeout=HTTP_TIMEOUT).json()
    assert counted["count"] == len(counted["stacks"])


def test_template_environment_files(hc: Any, stack: Any) -> None:
    assert hc.stacks.template(stack.id) == TEMPLATE
    env = hc.stacks.environment(stack.id)
    assert env["parameters"] == {}
    assert env["parameter_defaults"] == {}
    assert env["resource_registry"] == {"resources": {}}
    assert hc.stacks.files(stack.id) == {"unused.yaml": NESTED}


def test_outputs(hc: Any, stack: Any) -> None:
    assert hc.stacks.output_list(stack.id) == {
        "outputs": [{"output_key": "o", "description": "out o"}]}
    assert hc.stacks.output_show(stack.id, "o") == {
        "output": {"output_key": "o", "description": "out o", "output_value": "hello"}}


def test_resources(hc: Any, stack: Any, heat_endpoint: str) -> None:
    top = {r.resource_name: r for r in hc.resources.list(stack.id)}
    assert set(top) == {"v", "r"}
    v = top["v"]
    assert v.logical_resource_id == "v"
    assert v.resource_type == "OS::Heat::Value"
    assert v.resource_status == "CREATE_COMPLETE"
    base = f"{heat_endpoint}/stacks/{stack.stack_name}/{stack.id}"
    assert v.links == [{"href": base + "/resources/v", "rel": "self"},
                       {"href": base, "rel": "stack"}]
    only_v = hc.resources.list(stack.id, filters={"name": "v"})
    assert [r.resource_name for r in only_v] == ["v"]
    shown = hc.resources.get(stack.id, "v")
    assert shown.attributes == {"value": "hello"}
    assert shown.resource_name == "v"
    assert hc.resources.metadata(stack.id, "v") == {}
    with_attr = hc.resources.get(stack.id, "r", with_attr=["value"])
    assert len(with_attr.attributes["value"]) == 4


def test_resource_list_with_detail(hc: Any, stack: Any) -> None:
    detailed = {r.resource_name: r for r in hc.resources.list(stack.id, with_detail=True)}
    assert detailed["v"].attributes == {"value": "hello"}


def test_resource_type_filter(hc: Any, stack: Any) -> None:
    by_type = hc.resources.list(stack.id, filters={"type": "OS::Heat::RandomString"})
    assert [r.resource_name for r in by_type] == ["r"]


def test_nested_resources_and_links(hc: Any, heat_endpoint: str) -> None:
    name = unique("nest")
    tpl = {"heat_template_version": "2018-08-31",
           "resources": {"n": {"type": "nested.yaml"}}}
    sid = hc.stacks.create(stack_name=name, template=tpl,
                           files={"nested.yaml": NESTED})["stack"]["id"]
    try:
        assert settled(hc, sid).stack_status == "CREATE_COMPLETE"
        top = hc.resources.list(sid)
        assert [link["rel"] for link in top[0].links] == ["self", "stack", "nested"]
        nested = {r.resource_name: r for r in hc.resources.list(sid, nested_depth=1)}
        assert set(nested) == {"n", "r"}
        assert nested["r"].parent_resource == "n"
        nested_stack_url = nested["r"].links[1]["href"]
        assert nested_stack_url == top[0].links[2]["href"]
        assert nested_stack_url.startswith(f"{heat_endpoint}/stacks/{name}-n-")
        events = hc.events.list(sid, nested_depth=1)
        assert "r" in {e.resource_name for e in events}
        assert any(link["rel"] == "root_stack" for e in events for link in e.links)
    finally:
        hc.stacks.delete(sid)


def test_unknown_resource_is_404(hc: Any, stack: Any) -> None:
    with pytest.raises(heat_exc.HTTPNotFound) as info:
        hc.resources.get(stack.id, "nope")
    assert (f"The Resource (nope) could not be found in Stack {stack.stack_name}."
            in str(info.value))


def test_events(hc: Any, stack: Any) -> None:
    events = hc.events.list(stack.id)
    stack_events = [(e.resource_name, e.resource_status) for e in events
                    if e.resource_name == stack.stack_name]
    assert (stack.stack_name, "CREATE_IN_PROGRESS") in stack_events
    assert (stack.stack_name, "CREATE_COMPLETE") in stack_events
    v_events = hc.events.list(stack.id, resource_name="v")
    # newest first unless asked otherwise
    assert [e.resource_status for e in v_events] == ["CREATE_COMPLETE", "CREATE_IN_PROGRESS"]
    ascending = hc.events.list(stack.id, resource_name="v", sort_dir="asc")
    assert [e.id for e in ascending] == [e.id for e in reversed(v_events)]
    one = hc.events.get(stack.id, "v", v_events[0].id)
    assert one.resource_type == "OS::Heat::Value"
    assert one.resource_name == "v"
    limited = hc.events.list(stack.id, limit=2)
    assert len(limited) == 2


def test_unknown_event_is_404(hc: Any, stack: Any) -> None:
    with pytest.raises(heat_exc.HTTPNotFound):
        hc.events.get(stack.id, "v", str(uuid.uuid4()))


def test_patch_update_preview_and_apply(hc: Any) -> None:
    name = unique("upd")
    sid = hc.stacks.create(stack_name=name, template=TEMPLATE)["stack"]["id"]
    try:
        settled(hc, sid)
        changes = hc.stacks.preview_update(sid, existing=True, parameters={"p": "bye"})
        rc = changes["resource_changes"]
        assert [r["resource_name"] for r in rc["updated"]] == ["v"]
        assert [r["resource_name"] for r in rc["unchanged"]] == ["r"]
        assert (rc["updated"][0]["resource_action"],
                rc["updated"][0]["resource_status"]) == ("CREATE", "COMPLETE")
        assert rc["added"] == rc["deleted"] == rc["replaced"] == []
        hc.stacks.update(sid, existing=True, parameters={"p": "bye"})
        updated = wait_for(lambda: hc.stacks.get(sid),
                           lambda s: s.stack_status in ("UPDATE_COMPLETE", "UPDATE_FAILED"),
                           "update to finish")
        assert updated.stack_status == "UPDATE_COMPLETE"
        assert hc.stacks.output_show(sid, "o")["output"]["output_value"] == "bye"
        assert hc.stacks.template(sid) == TEMPLATE
    finally:
        hc.stacks.delete(sid)


def test_actions_check_suspend_resume(hc: Any) -> None:
    name = unique("act")
    tpl = {"heat_template_version": "2018-08-31",
           "resources": {"x": {"type": "OS::Heat::None"}}}
    sid = hc.stacks.create(stack_name=name, template=tpl)["stack"]["id"]
    try:
        settled(hc, sid)
        for action, status in ((hc.actions.check, "CHECK_COMPLETE"),
                               (hc.actions.suspend, "SUSPEND_COMPLETE"),
                               (hc.actions.resume, "RESUME_COMPLETE")):
            action(sid)
            assert settled(hc, sid).stack_status == status
    finally:
        hc.stacks.delete(sid)


def test_snapshots(hc: Any) -> None:
    name = unique("snap")
    tpl = {"heat_template_version": "2018-08-31",
           "resources": {"x": {"type": "OS::Heat::None"}}}
    sid = hc.stacks.create(stack_name=name, template=tpl)["stack"]["id"]
    try:
        settled(hc, sid)
        snap = hc.stacks.snapshot(sid, "s1")
        assert snap["name"] == "s1"
        done = wait_for(lambda: hc.stacks.snapshot_show(sid, snap["id"])["snapshot"],
                        lambda s: s["status"] != "IN_PROGRESS", "snapshot")
        assert done["status"] == "COMPLETE"
        assert [s["id"] for s in hc.stacks.snapshot_list(sid)["snapshots"]] == [snap["id"]]
        settled(hc, sid)
        hc.stacks.restore(sid, snap["id"])
        assert settled(hc, sid).stack_status == "RESTORE_COMPLETE"
        hc.stacks.snapshot_delete(sid, snap["id"])
        wait_for(lambda: hc.stacks.snapshot_list(sid)["snapshots"], lambda s: s == [],
                 "snapshot deletion")
    finally:
        hc.stacks.delete(sid)


def test_delete_then_gone(hc: Any) -> None:
    name = unique("del")
    tpl = {"heat_template_version": "2018-08-31",
           "resources": {"x": {"type": "OS::Heat::None"}}}
    sid = hc.stacks.create(stack_name=name, template=tpl)["stack"]["id"]
    settled(hc, sid)
    hc.stacks.delete(sid)

    def gone() -> bool:
        try:
            return bool(hc.stacks.get(sid).stack_status == "DELETE_COMPLETE")
        except heat_exc.HTTPNotFound:
            return True
    wait_for(gone, bool, "delete")
    assert sid not in [s.id for s in hc.stacks.list()]


def test_tenant_filter_keeps_the_callers_project_only(heat_endpoint: str, stack: Any) -> None:
    project = heat_endpoint.rsplit("/", 1)[1]
    mine = httpx.get(heat_endpoint + "/stacks", params={"tenant": project},
                     timeout=HTTP_TIMEOUT).json()["stacks"]
    assert stack.id in [s["id"] for s in mine]
    other = httpx.get(heat_endpoint + "/stacks", params={"tenant": "someone-else"},
                      timeout=HTTP_TIMEOUT).json()
    assert other["stacks"] == []


def test_preview_lists_the_resources_without_creating(hc: Any, heat_endpoint: str) -> None:
    name = unique("prev")
    tpl = {"heat_template_version": "2018-08-31",
           "resources": {"x": {"type": "OS::Heat::None"}}}
    preview = hc.stacks.preview(stack_name=name, template=tpl)
    assert preview.stack_name == name
    assert preview.id == "None"
    assert preview.links == [{"href": f"{heat_endpoint}/stacks/{name}/None", "rel": "self"}]
    assert [(r["resource_name"], r["resource_type"], r["resource_action"],
             r["resource_status"]) for r in preview.resources] == [
        ("x", "OS::Heat::None", "INIT", "COMPLETE")]
    assert name not in [s.stack_name for s in hc.stacks.list()]
