"""What the Heat and AWS wait conditions share: signals kept on the handle, counted by
the condition.

A handle stores each signal in its *metadata* (``{unique_id: {data, reason, status}}``),
which is where Heat keeps them too, so agents and the API see the same thing. The
condition's ``check_*_complete`` reads the handle's metadata on every poll: any failure
signal fails it, enough successes complete it, and its deadline (in the token) times it
out.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, ClassVar

from kiln.resources.base import Properties, Resource, ResourceFailure, Token
from kiln.resources.stack_user import StackUserResource
from kiln.template.definitions import ResourceDefinition

SUCCESS = "SUCCESS"
FAILURE = "FAILURE"


class WaitHandleBase(StackUserResource):
    """A handle: receives signals and keeps them in its metadata (its stack user is
    disabled while the stack is suspended, as Heat's SignalResponder's)."""

    requires_deferred_auth = True  # Heat's SignalResponder
    #: names of the signal fields: (data, reason, status, unique id)
    signal_keys: ClassVar[tuple[str, str, str, str]] = ("data", "reason", "status", "id")

    def normalise(self, details: Any) -> Any:
        """Fill in what a signal may leave out (the Heat handle is lenient, AWS is not)."""
        return details

    def _format_ok(self, entry: Any) -> bool:
        status_key = self.signal_keys[2]
        return (isinstance(entry, Mapping) and set(entry) == set(self.signal_keys)
                and entry[status_key] in (SUCCESS, FAILURE))

    async def handle_signal(self, details: Any) -> str | None:
        _, reason_key, status_key, id_key = self.signal_keys
        entry = self.normalise(details)
        if not self._format_ok(entry):
            raise ResourceFailure("Metadata format invalid", exc_type="ValueError")
        stored = {k: v for k, v in entry.items() if k != id_key}
        self.metadata = {**self.metadata, str(entry[id_key]): stored}
        return f"status:{stored[status_key]} reason:{stored[reason_key]}"

    def statuses(self) -> list[str]:
        status_key = self.signal_keys[2]
        return [str(v[status_key]) for v in self.metadata.values()]

    def reasons(self, status: str) -> list[str]:
        _, reason_key, status_key, _ = self.signal_keys
        return [str(v[reason_key]) for v in self.metadata.values() if v[status_key] == status]

    def signal_data(self) -> dict[str, Any]:
        data_key = self.signal_keys[0]
        return {k: v[data_key] for k, v in self.metadata.items()}


class WaitConditionBase(Resource):
    """A condition: waits for ``count`` successful signals on its handle."""

    handle_property: ClassVar[str] = "handle"
    timeout_property: ClassVar[str] = "timeout"
    count_property: ClassVar[str] = "count"
    data_attribute: ClassVar[str] = "data"

    def lookup_handle(self) -> Resource | None:
        """The resource the handle property refers to (by its reference id)."""
        return self.runtime.resource_by_refid(self.properties[self.handle_property])

    def find_handle(self) -> WaitHandleBase:
        """The handle named by the handle property; a bad one fails the action."""
        ref = self.properties[self.handle_property]
        handle = self.lookup_handle()
        if not isinstance(handle, WaitHandleBase):
            shown = handle.name if handle is not None else ref
            raise ResourceFailure(f"{shown} is not a valid wait condition handle.",
                                  exc_type="ValueError")
        return handle

    def _start(self, handle: WaitHandleBase, props: Properties) -> Token:
        return {"handle": handle.name, "started": self.runtime.now(),
                "timeout": float(props[self.timeout_property]),
                "count": int(props[self.count_property])}

    def _wait(self, token: Token) -> bool:
        handle = self.runtime.resource(token["handle"])
        if not isinstance(handle, WaitHandleBase):
            raise ResourceFailure(f"{token['handle']} is not a valid wait condition handle.",
                                  exc_type="ValueError")
        if self.runtime.now() - float(token["started"]) > float(token["timeout"]):
            received = handle.reasons(SUCCESS)
            message = f"{len(received)} of {token['count']} received"
            if received:
                message += " - " + ";".join(received)
            raise ResourceFailure(message, exc_type="WaitConditionTimeout")
        statuses = handle.statuses()
        if any(s != SUCCESS for s in statuses):
            raise ResourceFailure(";".join(handle.reasons(FAILURE)),
                                  exc_type="WaitConditionFailure")
        return len(statuses) >= int(token["count"])

    async def handle_create(self) -> Token:
        return self._start(self.find_handle(), self.properties)

    async def check_create_complete(self, token: Token) -> bool:
        return self._wait(token)

    async def handle_update(self, new_definition: ResourceDefinition,
                            new_properties: Properties, prop_diff: Mapping[str, Any]) -> Token:
        return self._start(self.find_handle(), new_properties)

    async def check_update_complete(self, token: Token) -> bool:
        return self._wait(token)

    def resolve_attribute(self, name: str) -> Any:
        handle = self.lookup_handle()
        if not isinstance(handle, WaitHandleBase):
            return ""
        return json.dumps(handle.signal_data())
