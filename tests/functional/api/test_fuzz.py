"""Property-based fuzzing of every operation in the published OpenAPI description.

schemathesis generates requests (valid and invalid bodies, parameters, paths) for each
operation of kiln/api/openapi.yaml and sends them to a real ``kiln serve``. Whatever a
client sends, Kiln must never answer with a server error, and every error must be Heat's
fault body. Examples per operation are bounded so the run stays well under two minutes.
"""

from __future__ import annotations

from importlib import resources
from typing import Any

import pytest
import requests
import schemathesis
from hypothesis import HealthCheck, Phase, settings

MAX_EXAMPLES = 10


@pytest.fixture(scope="module")
def session() -> Any:
    with requests.Session() as sess:
        yield sess


schema = schemathesis.openapi.from_path(
    str(resources.files("kiln.api").joinpath("openapi.yaml")))


@schema.parametrize()
@settings(max_examples=MAX_EXAMPLES, deadline=None, derandomize=True,
          phases=[Phase.explicit, Phase.generate],
          suppress_health_check=list(HealthCheck))
def test_no_server_errors(case: Any, kiln_server: Any, session: Any) -> None:
    response = case.call(base_url=kiln_server.url, session=session, timeout=30,
                         allow_redirects=False)
    assert response.status_code < 500, (
        f"{case.method} {case.formatted_path} {case.query} -> {response.status_code}: "
        f"{response.text}")
    request_ids = response.headers.get("x-openstack-request-id") or [""]
    assert request_ids[0].startswith("req-")
    if response.status_code >= 400:
        body = response.json()
        assert set(body) == {"code", "title", "explanation", "error"}, body
        assert body["code"] == response.status_code
        assert body["error"]["traceback"] is None
