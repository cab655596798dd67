"""The alarm side of a Kiln process: the AlarmService the CloudWatch API serves, and
(in ``kiln serve`` and ``kiln engine``) the watcher. Built after the EngineService has
started, on the alarm door of its store (``store.alarms``); stopped before it.

In the engine's service layer (issue 23): the watcher runs an alarm's actions as this
service's signals and updates (:mod:`.alarm_actions`), so ``kiln engine``, which serves
no HTTP, runs it without importing any API. The CloudWatch app is built by the API
(:func:`kiln.api.cloudwatch.app.cloudwatch_app`) over :attr:`AlarmProcess.cloudwatch`.
"""

from __future__ import annotations

from typing import Any, Protocol

from kiln.alarms.service import AlarmService
from kiln.alarms.watcher import Watcher
from kiln.engine.service.alarm_actions import EngineActions
from kiln.engine.service.cloudwatch import CloudWatchService
from kiln.engine.service.interface import EngineServiceAPI
from kiln.engine.store import Store


class AlarmHost(EngineServiceAPI, Protocol):
    """What the alarm side is built on: the service (its actions run as the service's
    signals and updates) and the store it shares (the alarms' door)."""

    @property
    def store(self) -> Store: ...


class AlarmProcess:
    def __init__(self, conf: Any, service: AlarmHost, *, watch: bool) -> None:
        opts = conf.kiln_alarms
        #: the metrics and alarms the CloudWatch API serves, on the engine store's door
        self.alarms: AlarmService = service.store.alarms(
            retention=float(opts.metric_retention),
            max_datums=int(opts.max_datums_per_request),
            runner=EngineActions(service,
                                 allowed_hosts=list(conf.template_url_allowed_hosts)))
        #: the CloudWatch actions over them, what the CloudWatch API is handed
        self.cloudwatch = CloudWatchService(self.alarms)
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
