"""What an alarm is and how it is judged (pure: no I/O).

An alarm watches one metric (namespace, name, dimensions) through one statistic over
``period``-second windows. At each evaluation the last ``evaluation_periods`` whole
windows are looked at: every window has data and breaches the threshold → ALARM; no
window has any data → INSUFFICIENT_DATA; otherwise OK. Data is summarised in
:data:`BUCKET`-second buckets (count, sum, minimum, maximum), which combine exactly into
any window whose length is a multiple of the bucket, so periods must be multiples of
10 seconds (AWS allows 10, 30 and multiples of 60).

Validation failures raise :class:`InvalidParameter` with the AWS error code and a
message naming the parameter.
"""

from __future__ import annotations

import functools
import json
import math
import operator
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from kiln.errors import InvalidAlarmParameter

BUCKET = 10
STATES = (OK, ALARM, INSUFFICIENT_DATA) = ("OK", "ALARM", "INSUFFICIENT_DATA")
STATISTICS = ("SampleCount", "Average", "Sum", "Minimum", "Maximum")
COMPARISONS: dict[str, Callable[[float, float], bool]] = {
    "GreaterThanOrEqualToThreshold": operator.ge,
    "GreaterThanThreshold": operator.gt,
    "LessThanThreshold": operator.lt,
    "LessThanOrEqualToThreshold": operator.le,
}
UNITS = (
    "Seconds", "Microseconds", "Milliseconds", "Bytes", "Kilobytes", "Megabytes",
    "Gigabytes", "Terabytes", "Bits", "Kilobits", "Megabits", "Gigabits", "Terabits",
    "Percent", "Count", "Bytes/Second", "Kilobytes/Second", "Megabytes/Second",
    "Gigabytes/Second", "Terabytes/Second", "Bits/Second", "Kilobits/Second",
    "Megabits/Second", "Gigabits/Second", "Terabits/Second", "Count/Second", "None")
ACTION_KINDS = {ALARM: "alarm_actions", OK: "ok_actions",
                INSUFFICIENT_DATA: "insufficient_data_actions"}
MAX_DIMENSIONS = 10
_COMPACT = json.JSONEncoder(separators=(",", ":"))
MAX_ACTIONS = 5


#: a signature or token in a URL's query (pre-signed alarm URLs, Swift temp URLs)
_URL_SECRETS = re.compile(r"((?:^|[?&;])(?:Signature|X-Amz-Signature|X-Amz-Security-Token|"
                          r"SecurityToken|temp_url_sig)=)[^&;\s\"'<>]*", re.IGNORECASE)


def mask_url_secrets(text: str) -> str:
    """``text`` with every URL signature's value shown as ``***``: an alarm's history
    names its action URLs, and a pre-signed one's signature is a credential."""
    return _URL_SECRETS.sub(r"\1***", text)


#: a bad request parameter; ``code`` is AWS's error code (defined with the shared errors,
#: so the CloudWatch API catches it without importing this package)
InvalidParameter = InvalidAlarmParameter


Dimensions = tuple[tuple[str, str], ...]


def dimensions_of(pairs: Iterable[Mapping[str, Any]], where: str = "Dimensions"
                  ) -> Dimensions:
    """Sorted (name, value) pairs from ``[{"Name", "Value"}]``; names unique."""
    out: dict[str, str] = {}
    for i, pair in enumerate(pairs, 1):
        name, value = pair.get("Name"), pair.get("Value")
        if not isinstance(name, str) or not name or len(name) > 255:
            raise InvalidParameter(f"The parameter {where}.member.{i}.Name is required and "
                                   "must be 1 to 255 characters.")
        if not isinstance(value, str) or not value or len(value) > 1024:
            raise InvalidParameter(f"The parameter {where}.member.{i}.Value is required and "
                                   "must be 1 to 1024 characters.")
        if name in out:
            raise InvalidParameter(f"The collection {where} must not contain duplicate "
                                   f"dimension names ({name}).")
        out[name] = value
    if len(out) > MAX_DIMENSIONS:
        raise InvalidParameter(f"The collection {where} must not have more than "
                               f"{MAX_DIMENSIONS} members.")
    return tuple(sorted(out.items()))


@functools.lru_cache(maxsize=8192)
def dimensions_key(dims: Dimensions) -> str:
    """The stored form of a metric's dimensions (canonical, compared by equality).
    Remembered: PutMetricData computes it for every point, and a fleet pushes the same
    few dimension sets over and over (json.dumps with options builds an encoder per
    call, the largest cost of checking a point)."""
    return _COMPACT.encode([list(p) for p in dims])


def check_unit(unit: Any, where: str = "Unit") -> str | None:
    if unit is None or unit == "":
        return None
    if unit not in UNITS:
        raise InvalidParameter(f"The parameter {where} must be one of: {', '.join(UNITS)}.")
    return str(unit)


@dataclass(frozen=True)
class Rule:
    """An alarm's definition."""

    namespace: str
    metric_name: str
    statistic: str
    period: int
    evaluation_periods: int
    threshold: float
    comparison: str
    dimensions: Dimensions = ()
    unit: str | None = None
    description: str = ""
    actions: Mapping[str, Sequence[str]] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {"namespace": self.namespace, "metric_name": self.metric_name,
                "statistic": self.statistic, "period": self.period,
                "evaluation_periods": self.evaluation_periods, "threshold": self.threshold,
                "comparison": self.comparison, "dimensions": [list(d) for d in self.dimensions],
                "unit": self.unit, "description": self.description,
                "actions": {k: list(v) for k, v in self.actions.items()}}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Rule:
        return cls(namespace=data["namespace"], metric_name=data["metric_name"],
                   statistic=data["statistic"], period=int(data["period"]),
                   evaluation_periods=int(data["evaluation_periods"]),
                   threshold=float(data["threshold"]), comparison=data["comparison"],
                   dimensions=tuple((str(a), str(b)) for a, b in data.get("dimensions", [])),
                   unit=data.get("unit"), description=data.get("description") or "",
                   actions={k: tuple(v) for k, v in (data.get("actions") or {}).items()})

    def actions_for(self, state: str) -> Sequence[str]:
        return tuple(self.actions.get(ACTION_KINDS[state], ()))


def make_rule(*, namespace: Any, metric_name: Any, statistic: Any, period: Any,
              evaluation_periods: Any, threshold: Any, comparison: Any,
              dimensions: Dimensions = (), unit: Any = None, description: Any = "",
              actions: Mapping[str, Sequence[str]] | None = None) -> Rule:
    """A checked :class:`Rule` (parameters named as PutMetricAlarm names them)."""
    for value, name in ((namespace, "Namespace"), (metric_name, "MetricName")):
        if not isinstance(value, str) or not value or len(value) > 255:
            raise InvalidParameter(f"The parameter {name} is required and must be 1 to 255 "
                                   "characters.", "MissingParameter" if not value
                                   else "InvalidParameterValue")
    if statistic not in STATISTICS:
        raise InvalidParameter(f"The parameter Statistic must be one of: "
                               f"{', '.join(STATISTICS)}.")
    if comparison not in COMPARISONS:
        raise InvalidParameter(f"The parameter ComparisonOperator must be one of: "
                               f"{', '.join(COMPARISONS)}.")
    period_s = _integer(period, "Period")
    if period_s < BUCKET or period_s % BUCKET:
        raise InvalidParameter(f"The parameter Period must be a multiple of {BUCKET} "
                               "seconds.")
    periods = _integer(evaluation_periods, "EvaluationPeriods")
    if periods < 1 or periods * period_s > 86400:
        raise InvalidParameter("The parameter EvaluationPeriods must be at least 1, and "
                               "EvaluationPeriods times Period at most one day.")
    limit = _number(threshold, "Threshold")
    for kind, urls in (actions or {}).items():
        if len(urls) > MAX_ACTIONS:
            raise InvalidParameter(f"The collection {kind} must not have more than "
                                   f"{MAX_ACTIONS} members.")
    return Rule(namespace=namespace, metric_name=metric_name, statistic=statistic,
                period=period_s, evaluation_periods=periods, threshold=limit,
                comparison=comparison, dimensions=dimensions, unit=check_unit(unit),
                description=str(description or ""),
                actions={k: tuple(v) for k, v in (actions or {}).items()})


def _integer(value: Any, name: str) -> int:
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise InvalidParameter(f"The parameter {name} must be an integer.") from None
    if not number.is_integer():
        raise InvalidParameter(f"The parameter {name} must be an integer.")
    return int(number)


def _number(value: Any, name: str) -> float:
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise InvalidParameter(f"The parameter {name} must be a number.") from None
    if not math.isfinite(number):
        raise InvalidParameter(f"The parameter {name} must be a finite number.")
    return number


# -- statistics ---------------------------------------------------------------------------

@dataclass(slots=True)
class Aggregate:
    """Count, sum, minimum and maximum of some data points (combinable)."""

    count: int = 0
    total: float = 0.0
    low: float = math.inf
    high: float = -math.inf

    def add(self, value: float, count: int = 1, low: float | None = None,
            high: float | None = None) -> None:
        self.count += count
        self.total += value
        self.low = min(self.low, value if low is None else low)
        self.high = max(self.high, value if high is None else high)

    def merge(self, other: Aggregate) -> None:
        if other.count:
            self.add(other.total, other.count, other.low, other.high)

    def statistic(self, name: str) -> float:
        if name == "SampleCount":
            return float(self.count)
        if name == "Sum":
            return self.total
        if name == "Average":
            return self.total / self.count
        if name == "Minimum":
            return self.low
        return self.high


def bucket_of(timestamp: float) -> int:
    return int(timestamp // BUCKET) * BUCKET


@dataclass(frozen=True)
class Verdict:
    state: str
    reason: str
    #: the statistic of each window, oldest first (None: no data)
    values: tuple[float | None, ...]


def evaluate(rule: Rule, buckets: Mapping[int, Aggregate], now: float) -> Verdict:
    """Judge ``rule`` on its metric's ``buckets`` (start time → aggregate) at ``now``."""
    end = bucket_of(now)
    values: list[float | None] = []
    for k in range(rule.evaluation_periods, 0, -1):
        stop = end - (k - 1) * rule.period
        start = stop - rule.period
        window = Aggregate()
        for b in range(start, stop, BUCKET):
            agg = buckets.get(b)
            if agg is not None:
                window.merge(agg)
        values.append(window.statistic(rule.statistic) if window.count else None)
    present = [v for v in values if v is not None]
    if not present:
        return Verdict(INSUFFICIENT_DATA, "Insufficient Data: no datapoints were received "
                       f"for {rule.evaluation_periods} period(s).", tuple(values))
    compare = COMPARISONS[rule.comparison]
    shown = ", ".join("no data" if v is None else _fmt(v) for v in values)
    if len(present) == len(values) and all(compare(v, rule.threshold) for v in present):
        return Verdict(ALARM, f"Threshold Crossed: {len(values)} datapoint(s) [{shown}] "
                       f"crossed the threshold ({_fmt(rule.threshold)}).", tuple(values))
    return Verdict(OK, f"Threshold Crossed: datapoints [{shown}] did not all cross the "
                   f"threshold ({_fmt(rule.threshold)}).", tuple(values))


def _fmt(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else repr(value)
