"""Structured logs and the per-request id, as seen by an operator and by a client."""

from __future__ import annotations

import io
import json
import logging
import re
import uuid
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from kiln.logging import JSONFormatter, RequestIdMiddleware, current_request_id

REQ_ID = re.compile(r"^req-[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$")


@pytest.fixture
def captured() -> Iterator[io.StringIO]:
    """Everything logged during the test, formatted by the JSON formatter."""
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(JSONFormatter())
    root = logging.getLogger()
    old_level = root.level
    root.addHandler(handler)
    root.setLevel(logging.INFO)
    yield stream
    root.removeHandler(handler)
    root.setLevel(old_level)


def records(stream: io.StringIO) -> list[dict[str, object]]:
    return [json.loads(line) for line in stream.getvalue().splitlines()]


async def _handler(request: Request) -> JSONResponse:
    logging.getLogger("kiln.test").info("handling %s", request.url.path)
    return JSONResponse({"state_id": request.state.request_id,
                         "context_id": current_request_id()})


async def _boom(request: Request) -> JSONResponse:
    return JSONResponse({"error": "nope"}, status_code=404, headers={"x-extra": "1"})


def client() -> httpx.AsyncClient:
    app = RequestIdMiddleware(Starlette(routes=[Route("/x", _handler), Route("/missing", _boom)]))
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://t")


def test_each_record_is_one_json_object(captured: io.StringIO) -> None:
    logging.getLogger("kiln.engine").warning("stack %s failed", "s1", extra={"stack_id": "abc"})
    (entry,) = records(captured)
    assert entry["level"] == "WARNING"
    assert entry["logger"] == "kiln.engine"
    assert entry["message"] == "stack s1 failed"
    assert entry["stack_id"] == "abc"
    assert re.match(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$", str(entry["time"]))
    assert "request_id" not in entry


def test_exceptions_are_kept_inside_the_record(captured: io.StringIO) -> None:
    try:
        raise ValueError("bad thing")
    except ValueError:
        logging.getLogger("kiln").exception("failed")
    lines = captured.getvalue().splitlines()
    assert len(lines) == 1
    entry = json.loads(lines[0])
    assert "ValueError: bad thing" in entry["exception"]


async def test_response_carries_a_heat_style_request_id() -> None:
    async with client() as c:
        response = await c.get("/x")
    assert response.status_code == 200
    assert REQ_ID.match(response.headers["x-openstack-request-id"])


async def test_request_id_is_also_set_on_error_responses() -> None:
    async with client() as c:
        response = await c.get("/missing")
    assert response.status_code == 404
    assert REQ_ID.match(response.headers["x-openstack-request-id"])
    assert response.headers["x-extra"] == "1"


async def test_every_request_gets_a_new_id_even_if_the_client_sends_one() -> None:
    sent = f"req-{uuid.uuid4()}"
    async with client() as c:
        first = await c.get("/x", headers={"X-OpenStack-Request-ID": sent})
        second = await c.get("/x")
    ids = {first.headers["x-openstack-request-id"], second.headers["x-openstack-request-id"]}
    assert len(ids) == 2
    assert sent not in ids


async def test_app_sees_the_same_id_the_client_receives() -> None:
    async with client() as c:
        response = await c.get("/x")
    body = response.json()
    assert body["state_id"] == body["context_id"] == response.headers["x-openstack-request-id"]


async def test_logs_during_a_request_carry_its_id(captured: io.StringIO) -> None:
    async with client() as c:
        response = await c.get("/x")
    request_id = response.headers["x-openstack-request-id"]
    entries = records(captured)
    handled = [e for e in entries if e["logger"] == "kiln.test"]
    access = [e for e in entries if e["logger"] == "kiln.access"]
    assert handled[0]["request_id"] == request_id
    assert access[0]["request_id"] == request_id
    assert access[0]["method"] == "GET"
    assert access[0]["path"] == "/x"
    assert access[0]["status"] == 200
    assert current_request_id() is None


@pytest.fixture
def restore_root_logging() -> Iterator[None]:
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    yield
    logging.captureWarnings(False)
    for handler in list(root.handlers):
        root.removeHandler(handler)
        if handler not in handlers:
            handler.close()
    for handler in handlers:
        root.addHandler(handler)
    root.setLevel(level)


@pytest.mark.usefixtures("restore_root_logging")
def test_log_file_receives_json_lines_and_debug_follows_the_option(tmp_path: Path) -> None:
    from kiln.logging import setup_logging

    path = tmp_path / "kiln.log"
    setup_logging(debug=True, log_file=str(path), json_lines=True)
    logging.getLogger("kiln.engine").debug("detail %d", 7)
    logging.getLogger("uvicorn.error").info("from uvicorn")
    for handler in logging.getLogger().handlers:
        handler.flush()
    entries = [json.loads(line) for line in path.read_text().splitlines()]
    assert [(e["logger"], e["level"], e["message"]) for e in entries] == [
        ("kiln.engine", "DEBUG", "detail 7"), ("uvicorn.error", "INFO", "from uvicorn")]


@pytest.mark.usefixtures("restore_root_logging")
def test_without_debug_debug_records_are_dropped(tmp_path: Path) -> None:
    from kiln.logging import setup_logging

    path = tmp_path / "kiln.log"
    setup_logging(debug=False, log_file=str(path))
    logging.getLogger("kiln.engine").debug("detail")
    logging.getLogger("kiln.engine").info("summary")
    for handler in logging.getLogger().handlers:
        handler.flush()
    assert [json.loads(line)["message"] for line in path.read_text().splitlines()] == [
        "summary"]


@pytest.mark.usefixtures("restore_root_logging")
async def test_text_format_still_carries_the_request_id(tmp_path: Path) -> None:
    from kiln.logging import setup_logging

    path = tmp_path / "kiln.log"
    setup_logging(log_file=str(path), json_lines=False)
    async with client() as c:
        response = await c.get("/x")
    for handler in logging.getLogger().handlers:
        handler.flush()
    request_id = response.headers["x-openstack-request-id"]
    handled = [line for line in path.read_text().splitlines() if "kiln.test" in line]
    assert len(handled) == 1
    assert f"INFO kiln.test [{request_id}] handling /x" in handled[0]


@pytest.mark.parametrize(("log_file", "log_dir", "expected"), [
    (None, None, None),
    ("/var/log/kiln/api.log", None, "/var/log/kiln/api.log"),
    ("api.log", "/var/log/kiln", "/var/log/kiln/api.log"),
    (None, "/var/log/kiln", "/var/log/kiln/kiln.log"),
])
def test_log_file_and_log_dir_combine_as_in_heat(
        log_file: str | None, log_dir: str | None, expected: str | None) -> None:
    from kiln.logging import log_file_path

    assert log_file_path(log_file, log_dir) == expected


@pytest.mark.usefixtures("restore_root_logging")
def test_python_warnings_become_log_records(tmp_path: Path) -> None:
    import warnings

    from kiln.logging import setup_logging

    path = tmp_path / "kiln.log"
    setup_logging(log_file=str(path))
    with warnings.catch_warnings():
        warnings.simplefilter("always")
        warnings.warn("old knob", UserWarning, stacklevel=1)
    for handler in logging.getLogger().handlers:
        handler.flush()
    (entry,) = [json.loads(line) for line in path.read_text().splitlines()]
    assert entry["logger"] == "py.warnings"
    assert "UserWarning: old knob" in entry["message"]


def test_text_lines_name_the_worker_process_that_wrote_them() -> None:
    # kiln.workers stamps each record of a worker process with its index and pid
    from kiln.logging import TextFormatter
    record = logging.LogRecord("kiln.server", logging.INFO, __file__, 1, "hello", (), None)
    assert "kiln.server [-] hello" in TextFormatter().format(record)
    record.worker, record.pid = 1, 4242
    assert "kiln.server (worker 1 pid 4242) [-] hello" in TextFormatter().format(record)
