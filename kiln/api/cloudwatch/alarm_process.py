"""The alarm side of a Kiln process: the AlarmService the CloudWatch API serves, and
(in ``kiln serve`` and ``kiln engine``) the watcher. Built after the EngineService has
started, on its database; stopped before it. In the API layer because it wires the
CloudWatch app and the engine's signals (kiln.alarms below it knows neither)."""

from __future__ import annotations

from typing import Any

from kiln.alarms.service import AlarmService
from kiln.alarms.watcher import Watcher
from kiln.api.cloudwatch.alarm_actions import EngineActions


class AlarmProcess:
    def __init__(self, conf: Any, service: Any, *, watch: bool) -> None:
        opts = conf.kiln_alarms
        self.conf = conf
        self.service = service
        self.alarms = AlarmService(service.db, retention=float(opts.metric_retention),
                                   max_datums=int(opts.max_datums_per_request),
                                   runner=EngineActions(
                                       service, allowed_hosts=list(
                                           conf.template_url_allowed_hosts)))
        self.watcher = Watcher(self.alarms, interval=float(opts.evaluation_interval),
                               lease_ttl=float(opts.lease_ttl),
                               history_retention=float(opts.history_retention)
                               ) if watch else None

    def start(self) -> None:
        if self.watcher is not None:
            self.watcher.start()

    async def stop(self) -> None:
        if self.watcher is not None:
            await self.watcher.stop()
        await self.alarms.flush()

    def app(self) -> Any:
        """The CloudWatch API over this process's AlarmService, checking signatures
        through Keystone in keystone mode, else against the keypairs Kiln issued."""
        from kiln.api.aws.keypairs import service_signature_checker
        from kiln.api.cloudwatch.app import create_cloudwatch_app
        from kiln.api.ratelimit import shared_limits

        return create_cloudwatch_app(self.alarms,
                                     service_signature_checker(self.conf, self.service),
                                     limits=shared_limits(self.conf))
