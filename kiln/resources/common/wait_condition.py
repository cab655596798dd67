"""What the Heat and AWS wait conditions share: signals kept on the handle, counted by
the condition.

A handle keeps each signal under its id (``{unique_id: {data, reason, status}}``) and
shows them in its *metadata*, where Heat keeps them, so agents and the API see the same
thing; each is stored as a row of its own (:mod:`kiln.db.signals`), so a signal writes
what it adds, not every signal before it. What a handle keeps is bounded (count, bytes
per signal, bytes in all: ``[kiln_engine]`` options); a signal over a bound is refused
with ``RequestLimitExceeded`` and changes nothing. The condition's ``check_*_complete``
reads the handle's signals on every poll: any failure signal fails it, enough successes
complete it, and its deadline (in the token) times it out.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Mapping
from typing import Any, ClassVar

from kiln.errors import RequestLimitExceeded
from kiln.resources.base import Properties, Resource, ResourceFailure, Token
from kiln.resources.common.stack_user import StackUserResource
from kiln.template.definitions import ResourceDefinition

SUCCESS = "SUCCESS"
FAILURE = "FAILURE"
#: longest signal id kept (the column holding it)
MAX_SIGNAL_ID = 255


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
        self.keep_signal(str(entry[id_key]), stored)
        return f"status:{stored[status_key]} reason:{stored[reason_key]}"

    def keep_signal(self, key: str, stored: Any) -> None:
        """Keep one signal under its id, within the bounds (``[kiln_engine]
        max_signals_per_resource``, ``max_signal_size``, ``max_signals_size_per_resource``):
        over one, :class:`RequestLimitExceeded` and nothing kept changes."""
        state = self.state
        limits = self.runtime.conf.kiln_engine
        size = len(key) + len(json.dumps(stored))
        if len(key) > MAX_SIGNAL_ID:
            raise RequestLimitExceeded(
                f"Request limit exceeded: a signal id of {len(key)} characters to "
                f"{self.name} (at most {MAX_SIGNAL_ID}).")
        if size > limits.max_signal_size:
            raise RequestLimitExceeded(
                f"Request limit exceeded: a signal of {size} bytes to {self.name} "
                f"(max_signal_size is {limits.max_signal_size} bytes).")
        previous = state.signal_sizes.get(key)
        if previous is None and len(state.signals) >= limits.max_signals_per_resource:
            raise RequestLimitExceeded(
                f"Request limit exceeded: {self.name} keeps {len(state.signals)} signals, "
                "the most it may (max_signals_per_resource); a signal with a new id is "
                "refused.")
        total = sum(state.signal_sizes.values()) - (previous or 0) + size
        if total > limits.max_signals_size_per_resource:
            raise RequestLimitExceeded(
                f"Request limit exceeded: a signal of {size} bytes would take what "
                f"{self.name} keeps to {total} bytes (max_signals_size_per_resource is "
                f"{limits.max_signals_size_per_resource} bytes).")
        state.signals[key] = stored
        state.signal_sizes[key] = size
        state.unsaved_signals[key] = state.unsaved_signals.get(key, previous is None)

    def statuses(self) -> list[str]:
        status_key = self.signal_keys[2]
        return [str(v[status_key]) for v in self.state.signals.values()]

    def reasons(self, status: str) -> list[str]:
        _, reason_key, status_key, _ = self.signal_keys
        return [str(v[reason_key]) for v in self.state.signals.values()
                if v[status_key] == status]

    def signal_data(self) -> dict[str, Any]:
        data_key = self.signal_keys[0]
        return {k: v[data_key] for k, v in self.state.signals.items()}


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


class CfnWaitHandle(WaitHandleBase):
    """A handle whose reference is a pre-signed CFN URL naming it by ARN
    (AWS::CloudFormation::WaitConditionHandle, OS::Heat::UpdateWaitConditionHandle)."""

    signal_keys = ("Data", "Reason", "Status", "UniqueId")
    #: the pre-signed URL is a credential: whoever holds it signals the handle
    secret_data = frozenset({"ec2_signed_url"})

    async def handle_create(self) -> Token:
        # the reference is the URL cfn-signal or curl PUTs to, signed with the handle's
        # own keypair (revoked with the handle)
        keypair = await self.runtime.issue_ec2_keypair(self.name)
        self.data["access_key"] = keypair["access_key"]
        self.data["ec2_signed_url"] = self.runtime.presigned_signal_url(
            self.name, "cfn_waitcondition", keypair)
        # last, as Heat (keypair, then resource id): a stack shown while the keypair is
        # being issued must give the name for the reference, never an unsigned URL
        self.resource_id = uuid.uuid4().hex
        return None

    async def handle_delete(self) -> Token:
        access_key = self.data.pop("access_key", None)
        if access_key is not None:
            await self.runtime.delete_ec2_keypair(access_key)
        return None

    async def handle_signal(self, details: Any) -> str | None:
        if details is None:
            return None
        return await super().handle_signal(details)

    def reference_id(self) -> str:
        if self.resource_id:
            url = self.data.get("ec2_signed_url")
            if url is None:
                url = self.runtime.signal_url(self.name, "cfn_waitcondition")
            return url
        return self.name
