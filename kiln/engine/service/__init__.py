"""EngineService, the one interface the APIs call (docs/contracts.md §5), and what its
calls take and return. The API imports the engine only through this package."""

from kiln.engine.model.context import RequestContext
from kiln.engine.service.engine_service import EngineService
from kiln.engine.service.interface import EngineServiceAPI, Identity

__all__ = ["EngineService", "EngineServiceAPI", "Identity", "RequestContext"]
