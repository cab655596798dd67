from __future__ import annotations

from kiln.api.app import create_app
from kiln.conf import CONF


def test_factory_returns_asgi_app_holding_service() -> None:
    marker = object()
    app = create_app(marker, CONF)
    assert app.state.service is marker
