"""AWS::CloudWatch::Alarm: the seed templates' watch rule (kiln.resources.alarm), which
Kiln's watcher evaluates on metrics pushed to its CloudWatch-compatible API."""

from __future__ import annotations

from kiln.resources.alarm import WatchAlarm
from kiln.resources.base import SupportStatus


class CloudWatchAlarm(WatchAlarm):
    type_name = "AWS::CloudWatch::Alarm"
    support_status = SupportStatus()
    description = ("A watch-rule alarm evaluated by Kiln's watcher on metrics pushed to "
                   "its CloudWatch-compatible API (cfn-push-stats, any CloudWatch client).")
