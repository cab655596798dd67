"""Running an alarm's actions: a Kiln signal URL becomes an EngineService signal (no
HTTP round trip, no signature to check: the watcher is Kiln itself); any other http(s)
URL is POSTed the alarm's new state as JSON.

Kiln's URLs are recognised by their path whatever their host: the native
``/v1/<project>/stacks/<name>/<id>/resources/<resource>/signal`` (a ScalingPolicy's
``signal_url``) and the CFN ``/v1/signal/<ARN>`` (its pre-signed ``alarm_url``, an AWS
policy's reference). An alarm may only signal stacks of its own project. The signal
carries ``{"previous", "current", "reason"}`` as an alarm service does, so the target's
SIGNAL event reads ``alarm state changed from ok to alarm (<reason>)``.

An OS::Heat::HARestarter target is then restarted as Heat's old restarter did it, with
today's tools: its victim is marked unhealthy and the stack is updated with its own
template, which re-creates the victim (and what depends on it).
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import unquote, urlparse

from kiln.alarms.store import AlarmRecord
from kiln.engine.service import RequestContext

_NATIVE = re.compile(r"/v1/(?P<project>[^/]+)/stacks/(?P<name>[^/]+)/(?P<id>[^/]+)"
                     r"/resources/(?P<resource>[^/]+)/signal/?$")
_ARN = re.compile(r"arn:openstack:heat::(?P<project>[^:]*):stacks/(?P<name>[^/]+)"
                  r"/(?P<id>[^/]+)/resources/(?P<resource>[^/?]+)")
RESTARTER = "OS::Heat::HARestarter"


def signal_target(url: str) -> tuple[str, str, str, str] | None:
    """(project, stack name, stack id, resource) of a Kiln signal URL, else None."""
    path = urlparse(url).path
    found = _NATIVE.search(path)
    if found is None and "/v1/signal/" in path:
        found = _ARN.search(unquote(path.split("/v1/signal/", 1)[1]))
    if found is None:
        return None
    return (unquote(found["project"]), unquote(found["name"]), found["id"],
            unquote(found["resource"]))


class EngineActions:
    """The :class:`kiln.alarms.service.ActionRunner` of a Kiln process."""

    def __init__(self, service: Any, *, timeout: float = 10.0) -> None:
        self.service = service
        self.timeout = timeout

    async def run(self, alarm: AlarmRecord, action: str, previous: str, state: str,
                  reason: str) -> str:
        details = {"previous": previous.lower().replace("_", " "),
                   "current": state.lower().replace("_", " "), "reason": reason}
        target = signal_target(action)
        if target is None:
            return await self._post(action, alarm, details)
        project, name, stack_id, resource = target
        if project != alarm.project_id:
            raise PermissionError(f"alarm {alarm.name} may not signal project {project}")
        ctx = RequestContext(project_id=project)
        identity = {"stack_name": name, "stack_id": stack_id, "tenant": project, "path": ""}
        await self.service.resource_signal(ctx, identity, resource, details, sync_call=True)
        shown = await self.service.describe_stack_resource(ctx, identity, resource,
                                                           with_attr=None)
        if shown.get("resource_type") == RESTARTER:
            return await self._restart(ctx, identity, shown)
        return f"signalled {name}/{resource}"

    async def _restart(self, ctx: RequestContext, identity: dict[str, Any],
                       restarter: dict[str, Any]) -> str:
        victim = (restarter.get("metadata") or {}).get("victim")
        if not victim:
            raise LookupError("the restarter's InstanceId names no resource of the stack")
        await self.service.resource_mark_unhealthy(
            ctx, identity, victim, True, "Restarted by an alarm (OS::Heat::HARestarter)")
        await self.service.update_stack(ctx, identity, None, {}, {}, {"existing": True})
        return f"restarting {victim}"

    async def _post(self, url: str, alarm: AlarmRecord, details: dict[str, Any]) -> str:
        import httpx

        if urlparse(url).scheme not in ("http", "https"):
            raise ValueError(f"unsupported action {url}")
        async with httpx.AsyncClient(timeout=self.timeout, follow_redirects=False) as http:
            response = await http.post(url, json={"alarm_name": alarm.name, **details})
        if response.status_code >= 400:
            raise RuntimeError(f"POST {url}: HTTP {response.status_code}")
        return f"HTTP {response.status_code}"
