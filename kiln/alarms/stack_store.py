"""The alarm store the engine hands alarm resources (``runtime.alarms``): the alarm
tables through :class:`AlarmService` (the engine store's ``alarms()``), scoped to one
stack and its project."""

from __future__ import annotations

from kiln.alarms.rules import Rule
from kiln.alarms.service import AlarmService


class StackAlarms:
    def __init__(self, service: AlarmService, *, project_id: str, stack_id: str) -> None:
        self.service = service
        self.project_id = project_id
        self.stack_id = stack_id

    async def put(self, name: str, rule: Rule, *, resource_name: str,
                  enabled: bool = True) -> None:
        await self.service.put_alarm(self.project_id, name, rule, actions_enabled=enabled,
                                     stack_id=self.stack_id, resource_name=resource_name)

    async def delete(self, resource_name: str) -> None:
        await self.service.delete_for_resource(self.stack_id, resource_name)

    async def set_enabled(self, name: str, enabled: bool) -> None:
        await self.service.set_actions_enabled(self.project_id, [name], enabled)
