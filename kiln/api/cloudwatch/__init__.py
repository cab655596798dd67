"""The CloudWatch-compatible query API (Heat's heat-api-cloudwatch), on
``[heat_api_cloudwatch] bind_host/bind_port``: :mod:`.protocols` (the wire formats) and
:mod:`.app` (signatures, errors, dispatch). The eleven actions are the engine service's
(:mod:`kiln.engine.service.cloudwatch`): :func:`.app.cloudwatch_app` is handed them as
the other APIs are handed EngineService, and this package imports neither the alarms nor
the database. The alarm side of a process (the AlarmService, the watcher, an alarm's
actions as EngineService signals or POSTs) is the engine's too:
:mod:`kiln.engine.service.alarm_process`, so ``kiln engine`` runs the watcher without
importing this package."""
