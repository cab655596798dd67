"""The CloudWatch-compatible query API (Heat's heat-api-cloudwatch), on
``[heat_api_cloudwatch] bind_host/bind_port``: :mod:`.protocols` (the wire formats),
:mod:`.operations` (the eleven actions), :mod:`.app` (signatures, errors, dispatch).

Also the alarm side of a process, which talks to EngineService as the APIs do and so
sits in this layer, above kiln.alarms (which knows only the database):
:mod:`.alarm_process` (the AlarmService, the watcher, the app) and :mod:`.alarm_actions`
(an alarm's actions as EngineService signals or POSTs)."""
