"""The alarm types of OpenStack's telemetry service (Aodh), listed so templates that use
them get a clear answer: Kiln evaluates alarms itself (AWS::CloudWatch::Alarm,
OS::Heat::CWLiteAlarm) and reaches no Aodh. A stack using one is refused at create
with a message naming the type and the alternative."""

from __future__ import annotations

from typing import Any

from kiln.errors import StackValidationFailed
from kiln.resources.base import Properties, Resource, SupportStatus

NEEDS_AODH = ("{type} needs the Aodh alarming service, which Kiln does not reach; use "
              "AWS::CloudWatch::Alarm or OS::Heat::CWLiteAlarm, which Kiln evaluates "
              "itself.")


class AodhAlarmBase(Resource):
    client_name = "aodh"
    support_status = SupportStatus(status="UNSUPPORTED",
                                   message="Needs the Aodh alarming service.")

    @classmethod
    def make_properties(cls, resource_name: str, resolved: Any) -> Properties:
        return Properties({}, {})

    @property
    def properties(self) -> Properties:
        return Properties({}, {})

    @properties.setter
    def properties(self, value: Properties) -> None:
        pass

    def validate(self) -> None:
        raise StackValidationFailed(NEEDS_AODH.format(type=self.type_name))


def _alarm(name: str) -> type[AodhAlarmBase]:
    return type(name.replace(":", ""), (AodhAlarmBase,), {
        "type_name": name, "__module__": __name__,
        "description": f"{name} (needs Aodh)."})


def resource_mapping() -> dict[str, type[Resource]]:
    names = ("OS::Aodh::Alarm", "OS::Aodh::CompositeAlarm", "OS::Aodh::EventAlarm",
             "OS::Aodh::GnocchiAggregationByMetricsAlarm",
             "OS::Aodh::GnocchiAggregationByResourcesAlarm",
             "OS::Aodh::GnocchiResourcesAlarm", "OS::Aodh::LBMemberHealthAlarm",
             "OS::Ceilometer::Alarm")
    return {name: _alarm(name) for name in names}
