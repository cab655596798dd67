"""The ASGI application serving Heat's Orchestration API v1.

``create_app`` is the one seam the CLI uses: it receives the EngineService and the
loaded options and returns a Starlette app that knows nothing else of Kiln.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

if TYPE_CHECKING:
    from oslo_config import cfg


async def _versions(request: Request) -> Response:
    base = str(request.base_url)
    body = {"versions": [{"id": "v1.0", "status": "CURRENT",
                          "links": [{"rel": "self", "href": base + "v1/"}]}]}
    return JSONResponse(body, status_code=300)


def create_app(service: Any, conf: cfg.ConfigOpts) -> Starlette:
    """Build the API app around ``service`` (an EngineService) and ``conf`` (kiln.conf.CONF)."""
    app = Starlette(routes=[Route("/", _versions, methods=["GET"])])
    app.state.service = service
    app.state.conf = conf
    return app
