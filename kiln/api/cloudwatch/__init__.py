"""The CloudWatch-compatible query API (Heat's heat-api-cloudwatch), on
``[heat_api_cloudwatch] bind_host/bind_port``: :mod:`.protocols` (the wire formats),
:mod:`.operations` (the eleven actions), :mod:`.app` (signatures, errors, dispatch).
(:func:`.app.cloudwatch_app`: a process's app over the AlarmService its engine service
built). The alarm side of a process (the AlarmService, the watcher, an alarm's actions as
EngineService signals or POSTs) is the engine's: :mod:`kiln.engine.service.alarm_process`,
so ``kiln engine`` runs the watcher without importing this package."""
