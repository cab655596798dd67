"""EngineService, the one interface the APIs call (docs/contracts.md §5), and what its
calls take and return. The API imports the engine only through this package.

``EngineService`` itself (the façade over the engine's machinery) is imported on first
use, so an API module that names only the Protocol (``EngineServiceAPI``), ``Identity`` or
``RequestContext`` does not load the engine, the store or the plugins."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kiln.engine.model.context import RequestContext
from kiln.engine.service.interface import EngineServiceAPI, Identity

if TYPE_CHECKING:
    from kiln.engine.service.engine_service import EngineService

__all__ = ["EngineService", "EngineServiceAPI", "Identity", "RequestContext"]


def __getattr__(name: str) -> Any:
    """``EngineService``, imported when first asked for (PEP 562)."""
    if name == "EngineService":
        from kiln.engine.service.engine_service import EngineService
        return EngineService
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
