"""AWS::CloudWatch::Alarm: the seed templates' watch rule (kiln.resources.common.alarm), which
Kiln's watcher evaluates on metrics pushed to its CloudWatch-compatible API."""

from __future__ import annotations

from kiln.resources.base import SupportStatus
from kiln.resources.common.alarm import WatchAlarm


class CloudWatchAlarm(WatchAlarm):
    type_name = "AWS::CloudWatch::Alarm"
    support_status = SupportStatus()
    description = ("A watch-rule alarm evaluated by Kiln's watcher on metrics pushed to "
                   "its CloudWatch-compatible API (cfn-push-stats, any CloudWatch client).")
