"""Identities, ARNs, links and the REST views built from engine dicts (Heat's shapes)."""

from __future__ import annotations

from kiln.api import identity as ident
from kiln.api import views

ROOT = "http://h:1/v1/"
SID = {"tenant": "demo", "stack_name": "s1", "stack_id": "id1", "path": ""}


def test_arn_round_trip_and_url_quoting() -> None:
    identity = ident.make_identity("demo", "s 1", "id1", "resources/r1")
    arn = ident.to_arn(identity)
    assert arn == "arn:openstack:heat::demo:stacks/s%201/id1/resources/r1"
    assert ident.from_arn(arn) == identity
    assert ident.url_path(identity) == "demo/stacks/s%201/id1/resources/r1"


def test_not_an_arn() -> None:
    for text in ("s1", "arn:aws:heat::demo:stacks/a/b", "arn:openstack:heat::demo:x/a/b",
                 "arn:openstack:heat::demo:stacks/a"):
        assert ident.from_arn(text) is None


def test_stack_view_from_engine_shape_joins_status_and_adds_links() -> None:
    stack = {"stack_identity": SID, "stack_name": "s1", "stack_action": "CREATE",
             "stack_status": "COMPLETE", "parameters": {"p": 1}}
    out = views.format_stack(ROOT, "demo", stack, include_project=True)
    assert out == {"id": "id1", "links": [{"href": ROOT + "demo/stacks/s1/id1",
                                           "rel": "self"}],
                   "project": "demo", "stack_name": "s1", "stack_status": "CREATE_COMPLETE",
                   "parameters": {"p": 1}}


def test_stack_view_from_rest_shape_keeps_joined_status() -> None:
    stack = {"id": "id1", "stack_name": "s1", "stack_status": "UPDATE_FAILED"}
    out = views.format_stack(ROOT, "demo", stack)
    assert out["stack_status"] == "UPDATE_FAILED"
    assert out["links"] == [{"href": ROOT + "demo/stacks/s1/id1", "rel": "self"}]


def test_summary_keys_drop_details() -> None:
    stack = {"stack_identity": SID, "stack_name": "s1", "parameters": {}, "outputs": []}
    assert "parameters" not in views.format_stack(ROOT, "demo", stack,
                                                  keys=views.STACK_SUMMARY_KEYS)


def test_resource_view_links_to_nested_and_owner_stack() -> None:
    nested = {"tenant": "demo", "stack_name": "s1-n-abc", "stack_id": "id2", "path": ""}
    res = {"resource_name": "n", "resource_action": "CREATE", "resource_status": "COMPLETE",
           "resource_identity": {**SID, "path": "/resources/n"}, "stack_identity": SID,
           "stack_name": "s1", "nested_stack_id": nested, "metadata": {"m": 1},
           "resource_type": "t.yaml"}
    out = views.format_resource(ROOT, SID, res)
    assert out == {
        "resource_name": "n", "logical_resource_id": "n", "resource_status": "CREATE_COMPLETE",
        "resource_type": "t.yaml",
        "links": [{"href": ROOT + "demo/stacks/s1/id1/resources/n", "rel": "self"},
                  {"href": ROOT + "demo/stacks/s1/id1", "rel": "stack"},
                  {"href": ROOT + "demo/stacks/s1-n-abc/id2", "rel": "nested"}]}


def test_event_view_summary_and_root_link() -> None:
    event = {"event_identity": {**SID, "path": "/resources/r/events/e1"},
             "stack_identity": SID, "stack_name": "s1", "event_time": "T",
             "resource_name": "r", "resource_action": "CREATE",
             "resource_status": "IN_PROGRESS", "resource_status_reason": "state changed",
             "physical_resource_id": "p", "resource_type": "OS::Heat::None",
             "root_stack_id": SID}
    out = views.format_event(ROOT, SID, event, detail=False)
    assert out == {
        "id": "e1", "event_time": "T", "resource_name": "r", "logical_resource_id": "r",
        "resource_status": "CREATE_IN_PROGRESS", "resource_status_reason": "state changed",
        "physical_resource_id": "p",
        "links": [{"href": ROOT + "demo/stacks/s1/id1/resources/r/events/e1", "rel": "self"},
                  {"href": ROOT + "demo/stacks/s1/id1/resources/r", "rel": "resource"},
                  {"href": ROOT + "demo/stacks/s1/id1", "rel": "stack"},
                  {"href": ROOT + "demo/stacks/s1/id1", "rel": "root_stack"}]}
    detail = views.format_event(ROOT, SID, event, detail=True)
    assert detail["resource_type"] == "OS::Heat::None"
