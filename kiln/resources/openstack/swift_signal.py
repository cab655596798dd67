"""OS::Heat::SwiftSignalHandle and OS::Heat::SwiftSignal: a wait condition whose signals
are Swift objects, PUT by the server straight into Swift through a temp URL.

The handle makes the stack's container (named by the stack's id, shared by the stack's
handles) with ``X-Versions-Location`` pointing at itself, so that every PUT to the one
object keeps the previous content as a version (``<3 hex digits of the name's
length><name>/<timestamp>``); it writes the placeholder ``in progress`` and hands out a
PUT temp URL for the object (see :mod:`kiln.resources.common.swift` for the key).

The signal reads those versions, oldest first, then the object itself. Each body is a
signal: empty is ``{}``, otherwise a JSON object with optional ``status`` (SUCCESS or
FAILURE), ``reason``, ``data`` and ``id``; defaults and the rule that a later signal with
the same ``id`` replaces an earlier one are Heat's. Any FAILURE fails the resource with
the failures' reasons, ``count`` successes complete it, and the timeout fails it with how
many arrived.

Nothing tells Kiln that a server PUT an object (Swift has no notification a tenant can
subscribe to), so the signal polls Swift: one container listing per poll, and a GET only
for an object not read before. The pause between polls grows with the time already
waited (a tenth of it, from 0.25 s up to 5 s), so a signal is seen at most about 10% of
the wait late, and a timeout is reported at its deadline.
"""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import unquote, urlparse

from kiln.resources.base import Attribute, Property, ResourceFailure, SupportStatus, Token
from kiln.resources.common.swift import SwiftResource, object_path, signed_url
from kiln.template.constraints import Range

IN_PROGRESS = "in progress"
SUCCESS, FAILURE = "SUCCESS", "FAILURE"
#: objects deleted per poll when a handle goes (each DELETE of a versioned object brings
#: its previous version back)
_DELETES_PER_POLL = 50
_FIRST_POLL, _MAX_POLL = 0.25, 5.0


class SwiftSignalHandle(SwiftResource):
    """The temp URL a server PUTs its signals to."""

    type_name = "OS::Heat::SwiftSignalHandle"
    support_status = SupportStatus(version="2014.2")
    description = ("Resource for managing signals from Swift resources.\n\n"
                   "This resource is same as WaitConditionHandle, but designed for using "
                   "by Swift resources.")
    #: the URL is a credential: whoever has it may signal
    secret_data = frozenset({"endpoint"})
    attributes_schema = {
        "token": Attribute("Tokens are not needed for Swift TempURLs. This attribute is "
                           "being kept for compatibility with the "
                           "OS::Heat::WaitConditionHandle resource.", "string"),
        "endpoint": Attribute("Endpoint/url which can be used for signalling handle.",
                              "string"),
        "curl_cli": Attribute(
            "Convenience attribute, provides curl CLI command prefix, which can be used "
            "for signalling handle completion or failure. You can signal success by "
            "adding --data-binary '{\"status\": \"SUCCESS\"}' , or signal failure by "
            "adding --data-binary '{\"status\": \"FAILURE\"}'.", "string"),
    }

    async def handle_create(self) -> Token:
        name = self.physical_resource_name()
        container = self.runtime.stack_id
        self.resource_id = name  # before any call: a delete then cleans up after a failure
        await self.swift("PUT", object_path(container), {"X-Versions-Location": container})
        await self.swift("PUT", object_path(container, name), data=IN_PROGRESS.encode())
        key = await self.temp_url_key(container)
        self.data["endpoint"] = signed_url(await self.account_url(), key, container, name)
        return None

    async def handle_delete(self) -> Token:
        if self.resource_id is None:
            return None
        return {"container": self.runtime.stack_id, "object": self.resource_id}

    async def check_delete_complete(self, token: Token) -> bool:
        """Delete the object until Swift answers 404 (every version goes), then the
        container unless another handle's objects are still in it (409)."""
        if not token:
            return True
        path = object_path(token["container"], token["object"])
        for _ in range(_DELETES_PER_POLL):
            if await self.swift("DELETE", path, ok_missing=True) is None:
                break
        else:
            return False
        await self.delete_container(token["container"])  # kept while others use it
        self.data.pop("endpoint", None)
        return True

    def reference_id(self) -> str:
        return self.data.get("endpoint") or self.name

    def resolve_attribute(self, name: str) -> Any:
        if self.resource_id is None:
            return None
        endpoint = self.data.get("endpoint")
        if name == "token":
            return ""  # WaitConditionHandle's attribute, meaningless for a temp URL
        if name == "endpoint":
            return endpoint
        if name == "curl_cli":
            return f"curl -i -X PUT '{endpoint}'"
        return None


class SwiftSignal(SwiftResource):
    """Waits for ``count`` signals PUT to a SwiftSignalHandle's URL."""

    type_name = "OS::Heat::SwiftSignal"
    support_status = SupportStatus(version="2014.2")
    description = ("Resource for handling signals received by SwiftSignalHandle.\n\n"
                   "This resource handles signals received by SwiftSignalHandle and is "
                   "same as WaitCondition resource.")
    properties_schema = {
        "handle": Property("string", "URL of TempURL where resource will signal "
                                     "completion and optionally upload data.",
                           required=True),
        "timeout": Property("number", "The maximum number of seconds to wait for the "
                                      "resource to signal completion. Once the timeout is "
                                      "reached, creation of the signal resource will fail.",
                            required=True, constraints=[Range(min=1, max=43200)]),
        "count": Property("integer", "The number of success signals that must be "
                                     "received before the stack creation process "
                                     "continues.",
                          default=1, constraints=[Range(min=1, max=1000)]),
    }
    attributes_schema = {
        "data": Attribute("JSON data that was uploaded via the SwiftSignalHandle.",
                          "string"),
    }

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        #: bodies already read, by (object name, etag): a version never changes
        self._bodies: dict[tuple[str, str], str | None] = {}

    async def _where(self) -> tuple[str, str]:
        """(container, object) of the handle URL, refused as Heat refuses a URL that
        is not a temp URL path into this stack's container."""
        path = urlparse(str(self.properties["handle"])).path
        parts = path.split("/", 4)
        account = urlparse(await self.account_url()).path.rsplit("/", 1)[-1]

        def refuse(part: str) -> ResourceFailure:
            return ResourceFailure(f'"{path}" is not a valid SwiftSignalHandle.  The {part} '
                                   "is invalid", exc_type="ValueError")

        if not (len(parts) == 5 and not parts[0] and parts[1] == "v1"
                and parts[2] == account and parts[3] and parts[4].strip("/")):
            raise refuse("Swift TempURL path")
        if unquote(parts[3]) != self.runtime.stack_id:
            raise refuse("container name")
        return unquote(parts[3]), unquote(parts[4].split("/")[0])

    async def handle_create(self) -> Token:
        container, obj = await self._where()
        return {"container": container, "object": obj, "started": self.runtime.now(),
                "timeout": float(self.properties["timeout"]),
                "count": int(self.properties["count"])}

    async def check_create_complete(self, token: Token) -> bool:
        signals = await self._signals(token["container"], token["object"])
        self.data["signals"] = json.dumps(
            {s["id"]: s["data"] for s in signals} if signals else None)
        if self.runtime.now() - float(token["started"]) > float(token["timeout"]):
            arrived = [s["reason"] for s in signals if s["status"] == SUCCESS]
            message = f"{len(arrived)} of {token['count']} received"
            if arrived:
                message += " - " + ";".join(arrived)
            raise ResourceFailure(message, exc_type="SwiftSignalTimeout")
        for signal in signals:
            if signal["status"] == FAILURE:
                raise ResourceFailure(
                    ";".join(s["reason"] for s in signals if s["status"] == FAILURE),
                    exc_type="SwiftSignalFailure")
            if signal["status"] != SUCCESS:
                raise ResourceFailure(f"Unknown status: {signal['status']}")
        return len(signals) >= int(token["count"])

    def poll_delay(self, token: Token) -> float | None:
        waited = self.runtime.now() - float(token["started"])
        left = float(token["timeout"]) - waited
        return max(0.0, min(max(_FIRST_POLL, waited / 10), _MAX_POLL, left + 0.01))

    async def _signals(self, container: str, obj: str) -> list[dict[str, Any]]:
        """The signals so far, in the order they were PUT, with Heat's defaults."""
        signals: list[dict[str, Any]] = []
        bodies = [b for b in await self._bodies_of(container, obj) if b != IN_PROGRESS]
        self._check_bounds([len(b.encode()) for b in bodies])
        for number, body in enumerate(bodies, start=1):
            signal = _parse(body) if body else {}
            if "id" in signal:
                signals = [s for s in signals if s["id"] != signal["id"]]
            signal.setdefault("data", None)
            signal.setdefault("id", number)
            signal.setdefault("reason", f"Signal {signal['id']} received")
            signal.setdefault("status", SUCCESS)
            signals.append(signal)
        return signals

    def _check_bounds(self, sizes: list[int]) -> None:
        """What the signal keeps of the server's PUTs is bounded as a wait-condition
        handle's (``[kiln_engine]`` options); the PUTs went to Swift, so over a bound
        the signal fails, naming the setting."""
        limits = self.runtime.conf.kiln_engine
        if len(sizes) > limits.max_signals_per_resource:
            problem = f"{len(sizes)} signals (max_signals_per_resource is " \
                      f"{limits.max_signals_per_resource})"
        elif sizes and max(sizes) > limits.max_signal_size:
            problem = f"a signal of {max(sizes)} bytes (max_signal_size is " \
                      f"{limits.max_signal_size} bytes)"
        elif sum(sizes) > limits.max_signals_size_per_resource:
            problem = f"{sum(sizes)} bytes of signals (max_signals_size_per_resource " \
                      f"is {limits.max_signals_size_per_resource} bytes)"
        else:
            return
        raise ResourceFailure(f"Request limit exceeded: {problem}",
                              exc_type="SwiftSignalFailure")

    async def _bodies_of(self, container: str, obj: str) -> list[str]:
        """The object's versions, oldest first, then the object: their bodies."""
        found = await self.swift("GET", f"{object_path(container)}?format=json",
                                 ok_missing=True)
        listing = found[1] if found is not None and isinstance(found[1], list) else []
        prefix = f"{len(obj):03x}{obj}/"
        names = {str(o["name"]): str(o.get("hash", "")) for o in listing}
        ordered = sorted(n for n in names if n.startswith(prefix))
        ordered += [obj] if obj in names else []
        # an object too big to keep is refused before it is read
        self._check_bounds([int(o.get("bytes") or 0) for o in listing
                            if str(o["name"]) in ordered])
        bodies = []
        for name in ordered:
            seen = (name, names[name])
            if seen not in self._bodies:
                got = await self.swift("GET", object_path(container, name), decode=False,
                                       ok_missing=True)
                self._bodies[seen] = None if got is None else bytes(got[1]).decode(
                    "utf-8", errors="replace")
            body = self._bodies[seen]
            if body is not None:
                bodies.append(body)
        return bodies

    def resolve_attribute(self, name: str) -> Any:
        if name == "data":
            return self.data.get("signals", "null")
        return None


def _parse(body: str) -> dict[str, Any]:
    try:
        signal = json.loads(body)
    except ValueError:
        signal = None
    if not isinstance(signal, dict):
        raise ResourceFailure(f"Failed to parse JSON data: {body}")
    return signal
