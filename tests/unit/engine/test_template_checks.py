"""Function-argument checks at the moments Heat 27 makes them, through EngineService.

The template cases and the first answers (POST /stacks' 400 message or null, POST
/validate's 400 message or null) are live Heat 27's, recorded in
tests/unit/template/heat27_check_timing.json. Where Heat accepted the create, the state
the stack then reached was observed on the same live Heat 27.0.1
(``HEAT_FINAL_STATUS``): it completes a stack whose OS::Heat::None has malformed
functions in its properties, since it neither validates nor resolves them.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from sqlalchemy.orm import Session

from kiln.db import models
from kiln.engine.service import EngineService, RequestContext
from kiln.errors import KilnError
from tests.unit.engine.support import create, hot, resources

CASES: dict[str, dict[str, Any]] = json.loads(
    (Path(__file__).parents[1] / "template" / "heat27_check_timing.json").read_text())

#: the stack status live Heat 27 showed once the create it accepted had finished
HEAT_FINAL_STATUS = {
    "cfn_base64_int@off_props": "CREATE_COMPLETE",
    "if_true_branch_makeurl@none_props": "CREATE_COMPLETE",
    "make_url_notmap@none_props": "CREATE_COMPLETE",
    "yaql_bad_expr@none_props": "CREATE_COMPLETE",
    "get_param_missing@none_props": "CREATE_COMPLETE",
    "cfn_ref_missing@none_props": "CREATE_COMPLETE",
    "none_getattr_badattr@none_props": "CREATE_COMPLETE",
    "list_join_delim_int@none_props": "CREATE_COMPLETE",
}

#: Heat 27 rejects these at create with the recorded 400
REJECTED_AT_CREATE = [
    "make_url_notmap@en_meta",        # a validated resource's malformed function
    "yaql_bad_expr@en_meta",
    "get_attr_bad_attr@out_en",       # an output naming an attribute the plugin lacks
    "get_attr_bad_attr@en_meta",
]

#: Heat's text for OS::Heat::None b and a requiring each other (its order of entries
#: follows a hash-seeded set; Kiln keeps the template's)
CYCLE = hot({"b": {"type": "OS::Heat::None", "properties": {"x": {"get_resource": "a"}}},
             "a": {"type": "OS::Heat::None", "properties": {"x": {"get_resource": "b"}}}})
CYCLE_MESSAGE = ('Circular Dependency Found: {NoneResource "b": {NoneResource "a"}, '
                 'NoneResource "a": {NoneResource "b"}}')


def stack_name(case: dict[str, Any]) -> str:
    return str(case.get("stack_name", "checks"))


async def failure(coro: Any) -> tuple[int, str]:
    with pytest.raises(KilnError) as info:
        await coro
    return info.value.http_status, info.value.message


def test_the_sample_is_what_heat_answered() -> None:
    # the sample's premises, read from the recording: accepted vs rejected at create
    assert all(CASES[n]["create"] is None for n in HEAT_FINAL_STATUS)
    assert all(CASES[n]["create"] is not None for n in REJECTED_AT_CREATE)
    # POST /validate rejects a None's malformed properties that a create accepts
    assert CASES["make_url_notmap@none_props"]["validate"] is not None


@pytest.mark.parametrize("name", sorted(HEAT_FINAL_STATUS))
async def test_creates_what_heat_creates(service: EngineService, ctx: RequestContext,
                                         name: str) -> None:
    case = CASES[name]
    shown = await create(service, ctx, stack_name(case), case["template"])
    assert shown["stack_status"] == HEAT_FINAL_STATUS[name], shown["stack_status_reason"]


@pytest.mark.parametrize("name", REJECTED_AT_CREATE)
async def test_rejects_at_create_what_heat_rejects(service: EngineService,
                                                   ctx: RequestContext, name: str) -> None:
    case = CASES[name]
    status, message = await failure(service.create_stack(
        ctx, stack_name(case), case["template"], {}, {}, {}))
    assert (status, message) == (400, case["create"])
    assert await service.list_stacks(ctx) == []  # nothing was stored


@pytest.mark.parametrize("name", sorted({*HEAT_FINAL_STATUS, *REJECTED_AT_CREATE}))
async def test_validate_answers_as_heat(service: EngineService, ctx: RequestContext,
                                        name: str) -> None:
    case = CASES[name]
    if case["validate"] is None:
        await service.validate_template(ctx, case["template"], {})
    else:
        assert await failure(service.validate_template(ctx, case["template"], {})) == \
            (400, case["validate"])


async def test_a_none_keeps_no_properties_but_resolves_its_metadata(
        service: EngineService, ctx: RequestContext) -> None:
    # Heat stores nothing for a None's properties; its metadata is resolved as any
    # resource's (the parameter's default appears in it)
    template = hot({"r": {"type": "OS::Heat::None",
                          "properties": {"x": {"get_param": "missing"}},
                          "metadata": {"m": {"get_param": "p"}}}},
                   parameters={"p": {"type": "string", "default": "v"}})
    shown = await create(service, ctx, "none", template)
    assert shown["stack_status"] == "CREATE_COMPLETE", shown["stack_status_reason"]
    ident = {"stack_name": "none", "stack_id": shown["id"]}
    meta = await service.describe_stack_resource(ctx, ident, "r")
    assert meta.get("metadata") == {"m": "v"}


async def test_cycle_is_worded_as_heat_by_create(service: EngineService,
                                                 ctx: RequestContext) -> None:
    assert await failure(service.create_stack(ctx, "cycle", CYCLE, {}, {}, {})) == \
        (400, CYCLE_MESSAGE)


async def test_cycle_is_worded_as_heat_by_validate(service: EngineService,
                                                   ctx: RequestContext) -> None:
    assert await failure(service.validate_template(ctx, CYCLE, {})) == \
        (400, CYCLE_MESSAGE)


# -- stored stacks whose template the template layer now rejects -------------------------

#: accepted when stored; now the template layer rejects the unknown condition name in
#: the ``if`` of a resource whose condition is false (Heat parses every resource)
STRICTER = hot({"keep": {"type": "OS::Heat::RandomString",
                         "deletion_policy": "Retain"},
                "gone": {"type": "OS::Heat::RandomString", "condition": "never",
                         "properties": {"length": {"if": ["no_such_condition", 8, 9]}}}},
               conditions={"never": False})


async def _stored_with_stricter_template(service: EngineService, ctx: RequestContext,
                                         sqlite_url: str) -> tuple[EngineService, Any]:
    """A stack created from a valid template whose stored template is then replaced by
    STRICTER (as if it had been stored before the check existed); returns a fresh
    service on the same database (nothing parsed is cached) and the stack identity."""
    ok = hot({"keep": {"type": "OS::Heat::RandomString", "deletion_policy": "Retain"},
              "other": {"type": "OS::Heat::RandomString"}})
    shown = await create(service, ctx, "old", ok)
    assert shown["stack_status"] == "CREATE_COMPLETE"
    with pytest.raises(KilnError):  # the premise: this template no longer loads
        await service.validate_template(ctx, STRICTER, {})
    await service.stop()
    engine = sa.create_engine(sqlite_url)
    with Session(engine) as session, session.begin():
        stack = session.get(models.Stack, shown["id"])
        assert stack is not None
        raw = session.get(models.RawTemplate, stack.raw_template_id)
        assert raw is not None
        raw.template = STRICTER
    engine.dispose()
    fresh = EngineService(db_url=sqlite_url)
    await fresh.start()
    return fresh, {"stack_name": "old", "stack_id": shown["id"]}


async def test_a_stack_whose_stored_template_no_longer_loads_can_be_deleted(
        service: EngineService, ctx: RequestContext, sqlite_url: str) -> None:
    fresh, ident = await _stored_with_stricter_template(service, ctx, sqlite_url)
    try:
        assert set(await resources(fresh, ctx, ident)) == {"keep", "other"}
        await fresh.delete_stack(ctx, ident)
        await fresh.wait_for_stack(ident["stack_id"])
        shown = await fresh.show_stack(ctx, ident)
        shown = shown[0] if isinstance(shown, list) else shown
        assert shown["stack_status"] == "DELETE_COMPLETE", shown["stack_status_reason"]
        assert await fresh.list_stacks(ctx) == []
    finally:
        await fresh.stop()


async def test_a_stack_whose_stored_template_no_longer_loads_can_be_abandoned(
        service: EngineService, ctx: RequestContext, sqlite_url: str) -> None:
    fresh, ident = await _stored_with_stricter_template(service, ctx, sqlite_url)
    try:
        data = await fresh.abandon_stack(ctx, ident)
        assert set(data["resources"]) == {"keep", "other"}
        await fresh.wait_for_stack(ident["stack_id"])
        assert await fresh.list_stacks(ctx) == []
    finally:
        await fresh.stop()


# -- update: the new template is checked as a create's ------------------------------------
# (answers of live Heat 27.0.1 to PUT /stacks/{name}/{id} from a stack of one
# OS::Heat::RandomString ``other``)

BASE = hot({"other": {"type": "OS::Heat::RandomString"}})


async def test_update_rejects_an_output_naming_a_wrong_attribute(
        service: EngineService, ctx: RequestContext) -> None:
    shown = await create(service, ctx, "upd", BASE)
    ident = {"stack_name": "upd", "stack_id": shown["id"]}
    new = hot({"other": {"type": "OS::Heat::RandomString"}},
              outputs={"o": {"value": {"get_attr": ["other", "nope"]}}})
    assert await failure(service.update_stack(ctx, ident, new, {}, {}, {})) == (
        400, "outputs.o.value.get_attr: The Referenced Attribute (other nope) is incorrect.")


async def test_update_adds_a_none_with_malformed_properties(
        service: EngineService, ctx: RequestContext) -> None:
    shown = await create(service, ctx, "upd", BASE)
    ident = {"stack_name": "upd", "stack_id": shown["id"]}
    new = hot({"other": {"type": "OS::Heat::RandomString"},
               "r": {"type": "OS::Heat::None",
                     "properties": {"x": {"make_url": "x"},
                                    "y": {"get_param": "missing"}}}})
    await service.update_stack(ctx, ident, new, {}, {}, {})
    await service.wait_for_stack(shown["id"])
    after = await service.show_stack(ctx, ident)
    after = after[0] if isinstance(after, list) else after
    assert after["stack_status"] == "UPDATE_COMPLETE", after["stack_status_reason"]
    assert await resources(service, ctx, ident) == {"other": "CREATE_COMPLETE",
                                                    "r": "CREATE_COMPLETE"}
