"""A resumable token is never changed in place (issue 23): a check that moves a
multi-step action on hands a new token on (``Resource.checkpoint``/``next_token``),
and the unit harness gives checks their token exactly as the engine does, so a plugin
that changes its token in place fails here instead of re-sending a step after a crash."""

from __future__ import annotations

from typing import Any

import pytest

from kiln.resources.base import Resource, ResourceState, Token
from kiln.template.definitions import ResourceDefinition
from tests.unit.resources.fakes import FakeRuntime, run


class Steps(Resource):
    """Three steps, each 'sent' once; the requests it sent are counted."""

    type_name = "Test::Steps"
    sent: list[int]

    async def handle_create(self) -> Token:
        self.sent = []
        return {"at": 0}

    async def check_create_complete(self, token: Token) -> bool:
        if token["at"] == 3:
            return True
        self.sent.append(token["at"])
        self.next_token(token, at=token["at"] + 1)
        return False


class InPlace(Steps):
    """The mistake: the step is recorded in the token the engine already persisted."""

    async def check_create_complete(self, token: Token) -> bool:
        if token["at"] == 3:
            return True
        self.sent.append(token["at"])
        token["at"] += 1
        return False


def make(cls: type[Resource]) -> Any:
    definition = ResourceDefinition(
        name="r", type=cls.type_name, properties={}, raw={"type": cls.type_name}
    )
    return cls("r", definition, FakeRuntime(), ResourceState())


async def test_each_check_gets_the_token_the_last_one_handed_on() -> None:
    res = make(Steps)
    assert await run(res, "create") == 4
    assert res.sent == [0, 1, 2]  # each step sent once, in order


async def test_a_check_changing_its_token_in_place_fails_the_harness() -> None:
    res = make(InPlace)
    with pytest.raises(AssertionError, match="changed its token in place"):
        await run(res, "create")


def test_next_token_leaves_the_token_given_as_it_was() -> None:
    res = make(Steps)
    given = {"at": 0, "started": False}
    moved = res.next_token(given, started=True)
    assert given == {"at": 0, "started": False}
    assert moved == {"at": 0, "started": True}
    assert res.take_checkpoint() == (moved,)
    assert res.take_checkpoint() is None  # handed over once
    assert res.next_token(moved, started=True) is moved  # nothing changed: nothing handed on
    assert res.take_checkpoint() is None
