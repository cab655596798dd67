"""The web dashboard: static pages served by ``kiln serve`` that use the native API.

The dashboard is plain HTML, CSS and hand-written ES modules under ``static/`` (no build
step, no third-party script), shipped as package data so ``pip install`` alone serves
it. It talks to ``/v1/{project}/...`` exactly as any client does (same authentication,
same paging and filters), and follows a running action through the event stream
(``GET .../events?stream=true``).

``/`` is shared with Heat's version document: a request whose ``Accept`` header asks
for HTML (a browser navigating) gets the dashboard; any other (heatclient, curl, keystone
catalog checks) gets the version document, as from Heat. ``[kiln_api] dashboard = false``
turns the dashboard off entirely: ``/`` is then always the version document and
``/dashboard/...`` answers 404.
"""

from __future__ import annotations

import mimetypes
from collections.abc import Awaitable, Callable
from functools import lru_cache
from importlib import resources

from oslo_config import cfg
from starlette.requests import Request
from starlette.responses import Response

from kiln.errors import HTTPNotFound

#: where the assets are served from (the page refers to them relative to this)
PREFIX = "/dashboard/"
_TYPES = {".js": "text/javascript", ".css": "text/css", ".html": "text/html",
          ".svg": "image/svg+xml", ".png": "image/png"}


def enabled(conf: cfg.ConfigOpts) -> bool:
    try:
        return bool(conf.kiln_api.dashboard)
    except (cfg.NoSuchOptError, cfg.NoSuchGroupError, AttributeError):
        return False


def wants_html(request: Request) -> bool:
    """A browser navigation: ``text/html`` accepted explicitly (not via ``*/*``), and
    preferred to JSON when both are named."""
    accept = request.headers.get("accept", "").lower()
    if "text/html" not in accept:
        return False
    if "application/json" not in accept:
        return True
    return accept.index("text/html") < accept.index("application/json")


@lru_cache(maxsize=64)
def _asset(name: str) -> bytes | None:
    folder = resources.files("kiln.dashboard").joinpath("static")
    parts = name.split("/")
    if any(part in ("", ".", "..") or part.startswith(".") for part in parts):
        return None
    node = folder
    for part in parts:
        node = node.joinpath(part)
    return node.read_bytes() if node.is_file() else None


def _content_type(name: str) -> str:
    for suffix, kind in _TYPES.items():
        if name.endswith(suffix):
            return kind
    return mimetypes.guess_type(name)[0] or "application/octet-stream"


def page() -> Response:
    body = _asset("index.html")
    assert body is not None, "kiln/dashboard/static/index.html is missing from the package"
    return Response(body, media_type="text/html",
                    headers={"Cache-Control": "no-cache",
                             "Content-Security-Policy": CSP, "X-Frame-Options": "DENY"})


#: the page runs only its own scripts and styles and talks only to this server
CSP = ("default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
       "connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'")


def root(versions: Callable[[Request], Awaitable[Response]],
         conf: cfg.ConfigOpts) -> Callable[[Request], Awaitable[Response]]:
    """The ``/`` endpoint: the dashboard to a browser, Heat's version document otherwise."""
    on = enabled(conf)

    async def endpoint(request: Request) -> Response:
        if on and wants_html(request):
            return page()
        return await versions(request)

    return endpoint


def asset_endpoint(conf: cfg.ConfigOpts) -> Callable[[Request], Awaitable[Response]]:
    on = enabled(conf)

    async def endpoint(request: Request) -> Response:
        name = str(request.path_params["path"])
        body = _asset(name) if on else None
        if body is None:
            raise HTTPNotFound("The resource could not be found.")
        return Response(body, media_type=_content_type(name),
                        headers={"Cache-Control": "no-cache",
                                 "X-Content-Type-Options": "nosniff"})

    return endpoint
