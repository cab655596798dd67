"""Running an alarm's actions: a Kiln signal URL becomes an EngineService signal (no
HTTP round trip, no signature to check: the watcher is Kiln itself); any other http(s)
URL is POSTed the alarm's new state as JSON, its address checked as a template_url's is
(:mod:`kiln.urlfetch`: never link-local, loopback and private hosts only when
``template_url_allowed_hosts`` lists them).

Kiln's URLs are recognised by their path whatever their host: the native
``/v1/<project>/stacks/<name>/<id>/resources/<resource>/signal`` (a ScalingPolicy's
``signal_url``) and the CFN ``/v1/signal/<ARN>`` (its pre-signed ``alarm_url``, an AWS
policy's reference). An alarm may only signal stacks of its own project. The signal
carries ``{"previous", "current", "reason"}`` as an alarm service does, so the target's
SIGNAL event reads ``alarm state changed from ok to alarm (<reason>)``. Each state
change of a stack's alarm is also an event of the alarm resource (``SIGNAL_COMPLETE``,
``Alarm state changed from OK to ALARM: <reason>``), where the stack's events go.

An OS::Heat::HARestarter target is then restarted as Heat's old restarter did it, with
today's tools: its victim is marked unhealthy and the stack is updated with its own
template, which re-creates the victim (and what depends on it).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from typing import Any
from urllib.parse import unquote, urlparse

from kiln import urlfetch
from kiln.alarms.service import ActionFailed
from kiln.alarms.store import AlarmRecord
from kiln.engine.model.context import RequestContext
from kiln.engine.service.interface import EngineServiceAPI
from kiln.engine.service.shapes import ResourceReply
from kiln.errors import KilnError

_NATIVE = re.compile(r"/v1/(?P<project>[^/]+)/stacks/(?P<name>[^/]+)/(?P<id>[^/]+)"
                     r"/resources/(?P<resource>[^/]+)/signal/?$")
_ARN = re.compile(r"arn:openstack:heat::(?P<project>[^:]*):stacks/(?P<name>[^/]+)"
                  r"/(?P<id>[^/]+)/resources/(?P<resource>[^/?]+)")
RESTARTER = "OS::Heat::HARestarter"
LOG = logging.getLogger(__name__)


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

    def __init__(self, service: EngineServiceAPI, *, timeout: float = 10.0,
                 allowed_hosts: Sequence[str] = ()) -> None:
        self.service = service
        self.timeout = timeout
        #: loopback and private hosts a POSTed action may reach (template_url_allowed_hosts)
        self.allowed_hosts = list(allowed_hosts)

    async def run(self, alarm: AlarmRecord, action: str, previous: str, state: str,
                  reason: str) -> str:
        details = {"previous": previous.lower().replace("_", " "),
                   "current": state.lower().replace("_", " "), "reason": reason}
        target = signal_target(action)
        if target is None:
            return await self._post(action, alarm, details)
        project, name, stack_id, resource = target
        if project != alarm.project_id:
            raise ActionFailed(f"alarm {alarm.name} may not signal project {project}")
        ctx = RequestContext(project_id=project)
        identity = {"stack_name": name, "stack_id": stack_id, "tenant": project, "path": ""}
        try:
            await self.service.resource_signal(ctx, identity, resource, details,
                                               sync_call=True)
            shown = await self.service.describe_stack_resource(ctx, identity, resource,
                                                               with_attr=None)
            if shown.get("resource_type") == RESTARTER:
                return await self._restart(ctx, identity, shown)
        except KilnError as exc:  # the stack or resource refused it, or is gone
            raise ActionFailed(str(exc)) from exc
        return f"signalled {name}/{resource}"

    async def state_changed(self, alarm: AlarmRecord, previous: str, state: str,
                            reason: str) -> None:
        if not alarm.stack_id or not alarm.resource_name:
            return
        ctx = RequestContext(project_id=alarm.project_id)
        try:
            await self.service.resource_note(
                ctx, {"stack_id": alarm.stack_id}, alarm.resource_name,
                f"Alarm state changed from {previous} to {state}: {reason}")
        except KilnError:  # the stack or its alarm resource is being deleted, or gone
            LOG.debug("no event for alarm %s", alarm.name, exc_info=True)

    async def _restart(self, ctx: RequestContext, identity: dict[str, Any],
                       restarter: ResourceReply) -> str:
        victim = (restarter.get("metadata") or {}).get("victim")
        if not victim:
            raise ActionFailed("the restarter's InstanceId names no resource of the stack")
        await self.service.resource_mark_unhealthy(
            ctx, identity, victim, True, "Restarted by an alarm (OS::Heat::HARestarter)")
        await self.service.update_stack(ctx, identity, None, {}, {}, {"existing": True})
        return f"restarting {victim}"

    async def _post(self, url: str, alarm: AlarmRecord, details: dict[str, Any]) -> str:
        # checked as a template_url is: an alarm's URL is the user's, the POST the server's
        try:
            status = await urlfetch.post_json(
                url, {"alarm_name": alarm.name, **details},
                allowed_hosts=self.allowed_hosts, timeout=self.timeout)
        except urlfetch.FetchError as exc:  # refused, unreachable, slow, malformed
            raise ActionFailed(str(exc)) from exc
        if status >= 400:
            raise ActionFailed(f"POST {url}: HTTP {status}")
        return f"HTTP {status}"
