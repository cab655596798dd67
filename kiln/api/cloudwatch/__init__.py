"""The CloudWatch-compatible query API (Heat's heat-api-cloudwatch), on
``[heat_api_cloudwatch] bind_host/bind_port``: :mod:`.protocols` (the wire formats),
:mod:`.operations` (the eleven actions), :mod:`.app` (signatures, errors, dispatch)."""
