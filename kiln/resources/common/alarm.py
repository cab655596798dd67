"""The watch-rule alarm both AWS::CloudWatch::Alarm and OS::Heat::CWLiteAlarm are
(the seed's watch rules): the resource stores one alarm, named ``<stack>-<resource>`` as
Heat named its watch rules, which the watcher (kiln.alarms) evaluates on schedule.

``AlarmActions``/``OKActions``/``InsufficientDataActions`` hold URLs (a policy's
``alarm_url`` or ``signal_url``, an AWS policy's reference) or references to resources
of the same stack (a restarter, a policy by name), which become that resource's signal
URL. Suspending the resource disables the actions; resuming enables them again.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kiln.alarms import rules
from kiln.errors import StackValidationFailed
from kiln.resources.base import Properties, Property, Resource, Token
from kiln.template.constraints import AllowedValues
from kiln.template.definitions import ResourceDefinition

ACTION_PROPERTIES = {"AlarmActions": "alarm_actions", "OKActions": "ok_actions",
                     "InsufficientDataActions": "insufficient_data_actions"}


def _schema() -> dict[str, Property]:
    def actions(state: str) -> Property:
        return Property("list", f"A list of actions to execute when state transitions to "
                        f"{state}.", update_allowed=True)

    return {
        "ComparisonOperator": Property(
            "string", "Operator used to compare the specified Statistic with Threshold.",
            constraints=[AllowedValues(tuple(rules.COMPARISONS))], update_allowed=True),
        "AlarmDescription": Property("string", "Description for the alarm.",
                                     update_allowed=True),
        "EvaluationPeriods": Property("string", "Number of periods to evaluate over.",
                                      update_allowed=True),
        "MetricName": Property("string", "Metric name watched by the alarm."),
        "Namespace": Property("string", "Namespace for the metric."),
        "Period": Property("string", "Period (seconds) to evaluate over.",
                           update_allowed=True),
        "Statistic": Property("string", "Metric statistic to evaluate.",
                              constraints=[AllowedValues(rules.STATISTICS)],
                              update_allowed=True),
        "AlarmActions": actions("alarm"),
        "OKActions": actions("ok"),
        "Dimensions": Property("list", "A list of dimensions (arbitrary name/value pairs) "
                               "associated with the metric."),
        "InsufficientDataActions": actions("insufficient-data"),
        "Threshold": Property("string", "Threshold to evaluate against.",
                              update_allowed=True),
        "Units": Property("string", "Unit for the metric.",
                          constraints=[AllowedValues(rules.UNITS)], update_allowed=True),
    }


class WatchAlarm(Resource):
    properties_schema = _schema()

    def alarm_name(self) -> str:
        return f"{self.runtime.stack_name}-{self.name}"

    def reference_id(self) -> str:
        return self.alarm_name()

    def _rule(self, props: Properties) -> rules.Rule:
        actions = {kind: [self._action_url(str(a)) for a in props[key] or []]
                   for key, kind in ACTION_PROPERTIES.items()}
        pairs = [d for d in props["Dimensions"] or [] if isinstance(d, Mapping)]
        try:
            return rules.make_rule(
                namespace=props["Namespace"] or "system/linux",
                metric_name=props["MetricName"], statistic=props["Statistic"] or "Average",
                period=props["Period"] or 60,
                evaluation_periods=props["EvaluationPeriods"] or 1,
                threshold=props["Threshold"], comparison=props["ComparisonOperator"]
                or "GreaterThanThreshold",
                dimensions=rules.dimensions_of(pairs), unit=props["Units"],
                description=props["AlarmDescription"] or "", actions=actions)
        except rules.InvalidParameter as exc:
            raise StackValidationFailed(str(exc)) from None

    def _action_url(self, action: str) -> str:
        if "://" in action:
            return action
        target = self.runtime.resource_by_refid(action) or self.runtime.resource(action)
        if target is None:
            return action
        return self.runtime.signal_url(target.name, "heat")

    def validate(self) -> None:
        super().validate()
        props = self.properties
        if all(props[k] is not None for k in ("MetricName", "Threshold")):
            try:
                rules.make_rule(namespace=props["Namespace"] or "system/linux",
                                metric_name=props["MetricName"],
                                statistic=props["Statistic"] or "Average",
                                period=props["Period"] or 60,
                                evaluation_periods=props["EvaluationPeriods"] or 1,
                                threshold=props["Threshold"],
                                comparison=props["ComparisonOperator"]
                                or "GreaterThanThreshold",
                                dimensions=rules.dimensions_of(
                                    [d for d in props["Dimensions"] or []
                                     if isinstance(d, Mapping)]),
                                unit=props["Units"])
            except rules.InvalidParameter as exc:
                raise StackValidationFailed(str(exc)) from None

    async def handle_create(self) -> Token:
        await self.runtime.alarms.put(self.alarm_name(), self._rule(self.properties),
                                      resource_name=self.name)
        self.resource_id = self.alarm_name()
        return None

    async def handle_update(self, new_definition: ResourceDefinition,
                            new_properties: Properties, prop_diff: Mapping[str, Any]) -> Token:
        self.definition = new_definition
        self.properties = new_properties
        await self.runtime.alarms.put(self.alarm_name(), self._rule(new_properties),
                                      resource_name=self.name)
        return None

    async def handle_delete(self) -> Token:
        await self.runtime.alarms.delete(self.name)
        return None

    async def handle_suspend(self) -> Token:
        await self.runtime.alarms.set_enabled(self.alarm_name(), False)
        return None

    async def handle_resume(self) -> Token:
        await self.runtime.alarms.set_enabled(self.alarm_name(), True)
        return None
