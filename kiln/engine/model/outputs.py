"""Stack outputs in Heat's shape, resolved once at the end of each action and stored.

Storing them means GET /stacks/{id} needs no plugin, template or resource to answer.
"""

from __future__ import annotations

import json
from typing import Any

from kiln.engine.model.live_stack import LiveStack
from kiln.engine.model.shapes import OutputReply as OutputReply
from kiln.errors import KilnError

NO_DESCRIPTION = "No description given"


def _jsonable(value: Any) -> Any:
    try:
        json.dumps(value)
        return value
    except (TypeError, ValueError):
        return str(value)


def resolve_all(stack: LiveStack) -> list[OutputReply]:
    """``[{"output_key", "description", "output_value" | "output_error"}]``."""
    if not stack.is_bound:
        return []
    try:
        results = stack.bound.outputs()
    except KilnError as exc:  # an output section that cannot resolve at all
        return [{"output_key": "", "description": NO_DESCRIPTION, "output_value": None,
                 "output_error": str(exc)}]
    out: list[OutputReply] = []
    for key, res in results.items():
        item: OutputReply = {"output_key": key,
                             "description": res.description or NO_DESCRIPTION,
                             "output_value": None}
        if res.error:
            item["output_error"] = str(res.error)
        else:
            item["output_value"] = _jsonable(res.value)
        out.append(item)
    return out
