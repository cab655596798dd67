"""The CloudWatch service: the eleven CloudWatch actions, from request parameters (the
JSON shape the API decodes every wire format to, :mod:`kiln.api.cloudwatch.protocols`)
to :class:`kiln.alarms.service.AlarmService` calls, and their answers in CloudWatch's
field names.

It sits in the engine's service layer, beside the AlarmService it calls
(:mod:`.alarm_process` builds both), so the CloudWatch API receives it as the other APIs
receive EngineService (typed by :class:`~kiln.engine.service.interface.CloudWatchAPI`)
and imports neither the alarms nor the database (docs/contracts.md). A refused parameter
is :class:`kiln.errors.InvalidAlarmParameter`, a missing alarm
:class:`kiln.errors.AlarmNotFound`: the API answers both in AWS's format.
"""

from __future__ import annotations

import datetime as dt
import json
import math
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any

from kiln.alarms import rules
from kiln.alarms.service import AlarmService
from kiln.alarms.store import AlarmRecord
from kiln.errors import InvalidAlarmParameter as InvalidParameter

Params = Mapping[str, Any]
Handler = Callable[[AlarmService, str, Params], Awaitable[dict[str, Any] | None]]
#: the only action a server's own keypair (a stack's agent) may call, as in Heat's policy
AGENT_ACTIONS = frozenset({"PutMetricData"})


#: The times a request may name: years 1 to 9999 (what an answer can write back). NaN,
#: infinities and numbers beyond these are refused here, before any check compares them:
#: NaN compares false with everything, so a range check alone let it through to the
#: database (issue 22).
MIN_EPOCH = dt.datetime(1, 1, 1, tzinfo=dt.UTC).timestamp()
MAX_EPOCH = dt.datetime(9999, 12, 31, 23, 59, 59, tzinfo=dt.UTC).timestamp()


def to_epoch(value: Any, where: str) -> float:
    """Epoch seconds from an ISO 8601 string, a number, or a datetime; finite and
    within years 1 to 9999, else AWS's ``InvalidParameterValue`` naming ``where``."""
    epoch: float | None = None
    if isinstance(value, dt.datetime):
        stamp = value if value.tzinfo else value.replace(tzinfo=dt.UTC)
        try:
            epoch = stamp.timestamp()
        except (OverflowError, ValueError):
            epoch = None
    elif isinstance(value, (int, float)) and not isinstance(value, bool):
        epoch = float(value) if abs(value) < 2 ** 64 else math.inf
    elif isinstance(value, str):
        epoch = _text_epoch(value.strip())
        if epoch is None:
            raise InvalidParameter(f"The parameter {where} must be an ISO 8601 time.",
                                   "InvalidParameterValue")
    else:
        raise InvalidParameter(f"The parameter {where} must be a time.",
                               "InvalidParameterValue")
    if epoch is None or not MIN_EPOCH <= epoch <= MAX_EPOCH:  # NaN fails this too
        raise InvalidParameter(f"The parameter {where} must be a time between the years "
                               "1 and 9999.", "InvalidParameterValue")
    return epoch


def _text_epoch(text: str) -> float | None:
    """A number of seconds, or an ISO 8601 time; None if it is neither."""
    if len(text) > 64:
        return None
    try:
        return float(text)
    except ValueError:
        pass
    try:
        stamp = dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
        return (stamp if stamp.tzinfo else stamp.replace(tzinfo=dt.UTC)).timestamp()
    except (ValueError, OverflowError):
        return None


def _list(params: Params, key: str) -> list[Any]:
    value = params.get(key)
    if value is None or value == "":
        return []
    if isinstance(value, list):
        return value
    raise InvalidParameter(f"The parameter {key} must be a list.")


def _text(params: Params, key: str, *, required: bool = False) -> str | None:
    value = params.get(key)
    if value is None or value == "":
        if required:
            raise InvalidParameter(f"The parameter {key} is required.", "MissingParameter")
        return None
    if not isinstance(value, str):
        raise InvalidParameter(f"The parameter {key} must be a string.")
    return value


def _int(params: Params, key: str, default: int) -> int:
    value = params.get(key)
    if value is None or value == "":
        return default
    try:
        return int(str(value))
    except ValueError:
        raise InvalidParameter(f"The parameter {key} must be an integer.") from None


def _bool(params: Params, key: str, default: bool) -> bool:
    value = params.get(key)
    if value is None or value == "":
        return default
    if isinstance(value, bool):
        return value
    if str(value).lower() in ("true", "false"):
        return str(value).lower() == "true"
    raise InvalidParameter(f"The parameter {key} must be true or false.")


def _names(params: Params, key: str = "AlarmNames", limit: int = 100) -> list[str]:
    names = [str(n) for n in _list(params, key)]
    if len(names) > limit:
        raise InvalidParameter(f"The collection {key} must not have more than {limit} "
                               "members.")
    return names


def _page(params: Params, limit: int) -> tuple[int, int]:
    token = params.get("NextToken")
    offset = 0
    if token:
        try:
            offset = int(str(token))
        except ValueError:
            raise InvalidParameter("The parameter NextToken is invalid.",
                                   "InvalidNextToken") from None
    size = _int(params, "MaxRecords", limit)
    if not 1 <= size <= limit:
        raise InvalidParameter(f"The parameter MaxRecords must be between 1 and {limit}.")
    return offset, size


def _dims(pairs: Any) -> list[dict[str, str]]:
    return [{"Name": a, "Value": b} for a, b in pairs]


def alarm_view(alarm: AlarmRecord) -> dict[str, Any]:
    rule = alarm.rule
    return {
        "AlarmName": alarm.name,
        "AlarmArn": f"arn:openstack:cloudwatch::{alarm.project_id}:alarm:{alarm.name}",
        "AlarmDescription": rule.description or None,
        "AlarmConfigurationUpdatedTimestamp": _epoch(alarm.updated_at),
        "ActionsEnabled": alarm.actions_enabled,
        "OKActions": list(rule.actions.get("ok_actions", ())),
        "AlarmActions": list(rule.actions.get("alarm_actions", ())),
        "InsufficientDataActions": list(rule.actions.get("insufficient_data_actions", ())),
        "StateValue": alarm.state,
        "StateReason": alarm.state_reason,
        "StateReasonData": alarm.state_reason_data,
        "StateUpdatedTimestamp": alarm.state_updated_at or _epoch(alarm.updated_at),
        "MetricName": rule.metric_name,
        "Namespace": rule.namespace,
        "Statistic": rule.statistic,
        "Dimensions": _dims(rule.dimensions),
        "Period": rule.period,
        "Unit": rule.unit,
        "EvaluationPeriods": rule.evaluation_periods,
        "Threshold": rule.threshold,
        "ComparisonOperator": rule.comparison,
    }


def _epoch(value: Any) -> float:
    if isinstance(value, dt.datetime):
        stamp = value if value.tzinfo else value.replace(tzinfo=dt.UTC)
        return stamp.timestamp()
    return float(value or 0)


# -- the actions ----------------------------------------------------------------------------

async def put_metric_data(svc: AlarmService, project: str, p: Params) -> None:
    data = []
    for i, item in enumerate(_list(p, "MetricData"), 1):
        if not isinstance(item, Mapping):
            raise InvalidParameter(f"The parameter MetricData.member.{i} must be a structure.")
        entry = dict(item)
        if entry.get("Timestamp") not in (None, ""):
            entry["Timestamp"] = to_epoch(entry["Timestamp"], f"MetricData.member.{i}.Timestamp")
        else:
            entry["Timestamp"] = None
        data.append(entry)
    await svc.put_metric_data(project, p.get("Namespace"), data)
    return None


async def list_metrics(svc: AlarmService, project: str, p: Params) -> dict[str, Any]:
    offset, _ = _page({"NextToken": p.get("NextToken")}, 500)
    found, more = await svc.list_metrics(project, namespace=_text(p, "Namespace"),
                                         metric_name=_text(p, "MetricName"),
                                         dimensions=_list(p, "Dimensions"), offset=offset)
    return {"Metrics": [{"Namespace": ns, "MetricName": name, "Dimensions": _dims(dims)}
                        for ns, name, dims in found],
            "NextToken": None if more is None else str(more)}


async def get_metric_statistics(svc: AlarmService, project: str, p: Params
                                ) -> dict[str, Any]:
    name = _text(p, "MetricName", required=True)
    points = await svc.get_statistics(
        project, namespace=_text(p, "Namespace", required=True), metric_name=name,
        dimensions=_list(p, "Dimensions"),
        start=to_epoch(_require(p, "StartTime"), "StartTime"),
        end=to_epoch(_require(p, "EndTime"), "EndTime"), period=_require(p, "Period"),
        statistics=[str(s) for s in _list(p, "Statistics")], unit=p.get("Unit"))
    return {"Label": name, "Datapoints": points}


def _require(p: Params, key: str) -> Any:
    value = p.get(key)
    if value is None or value == "":
        raise InvalidParameter(f"The parameter {key} is required.", "MissingParameter")
    return value


async def put_metric_alarm(svc: AlarmService, project: str, p: Params) -> None:
    rule = rules.make_rule(
        namespace=_require(p, "Namespace"), metric_name=_require(p, "MetricName"),
        statistic=_require(p, "Statistic"), period=_require(p, "Period"),
        evaluation_periods=_require(p, "EvaluationPeriods"),
        threshold=_require(p, "Threshold"), comparison=_require(p, "ComparisonOperator"),
        dimensions=rules.dimensions_of(_list(p, "Dimensions")), unit=p.get("Unit"),
        description=_text(p, "AlarmDescription") or "",
        actions={"alarm_actions": [str(u) for u in _list(p, "AlarmActions")],
                 "ok_actions": [str(u) for u in _list(p, "OKActions")],
                 "insufficient_data_actions": [str(u) for u in
                                               _list(p, "InsufficientDataActions")]})
    await svc.put_alarm(project, _text(p, "AlarmName", required=True), rule,
                        actions_enabled=_bool(p, "ActionsEnabled", True))
    return None


async def describe_alarms(svc: AlarmService, project: str, p: Params) -> dict[str, Any]:
    offset, size = _page(p, 100)
    names = _names(p)
    prefix = _text(p, "AlarmNamePrefix")
    if names and prefix:
        raise InvalidParameter("AlarmNames and AlarmNamePrefix cannot be used together.",
                               "InvalidParameterCombination")
    found = await svc.describe(project, names=names, prefix=prefix,
                               state=_text(p, "StateValue"),
                               action_prefix=_text(p, "ActionPrefix"))
    page = found[offset:offset + size]
    more = offset + size < len(found)
    return {"MetricAlarms": [alarm_view(a) for a in page],
            "NextToken": str(offset + size) if more else None}


async def describe_alarms_for_metric(svc: AlarmService, project: str, p: Params
                                     ) -> dict[str, Any]:
    period = p.get("Period")
    found = await svc.for_metric(
        project, namespace=str(_require(p, "Namespace")),
        metric_name=str(_require(p, "MetricName")), dimensions=_list(p, "Dimensions"),
        statistic=_text(p, "Statistic"),
        period=None if period in (None, "") else _int(p, "Period", 0),
        unit=_text(p, "Unit"))
    return {"MetricAlarms": [alarm_view(a) for a in found]}


async def describe_alarm_history(svc: AlarmService, project: str, p: Params
                                 ) -> dict[str, Any]:
    offset, size = _page(p, 100)
    start, end = p.get("StartDate"), p.get("EndDate")
    rows = await svc.history(project, alarm_name=_text(p, "AlarmName"),
                             item_type=_text(p, "HistoryItemType"),
                             start=None if start in (None, "") else to_epoch(start, "StartDate"),
                             end=None if end in (None, "") else to_epoch(end, "EndDate"),
                             limit=offset + size + 1)
    page = rows[offset:offset + size]
    # masked again as read: rows written before the history was masked at rest
    return {"AlarmHistoryItems": [{"AlarmName": name, "AlarmType": "MetricAlarm",
                                   "Timestamp": stamp, "HistoryItemType": kind,
                                   "HistorySummary": rules.mask_url_secrets(summary),
                                   "HistoryData": rules.mask_url_secrets(data)}
                                  for name, kind, summary, data, stamp in page],
            "NextToken": str(offset + size) if len(rows) > offset + size else None}


async def enable_alarm_actions(svc: AlarmService, project: str, p: Params) -> None:
    await svc.set_actions_enabled(project, _names(p), True)
    return None


async def disable_alarm_actions(svc: AlarmService, project: str, p: Params) -> None:
    await svc.set_actions_enabled(project, _names(p), False)
    return None


async def set_alarm_state(svc: AlarmService, project: str, p: Params) -> None:
    data = p.get("StateReasonData")
    if isinstance(data, (dict, list)):
        data = json.dumps(data)
    await svc.set_state(project, str(_require(p, "AlarmName")), p.get("StateValue"),
                        p.get("StateReason"), data if data not in ("",) else None)
    return None


async def delete_alarms(svc: AlarmService, project: str, p: Params) -> None:
    names = _names(p)
    if not names:
        raise InvalidParameter("The parameter AlarmNames is required.", "MissingParameter")
    await svc.delete(project, names)
    return None


ACTIONS: dict[str, Handler] = {
    "PutMetricData": put_metric_data,
    "ListMetrics": list_metrics,
    "GetMetricStatistics": get_metric_statistics,
    "PutMetricAlarm": put_metric_alarm,
    "DescribeAlarms": describe_alarms,
    "DescribeAlarmsForMetric": describe_alarms_for_metric,
    "DescribeAlarmHistory": describe_alarm_history,
    "EnableAlarmActions": enable_alarm_actions,
    "DisableAlarmActions": disable_alarm_actions,
    "SetAlarmState": set_alarm_state,
    "DeleteAlarms": delete_alarms,
}


class CloudWatchService:
    """What the CloudWatch API calls: one action by name, over the AlarmService of this
    process (:class:`~kiln.engine.service.interface.CloudWatchAPI`)."""

    #: every action the API may dispatch, and those a stack's own keypair may call
    actions = frozenset(ACTIONS)
    agent_actions = AGENT_ACTIONS

    def __init__(self, alarms: AlarmService) -> None:
        self.alarms = alarms

    async def call(self, project_id: str, action: str,
                   params: Mapping[str, Any]) -> dict[str, Any] | None:
        """Run ``action`` (one of :attr:`actions`) for the caller's project; the answer
        in CloudWatch's field names, None for an action that answers nothing."""
        return await ACTIONS[action](self.alarms, project_id, params)

    async def stack_tree_alarms(self, project_id: str, stack_id: str,
                                names: Sequence[str]) -> set[str]:
        return await self.alarms.stack_tree_alarms(project_id, stack_id, names)
