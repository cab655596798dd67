"""Deeply nested bodies are refused with a 400, and the server lives on.

libyaml recurses on the C stack: before the API parsed with the template layer's guarded
loader, one 200 KB body of nested brackets (well under max_template_size) crashed the
whole `kiln serve` process with a segmentation fault."""

from __future__ import annotations

import httpx
import pytest

from tests.support.server import KilnProcess

DEEP = "[" * 200_000


def _post_stack(url: str, **fields: object) -> httpx.Response:
    body = {"stack_name": "deep", "template": "heat_template_version: 2018-08-31\n",
            **fields}
    return httpx.post(f"{url}/stacks", json=body, timeout=30)


@pytest.mark.parametrize("fields", [
    {"template": DEEP},
    {"environment": "parameters: " + DEEP},
    {"files": {"env.yaml": "parameters: " + DEEP}, "environment_files": ["env.yaml"]},
], ids=["template", "environment", "environment_file"])
def test_deep_nesting_is_a_client_error_and_the_server_survives(
        kiln_server: KilnProcess, fields: dict[str, object]) -> None:
    url = str(kiln_server.endpoint("demo"))
    resp = _post_stack(url, **fields)
    assert resp.status_code == 400, resp.text
    assert "nested too deeply" in resp.json()["error"]["message"]
    # the same server still answers
    assert httpx.get(f"{url}/stacks", timeout=30).status_code == 200
