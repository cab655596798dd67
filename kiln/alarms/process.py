"""The alarm side of a Kiln process: the AlarmService the CloudWatch API serves, and
(in ``kiln serve`` and ``kiln engine``) the watcher. Built after the EngineService has
started, on its database; stopped before it."""

from __future__ import annotations

from typing import Any

from kiln.alarms.actions import EngineActions
from kiln.alarms.service import AlarmService
from kiln.alarms.watcher import Watcher


class AlarmProcess:
    def __init__(self, conf: Any, service: Any, *, watch: bool) -> None:
        opts = conf.kiln_alarms
        self.conf = conf
        self.service = service
        self.alarms = AlarmService(service.db, retention=float(opts.metric_retention),
                                   max_datums=int(opts.max_datums_per_request),
                                   runner=EngineActions(service))
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
        against the keypairs Kiln issued (the no-auth setup's credential store)."""
        from kiln.api.aws.credentials import SecretAuthenticator
        from kiln.api.aws.keypairs import IssuedKeypairs
        from kiln.api.cloudwatch.app import create_cloudwatch_app
        from kiln.db import keypairs

        async def find(access_key: str) -> dict[str, Any] | None:
            found = await self.service.db.run(keypairs.get_keypair, access_key)
            if found is None:
                return None
            return {"secret": found.secret, "project_id": found.project_id,
                    "user_id": found.user_id, "stack_id": found.stack_id,
                    "resource_name": found.resource_name}

        return create_cloudwatch_app(self.alarms, SecretAuthenticator(IssuedKeypairs(find)))
