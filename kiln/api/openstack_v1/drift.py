"""Kiln's drift routes beside Heat's (Heat has none; documented in openapi.yaml):

- ``POST   .../stacks/{name}/{id}/drift``: start a detection of the whole stack, nested
  stacks included; 202 with ``{"drift": {...}}`` in ``DETECTION_IN_PROGRESS``.
- ``GET    .../stacks/{name}/{id}/drift``: the newest detection, each resource's newest
  result (``?detection_id=`` names one detection instead).
- ``POST   .../stacks/{name}/{id}/resources/{resource}/drift``: detect one resource now.

A stack with an action in progress is refused with Heat's 409 ``ActionInProgress``.
"""

from __future__ import annotations

from typing import Any

from starlette.responses import Response

from kiln.api.faults import bad_request
from kiln.api.openstack_v1.common import Call, json_response

#: detection ids are uuids
MAX_ID = 36


async def detect(call: Call) -> Response:
    await call.optional_body()  # takes none, but a sent one is bounded and must parse
    run = await call.service.detect_stack_drift(call.ctx, call.identity())
    return json_response({"drift": run}, 202)


async def show(call: Call) -> Any:
    wanted = call.query.get("detection_id")
    if wanted is None:
        return {"drift": await call.service.latest_drift(call.ctx, call.identity())}
    if not wanted or len(wanted) > MAX_ID:
        raise bad_request("detection_id must be a drift detection's id")
    identity = call.identity()
    run = await call.service.drift_detection(call.ctx, wanted)
    if run["stack_id"] != identity.get("stack_id"):
        from kiln.errors import EntityNotFound

        raise EntityNotFound(f"The drift detection ({wanted}) could not be found.")
    return {"drift": run}


async def detect_resource(call: Call) -> Any:
    await call.optional_body()  # takes none, but a sent one is bounded and must parse
    entry = await call.service.detect_resource_drift(call.ctx, call.identity(),
                                                     call.path("resource_name"))
    return {"resource_drift": entry}
