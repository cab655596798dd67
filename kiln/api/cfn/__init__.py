"""The CloudFormation-compatible query API (Heat's heat-api-cfn), on its own port.

``app.create_cfn_app`` builds it; ``actions`` holds one function per ``Action=``;
``render`` writes Heat's XML (or JSON) shapes; ``signals`` serves the pre-signed
wait-condition and signal URLs servers call. It reaches the engine only through
EngineService, and authenticates every request with :mod:`kiln.api.aws`.
"""
