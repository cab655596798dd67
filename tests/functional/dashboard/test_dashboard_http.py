"""The dashboard as served over HTTP by a real ``kiln serve``: browsers get the page at
``/``, API clients keep Heat's version document there, the assets come from the
installed package, and ``[kiln_api] dashboard = false`` turns all of it off."""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Any

import httpx

from tests.support.clients import heat_client
from tests.support.server import KilnProcess

ROOT = Path(__file__).resolve().parents[3]
BROWSER_ACCEPT = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"


def test_browsers_get_the_page_clients_the_version_document(kiln_server: KilnProcess) -> None:
    with httpx.Client(base_url=kiln_server.url, timeout=10.0) as http:
        page = http.get("/", headers={"Accept": BROWSER_ACCEPT})
        assert page.status_code == 200
        assert page.headers["content-type"].startswith("text/html")
        assert '<script type="module" src="/dashboard/app.js">' in page.text
        assert "script-src 'self'" in page.headers["content-security-policy"]
        for accept in ("application/json", "*/*", "", "application/json, text/html"):
            r = http.get("/", headers={"Accept": accept})
            assert r.status_code == 300, accept
            assert r.json()["versions"][0]["id"] == "v1.0"
    # heatclient's own discovery of the version document is unchanged
    hc = heat_client(kiln_server.endpoint("demo"))
    assert hc.build_info.build_info()["api"]["revision"]


def test_assets_are_served_with_their_types(kiln_server: KilnProcess) -> None:
    with httpx.Client(base_url=kiln_server.url, timeout=10.0) as http:
        for name, kind in (("app.js", "text/javascript"), ("graph.js", "text/javascript"),
                           ("style.css", "text/css")):
            r = http.get(f"/dashboard/{name}")
            assert r.status_code == 200, name
            assert r.headers["content-type"].startswith(kind)
            assert r.headers["x-content-type-options"] == "nosniff"
        for bad in ("/dashboard/nope.js", "/dashboard/../conf.py", "/dashboard/%2e%2e/conf.py",
                    "/dashboard/.hidden", "/dashboard/"):
            r = http.get(bad)
            assert r.status_code == 404, bad
            assert r.json()["code"] == 404


def test_dashboard_off(start_kiln_factory: Any) -> None:
    kiln = start_kiln_factory(options={"kiln_api": {"dashboard": "false"}})
    with httpx.Client(base_url=kiln.url, timeout=10.0) as http:
        r = http.get("/", headers={"Accept": BROWSER_ACCEPT})
        assert r.status_code == 300
        assert r.json()["versions"][0]["id"] == "v1.0"
        assert http.get("/dashboard/app.js").status_code == 404


def test_the_wheel_carries_the_assets(tmp_path: Path) -> None:
    """``pip install`` alone serves the dashboard: every file under static/ is in the
    built wheel (package data), not only in a source checkout."""
    src = tmp_path / "src"
    shutil.copytree(ROOT / "kiln", src / "kiln",
                    ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, src / name)
    out = tmp_path / "dist"
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps",
                    "-q", "-w", str(out), str(src)], check=True, capture_output=True,
                   timeout=300)
    (wheel,) = out.glob("kiln-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    static = ROOT / "kiln" / "dashboard" / "static"
    expected = {f"kiln/dashboard/static/{p.relative_to(static).as_posix()}"
                for p in static.rglob("*") if p.is_file()}
    assert expected and expected <= names, sorted(expected - names)


def test_name_search_finds_any_part_of_a_name_in_any_case(kiln_server: KilnProcess) -> None:
    """The dashboard's search box: GET /stacks?name_contains=..., paged and counted like
    every other filter; LIKE's wildcards in the value are plain characters."""
    import uuid

    project = f"search{uuid.uuid4().hex[:8]}"
    template = {"heat_template_version": "2018-08-31",
                "resources": {"r": {"type": "OS::Heat::None"}}}
    names = ["web-Front", "web-back", "db_main", "dbxmain", "cache"]
    with httpx.Client(base_url=kiln_server.endpoint(project), timeout=30) as api:
        for name in names:
            assert api.post("/stacks", json={"stack_name": name, "template": template}
                            ).status_code == 201

        def search(text: str, **more: str) -> list[str]:
            body = api.get("/stacks", params={"name_contains": text, "sort_keys": "stack_name",
                                              "sort_dir": "asc", **more}).json()
            return [s["stack_name"] for s in body["stacks"]]

        assert sorted(search("WEB")) == ["web-Front", "web-back"]
        assert search("front") == ["web-Front"]
        assert search("db_") == ["db_main"]          # '_' is not LIKE's any-character
        assert search("%") == []
        assert search("b", limit="1") == ["db_main"]
        counted = api.get("/stacks", params={"name_contains": "web", "with_count": "true"})
        assert counted.json()["count"] == 2
