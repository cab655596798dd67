"""Child stacks run by the same engine, for nested-stack plugins (no RPC round trip).

Filled in with the nested-stack plugins; the engine only needs :meth:`facade_for`
until then.
"""

from __future__ import annotations

from typing import Any


class NestedOps:
    def __init__(self, service: Any) -> None:
        self.service = service

    async def facade_for(self, rec: Any) -> dict[str, Any]:
        """What ``resource_facade`` returns inside a child stack of ``rec``'s parent."""
        return {}
