"""OS::Heat::CWLiteAlarm (the seed's watch rule, see kiln.resources.common.alarm) and
OS::Heat::HARestarter, the alarm action that re-creates a resource.

Heat 27 keeps HARestarter only as a placeholder; Kiln restores what it was for with
today's tools: when an alarm signals the restarter, its victim (``InstanceId``, a
reference to a resource of the same stack) is marked unhealthy and the stack is updated
with its own template, which replaces the victim and what depends on it
(kiln.engine.service.alarm_actions does this after the signal).
"""

from __future__ import annotations

from typing import Any

from kiln.resources.base import Attribute, Property, Resource, SupportStatus, Token
from kiln.resources.common.alarm import WatchAlarm


class CWLiteAlarm(WatchAlarm):
    type_name = "OS::Heat::CWLiteAlarm"
    support_status = SupportStatus(version="2014.1")
    description = ("A watch-rule alarm evaluated by Kiln's watcher (the AWS::CloudWatch::"
                   "Alarm of the seed templates).")


class HARestarter(Resource):
    type_name = "OS::Heat::HARestarter"
    #: hidden from listings as in Heat 27 (templates that use it still work)
    support_status = SupportStatus(status="HIDDEN", version="10.0.0", message=(
        "Kiln re-creates the victim through mark-unhealthy and a stack update when an "
        "alarm signals the restarter; prefer those two calls in new templates."),
        previous_status=SupportStatus(status="DEPRECATED", version="2015.1"))
    description = "Re-creates a resource of the stack when an alarm signals it."
    properties_schema = {
        "InstanceId": Property("string", "Instance ID to be restarted.", required=True),
    }
    attributes_schema = {
        "AlarmUrl": Attribute("A signed url to handle the alarm. (Heat extension).",
                              "string"),
    }

    def _victim(self) -> str | None:
        refid = str(self.properties["InstanceId"])
        target = self.runtime.resource_by_refid(refid) or self.runtime.resource(refid)
        return None if target is None else target.name

    async def handle_create(self) -> Token:
        self.resource_id = self.physical_resource_name()
        self.metadata = {**self.metadata, "victim": self._victim()}
        return None

    async def handle_signal(self, details: Any) -> str | None:
        victim = self._victim()
        self.metadata = {**self.metadata, "victim": victim}
        if victim is None:
            return "no resource of the stack matches InstanceId"
        return f"restarting {victim}"

    def resolve_attribute(self, name: str) -> Any:
        if name == "AlarmUrl" and self.resource_id is not None:
            return self.runtime.signal_url(self.name, "cfn_signal")
        return None
