"""Engine behaviours that once differed from Heat 27 (issue 9), through heatclient on a real
``kiln serve``.

Every expected value was observed on a live Heat 27.0.1 (convergence engine) running the
same scenario; run with ``KILN_API_COMPARE_URL=http://127.0.0.1:<port>/v1/admin`` to check
them against Heat again. Where Heat's message is a leaked Python error, the test asserts
the shape (which key carries an error, the stack's state) and says what Heat wrote.
"""

from __future__ import annotations

import contextlib
import json
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from tests.functional.api.heat_target import COMPARE_URL, settled, wait_for

EXTERNAL = "11111111-2222-3333-4444-555555555555"


def unique(prefix: str) -> str:
    return f"parity_{prefix}_{uuid.uuid4().hex[:8]}"


def hot(resources: dict[str, Any], outputs: dict[str, Any] | None = None) -> dict[str, Any]:
    tpl: dict[str, Any] = {"heat_template_version": "2018-08-31", "resources": resources}
    if outputs:
        tpl["outputs"] = outputs
    return tpl


@pytest.fixture
def stacks(hc: Any) -> Iterator[list[str]]:
    """Stack ids a test made; deleted afterwards."""
    made: list[str] = []
    yield made
    for sid in made:
        with contextlib.suppress(Exception):  # already gone is fine
            hc.stacks.delete(sid)


def create(hc: Any, stacks: list[str], template: dict[str, Any], **kw: Any) -> str:
    sid = str(hc.stacks.create(stack_name=unique("s"), template=template, **kw)["stack"]["id"])
    stacks.append(sid)
    return sid


def outputs_by_key(hc: Any, sid: str) -> dict[str, dict[str, Any]]:
    return {o["output_key"]: o for o in hc.stacks.get(sid).outputs}


# -- 1. external resources ---------------------------------------------------------------

@pytest.mark.parametrize("rtype, check_reason", [
    ("OS::Heat::None", "CHECK not supported for OS::Heat::None"),
    ("OS::Heat::RandomString", "CHECK not supported for OS::Heat::RandomString"),
    ("OS::Heat::TestResource", "state changed"),
])
def test_external_resource_is_adopted_then_checked(hc: Any, stacks: list[str], rtype: str,
                                                   check_reason: str) -> None:
    """Heat 27: the resource is not created but adopted (ADOPT_IN_PROGRESS/COMPLETE) and
    checked (CHECK_COMPLETE, "CHECK not supported for <type>" where the plugin has no
    check); list and show give CHECK_COMPLETE with the external id as physical id."""
    sid = create(hc, stacks, hot({"r": {"type": rtype, "external_id": EXTERNAL}}))
    stack = settled(hc, sid)
    assert stack.stack_status == "CREATE_COMPLETE", stack.stack_status_reason
    shown = hc.resources.get(sid, "r")
    assert (shown.resource_status, shown.physical_resource_id,
            shown.resource_status_reason) == ("CHECK_COMPLETE", EXTERNAL, check_reason)
    assert [(r.resource_name, r.resource_status, r.physical_resource_id)
            for r in hc.resources.list(sid)] == [("r", "CHECK_COMPLETE", EXTERNAL)]
    states = [e.resource_status for e in reversed(hc.events.list(sid, resource_name="r"))]
    assert states[:2] == ["ADOPT_IN_PROGRESS", "ADOPT_COMPLETE"]
    assert states[-1] == "CHECK_COMPLETE"
    assert "CREATE_IN_PROGRESS" not in states


def assert_external_id_update_refused(hc: Any, sid: str, rtype: str,
                                      resource_kept: tuple[str, str]) -> None:
    """The update fails with Heat's NotSupported; ``r`` keeps (status, physical id)."""
    stack = settled(hc, sid)
    assert (stack.stack_status, stack.stack_status_reason) == (
        "UPDATE_FAILED", "Resource UPDATE failed: NotSupported: resources.r: Update to "
        f"property external_id of r ({rtype}) is not supported.")
    shown = hc.resources.get(sid, "r")
    assert (shown.resource_status, shown.physical_resource_id) == resource_kept


def test_external_resource_update_and_delete(hc: Any, stacks: list[str]) -> None:
    """Heat 27: a property change of an external resource completes without touching it;
    dropping its external_id fails the update ("Resource UPDATE failed: NotSupported:
    resources.r: Update to property external_id of r (OS::Heat::Value) is not
    supported.") and the resource keeps CHECK_COMPLETE; the stack then deletes."""
    def tpl(value: str, external: bool) -> dict[str, Any]:
        res: dict[str, Any] = {"type": "OS::Heat::Value", "properties": {"value": value}}
        if external:
            res["external_id"] = EXTERNAL
        return hot({"r": res})

    sid = create(hc, stacks, tpl("v", True))
    assert settled(hc, sid).stack_status == "CREATE_COMPLETE"
    hc.stacks.update(sid, template=tpl("w", True))
    assert settled(hc, sid).stack_status == "UPDATE_COMPLETE"
    assert hc.resources.get(sid, "r").resource_status == "CHECK_COMPLETE"
    hc.stacks.update(sid, template=tpl("w", False))
    assert_external_id_update_refused(hc, sid, "OS::Heat::Value",
                                      ("CHECK_COMPLETE", EXTERNAL))
    hc.stacks.delete(sid)
    wait_for(lambda: [s.id for s in hc.stacks.list()], lambda ids: sid not in ids,
             "the stack to be deleted")


def test_adopting_an_external_id_by_update_is_refused(hc: Any, stacks: list[str]) -> None:
    """Heat 27: adding external_id to a created resource fails the update with the same
    NotSupported and leaves the resource as it was (CREATE_COMPLETE, its own id)."""
    sid = create(hc, stacks, hot({"r": {"type": "OS::Heat::None"}}))
    assert settled(hc, sid).stack_status == "CREATE_COMPLETE"
    before = hc.resources.get(sid, "r").physical_resource_id
    hc.stacks.update(sid, template=hot({"r": {"type": "OS::Heat::None",
                                              "external_id": EXTERNAL}}))
    assert_external_id_update_refused(hc, sid, "OS::Heat::None", ("CREATE_COMPLETE", before))


# -- 2. a pre-update hook on a resource the update leaves unchanged ------------------------

def test_pre_update_hook_pauses_an_unchanged_resource(hc: Any, stacks: list[str]) -> None:
    """Heat 27: with the same template and a pre-update hook on ``a``, the update stops at
    ``a`` (event "UPDATE paused until Hook pre-update is cleared", the resource still
    CREATE_COMPLETE) with the stack UPDATE_IN_PROGRESS, and completes once the hook is
    cleared by a signal ("Hook pre-update is cleared")."""
    tpl = hot({"a": {"type": "OS::Heat::None"},
               "b": {"type": "OS::Heat::Value", "properties": {"value": "x"}}})
    sid = create(hc, stacks, tpl)
    assert settled(hc, sid).stack_status == "CREATE_COMPLETE"
    hc.stacks.update(sid, template=tpl, environment={
        "resource_registry": {"resources": {"a": {"hooks": "pre-update"}}}})
    paused = "UPDATE paused until Hook pre-update is cleared"
    events = wait_for(lambda: hc.events.list(sid, resource_name="a"),
                      lambda evs: any(e.resource_status_reason == paused for e in evs),
                      "the hook to pause a")
    event = next(e for e in events if e.resource_status_reason == paused)
    assert event.resource_status == "CREATE_COMPLETE"
    assert hc.stacks.get(sid).stack_status == "UPDATE_IN_PROGRESS"
    hc.resources.signal(sid, "a", data={"unset_hook": "pre-update"})
    assert settled(hc, sid).stack_status == "UPDATE_COMPLETE"
    reasons = [e.resource_status_reason for e in hc.events.list(sid, resource_name="a")]
    assert "Hook pre-update is cleared" in reasons


# -- 5. a nested output that fails --------------------------------------------------------

def test_failed_nested_output_surfaces_in_the_parent(hc: Any, stacks: list[str]) -> None:
    """Heat 27: the parent's output reading a failed child output has ``output_error``
    "Error in n output bad: <the child's output_error>" and a null value; the stack stays
    CREATE_COMPLETE, the other outputs resolve, and resource show gives the attribute as
    null. (Heat's child error here is a leaked "'list' object has no attribute 'split'";
    Kiln's names the function.)"""
    child = hot({"v": {"type": "OS::Heat::Value", "properties": {"value": [1]}}},
                {"bad": {"value": {"str_split": [",", {"get_attr": ["v", "value"]}]}},
                 "good": {"value": "g"}})
    tpl = hot({"n": {"type": "child.yaml"}},
              {"pbad": {"value": {"get_attr": ["n", "bad"]}},
               "pgood": {"value": {"get_attr": ["n", "good"]}}})
    sid = create(hc, stacks, tpl, files={"child.yaml": json.dumps(child)})
    assert settled(hc, sid).stack_status == "CREATE_COMPLETE"
    child_id = hc.resources.get(sid, "n").physical_resource_id
    child_error = outputs_by_key(hc, child_id)["bad"]["output_error"]
    outs = outputs_by_key(hc, sid)
    assert outs["pbad"]["output_value"] is None
    assert outs["pbad"]["output_error"] == f"Error in n output bad: {child_error}"
    assert outs["pgood"] == {"output_key": "pgood", "description": "No description given",
                             "output_value": "g"}
    attributes = hc.resources.get(sid, "n").attributes
    assert attributes["bad"] is None and attributes["good"] == "g"


def test_provider_resource_members_by_resource_dot_name(hc: Any, stacks: list[str]) -> None:
    """Heat 27: ``get_attr: [p, "resource.<name>.<attr>", ...]`` on a provider-template
    resource reads that resource of the child stack (``[p, "resource.v", "value"]`` too;
    ``resource.v`` alone is its reference); an unknown member and an unknown attribute
    are the output's errors, in Heat's words. Another resource may read it, and an update
    of the child shows the new value."""
    def child(value: Any) -> str:
        return json.dumps(hot({"v": {"type": "OS::Heat::Value",
                                     "properties": {"value": value}}}))

    def tpl() -> dict[str, Any]:
        return hot({"p": {"type": "child.yaml"},
                    "copy": {"type": "OS::Heat::Value", "properties": {
                        "value": {"get_attr": ["p", "resource.v.value", "a"]}}}},
                   {"o1": {"value": {"get_attr": ["p", "resource.v", "value"]}},
                    "o2": {"value": {"get_attr": ["p", "resource.v.value", "a", 1]}},
                    "o3": {"value": {"get_attr": ["p", "resource.nope.value"]}},
                    "o4": {"value": {"get_attr": ["p", "resource.v.nope"]}},
                    "o5": {"value": {"get_attr": ["p", "resource.v"]}},
                    "o6": {"value": {"get_attr": ["copy", "value"]}}})

    sid = create(hc, stacks, tpl(), files={"child.yaml": child({"a": [1, 2]})})
    assert settled(hc, sid).stack_status == "CREATE_COMPLETE"
    outs = outputs_by_key(hc, sid)
    assert outs["o1"]["output_value"] == {"a": [1, 2]}
    assert outs["o2"]["output_value"] == 2
    assert outs["o3"]["output_error"] == "Member 'nope' not found in group resource 'p'."
    assert outs["o4"]["output_error"] == (
        "The Referenced Attribute (p resource.v.nope) is incorrect.")
    child_id = hc.resources.get(sid, "p").physical_resource_id
    assert outs["o5"]["output_value"] == hc.resources.get(child_id, "v").physical_resource_id
    assert outs["o6"]["output_value"] == [1, 2]
    hc.stacks.update(sid, template=tpl(), files={"child.yaml": child({"a": [3, 4]})})
    updated = wait_for(lambda: hc.stacks.get(sid), lambda s: s.stack_status in (
        "UPDATE_COMPLETE", "UPDATE_FAILED"), "the update to end")
    assert updated.stack_status == "UPDATE_COMPLETE", updated.stack_status_reason
    outs = outputs_by_key(hc, sid)
    assert (outs["o2"]["output_value"], outs["o6"]["output_value"]) == (4, [3, 4])


# -- 6. max_resources_per_stack counts each stack's own resources -------------------------

def test_group_of_the_limit_under_a_top_level_stack_is_accepted(hc: Any,
                                                                stacks: list[str]) -> None:
    """Heat 27 (default max_resources_per_stack 1,000) creates the child of a top-level
    ResourceGroup of 1,000 members: a stack's own template is what is counted, not the
    tree (the group itself plus its 1,000 members would be 1,001)."""
    sid = create(hc, stacks, hot({"g": {"type": "OS::Heat::ResourceGroup", "properties": {
        "count": 1000, "resource_def": {"type": "OS::Heat::None"}}}}))
    if COMPARE_URL:  # Heat needs many minutes for 1,000 members: its child's start is proof
        wait_for(lambda: hc.resources.get(sid, "g"), lambda r: r.physical_resource_id,
                 "Heat to create the group's child")
        return
    stack = settled(hc, sid)
    assert stack.stack_status == "CREATE_COMPLETE", stack.stack_status_reason
    child = hc.resources.get(sid, "g").physical_resource_id
    assert len(hc.resources.list(child)) == 1000


# -- 7. resource_facade in a top-level stack ----------------------------------------------

def test_resource_facade_in_a_top_level_output(hc: Any, stacks: list[str]) -> None:
    """Heat 27: the stack is CREATE_COMPLETE; the output using resource_facade has a null
    value and an ``output_error`` (Heat's is the leaked "'NoneType' object has no attribute
    'metadata_get'"), and the other outputs resolve."""
    sid = create(hc, stacks, hot({"r": {"type": "OS::Heat::None"}},
                                 {"f": {"value": {"resource_facade": "metadata"}},
                                  "ok": {"value": "fine"}}))
    assert settled(hc, sid).stack_status == "CREATE_COMPLETE"
    outs = outputs_by_key(hc, sid)
    assert outs["f"]["output_value"] is None
    assert outs["f"]["output_error"]
    assert outs["ok"]["output_value"] == "fine"
    shown = hc.stacks.output_show(sid, "f")["output"]
    assert shown["output_error"] == outs["f"]["output_error"]


# -- 3. preview of nested stacks -----------------------------------------------------------

def test_preview_lists_each_child_stack_as_a_nested_list(hc: Any) -> None:
    """Heat 27: in ``stack preview``, a provider-template resource and a ResourceGroup are
    each replaced by the list of their child stack's resources (INIT_COMPLETE, the child's
    stack_name ``<stack>-<resource>``, its id "None" as the top stack's, the parent
    resource named), in no fixed order. No preview entry has a ``logical_resource_id``;
    attributes are resolved where the plugin can (a Value shows its value)."""
    child = hot({"c": {"type": "OS::Heat::None"}})
    tpl = hot({"p": {"type": "child.yaml"},
               "g": {"type": "OS::Heat::ResourceGroup", "properties": {
                   "count": 2, "resource_def": {"type": "OS::Heat::None"}}},
               "plain": {"type": "OS::Heat::None"}})
    name = unique("pv")
    body = hc.stacks.preview(stack_name=name, template=tpl,
                             files={"child.yaml": json.dumps(child)}).to_dict()
    entries = body["resources"]
    nested = sorted(sorted((r["resource_name"], r["resource_type"], r["stack_name"])
                           for r in e) for e in entries if isinstance(e, list))
    assert nested == [[("0", "OS::Heat::None", f"{name}-g"),
                       ("1", "OS::Heat::None", f"{name}-g")],
                      [("c", "OS::Heat::None", f"{name}-p")]]
    flat = [e for e in entries if not isinstance(e, list)]
    assert [(e["resource_name"], e["resource_action"], e["resource_status"])
            for e in flat] == [("plain", "INIT", "COMPLETE")]
    children = [r for e in entries if isinstance(e, list) for r in e]
    assert {(r["resource_name"], r["parent_resource"]) for r in children} == {
        ("0", "g"), ("1", "g"), ("c", "p")}
    assert {r["stack_identity"]["stack_id"] for r in children} == {"None"}
    assert "parent_resource" not in flat[0]
    assert not any("logical_resource_id" in r for r in [*children, *flat])
    valued = hc.stacks.preview(stack_name=unique("pv"), template=hot({"p": {
        "type": "child.yaml"}}), files={"child.yaml": json.dumps(hot({"v": {
            "type": "OS::Heat::Value", "properties": {"value": 7}}}))}).to_dict()
    (inner,), = valued["resources"]
    assert inner["attributes"] == {"value": 7}


# -- 4. OS::Heat::Stack with a context ------------------------------------------------------

REMOTE_CHILD = json.dumps(hot({"a": {"type": "OS::Heat::None"}}))


@pytest.mark.parametrize("properties, message", [
    ({"context": {"region_name": "Nowhere"}, "template": REMOTE_CHILD},
     'Cannot establish connection to Heat endpoint at region "Nowhere" due to "public '
     'endpoint for orchestration service in Nowhere region not found"'),
    ({"context": {"credential_secret_id": "abc"}, "template": REMOTE_CHILD},
     'Cannot establish connection to Heat endpoint at remote cloud due to "public '
     'endpoint for key-manager service not found"'),
    ({"context": {"region_name": "RegionOne"},
      "template": json.dumps(hot({"a": {"type": "No::Such"}}))},
     'Failed validating stack template using Heat endpoint at region "RegionOne" due to '
     '"ERROR: The Resource Type (No::Such) could not be found."'),
    ({"template": "a: ["},
     'Failed validating stack template using Heat endpoint at region "None" due to '
     '"Error parsing template [root stack] while parsing a flow node\nexpected the node '
     "content, but found '<stream end>'\n  in \"<unicode string>\", line 1, column 5:\n"
     '    a: [\n        ^"'),
], ids=["unknown-region", "remote-credentials", "invalid-template", "unparsable-template"])
def test_remote_stack_problems_are_a_400_at_create_and_preview(
        hc: Any, properties: dict[str, Any], message: str) -> None:
    """Heat 27 checks an OS::Heat::Stack's endpoint and template when the stack is
    validated: create and preview answer 400 StackValidationFailed with these words, and
    nothing is stored; POST /validate does not look (200)."""
    from heatclient import exc

    tpl = hot({"s": {"type": "OS::Heat::Stack", "properties": properties}})
    for call in (hc.stacks.create, hc.stacks.preview):
        with pytest.raises(exc.HTTPBadRequest) as err:
            call(stack_name=unique("rs"), template=tpl)
        assert message in str(err.value)
        assert err.value.error["error"]["type"] == "StackValidationFailed"
    assert "Parameters" in hc.stacks.validate(template=tpl)
