"""Replay recorded cases against a Kiln endpoint, many at once."""

from __future__ import annotations

from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx

from tests.corpus.wire import Runner

JOBS = 8


def run_all(endpoint: str, recorded: dict[str, dict[str, Any]],
            names: Iterable[str] | None = None) -> dict[str, list[dict[str, Any]]]:
    """``area/name`` -> Kiln's reduced answer, for ``names`` (default: all)."""
    todo = list(recorded if names is None else names)
    limits = httpx.Limits(max_connections=JOBS * 2)
    with httpx.Client(timeout=120.0, follow_redirects=False, limits=limits) as client, \
            ThreadPoolExecutor(JOBS) as pool:
        runner = Runner(endpoint, client)
        results = pool.map(lambda key: runner.run(key.split("/", 1)[1],
                                                  recorded[key]["case"]), todo)
        return dict(zip(todo, results, strict=False))
