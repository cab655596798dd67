"""A resource plugin whose lifecycle steps the test releases, one at a time.

In the spirit of Heat's convergence scenario framework: the test *arms* the steps it
wants to hold (a resource name and an action), waits until the engine has reached one,
looks at the stack while it is held, and releases it when it chooses, so interleavings
are chosen rather than left to timing and nothing sleeps. Unarmed steps pass freely.
Every arrival and release is appended to a timeline, so a scenario can also assert how
many steps the engine ran at once.

``Kiln::Test::Gate`` properties: ``value`` (updatable in place), ``generation``
(changing it replaces the resource), ``fail`` (actions whose handle raises). Its
physical id is ``<name>-g<generation>-<serial>``, so replacements are visible.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Mapping
from typing import Any

from kiln.resources.base import Attribute, Properties, Property, Resource, ResourceFailure, Token
from kiln.template.definitions import ResourceDefinition

TYPE = "Kiln::Test::Gate"
Key = tuple[str, str]


class Gate:
    """The test's side: arm, await arrival, release."""

    def __init__(self) -> None:
        self.armed: set[Key] = set()
        self.arm_every: set[str] = set()
        self._held: dict[Key, asyncio.Event] = {}
        self._arrivals: dict[Key, asyncio.Event] = {}
        self._any = asyncio.Condition()
        self.timeline: list[tuple[str, str, str]] = []
        self.serial = itertools.count(1)

    def arm(self, name: str, action: str) -> None:
        self.armed.add((name, action))

    def arm_all(self, action: str) -> None:
        """Hold every resource's step of ``action`` (e.g. all members of a group)."""
        self.arm_every.add(action)

    def _arrival(self, key: Key) -> asyncio.Event:
        return self._arrivals.setdefault(key, asyncio.Event())

    async def arrived(self, name: str, action: str) -> None:
        await self._arrival((name, action)).wait()

    async def next_arrival(self, action: str) -> str:
        """The name of a resource held at ``action`` that the test has not released."""
        async with self._any:
            await self._any.wait_for(lambda: any(k[1] == action for k in self._held))
            return next(k[0] for k in self._held if k[1] == action)

    def held(self) -> list[Key]:
        return list(self._held)

    def release(self, name: str, action: str) -> None:
        self.timeline.append(("release", name, action))
        self._held.pop((name, action)).set()

    async def step(self, name: str, action: str) -> None:
        key = (name, action)
        if key not in self.armed and action not in self.arm_every:
            self.timeline.append(("pass", name, action))
            return
        self.armed.discard(key)
        released = asyncio.Event()
        self._held[key] = released
        self.timeline.append(("arrive", name, action))
        self._arrival(key).set()
        async with self._any:
            self._any.notify_all()
        try:
            await released.wait()
        finally:
            self._held.pop(key, None)
            self._arrivals.pop(key, None)


#: the gate of the running test (set by the ``gate`` fixture)
CURRENT: Gate | None = None


class GateResource(Resource):
    type_name = TYPE
    properties_schema = {
        "value": Property("string", "Kept in data; updated in place.", default="",
                          update_allowed=True),
        "generation": Property("string", "Changing it replaces the resource.", default="1"),
        "fail": Property("list", "Actions whose handle fails.", default=[],
                         update_allowed=True),
    }
    attributes_schema = {"value": Attribute("The stored value.")}

    async def _step(self, action: str, props: Properties | None = None) -> None:
        assert CURRENT is not None, "the gate fixture is not active"
        await CURRENT.step(self.name, action)
        fail = (props or self.properties)["fail"] or []
        if action in fail:
            raise ResourceFailure(f"{action} refused by the test", exc_type="Exception")

    async def handle_create(self) -> Token:
        await self._step("CREATE")
        assert CURRENT is not None
        self.resource_id = (f"{self.name}-g{self.properties['generation']}-"
                            f"{next(CURRENT.serial)}")
        self.data["value"] = str(self.properties["value"])
        return None

    async def handle_update(self, new_definition: ResourceDefinition,
                            new_properties: Properties, prop_diff: Mapping[str, Any]) -> Token:
        await self._step("UPDATE", new_properties)
        self.data["value"] = str(new_properties["value"])
        return None

    async def handle_delete(self) -> Token:
        await self._step("DELETE")
        return None

    def resolve_attribute(self, name: str) -> Any:
        return self.data.get("value")
