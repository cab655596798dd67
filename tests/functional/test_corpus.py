"""The differential corpus: every case recorded from the real Heat 27 (tests/corpus/heat27)
replayed over HTTP against one real ``kiln serve``, reduced the same way, and compared.

Kiln's answers are fetched in parallel batches (the cases this worker runs next, a batch
at a time), so the whole corpus costs one server start and a minute or two of requests.
A case listed in tests/corpus/differences.json is either deliberate (Heat hung, answered
5xx or leaked a Python error; Kiln must then answer every step cleanly) or a known Kiln
bug, run as a strict xfail: fixing the bug makes the test fail until the entry is removed
(one known Kiln race shows only sometimes, so a case it hits is an xfail of its own:
compare.LOCK_RACE).
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import pytest

from tests.corpus.cases import all_cases
from tests.corpus.compare import LOCK_RACE, clean, load_differences, load_recorded, lock_race
from tests.corpus.kiln_run import run_all
from tests.corpus.triage import SERVER_OPTIONS
from tests.support.server import KilnProcess, start_kiln

RECORDED = load_recorded()
DIFFERENCES = load_differences()
ORDER = sorted(RECORDED)
BATCH = 96


class Answers:
    """Kiln's answers, fetched a batch at a time from the first one asked for."""

    def __init__(self, kiln: KilnProcess) -> None:
        self.endpoint = kiln.endpoint("admin")
        self.done: dict[str, list[dict[str, Any]]] = {}
        self.lock = threading.Lock()

    def __getitem__(self, key: str) -> list[dict[str, Any]]:
        with self.lock:
            if key not in self.done:
                start = ORDER.index(key)
                batch = [k for k in ORDER[start:start + BATCH] if k not in self.done]
                self.done.update(run_all(self.endpoint, RECORDED, batch))
            return self.done[key]


@pytest.fixture(scope="module")
def answers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Answers]:
    kiln = start_kiln(tmp_path_factory.mktemp("corpus"), options=SERVER_OPTIONS)
    try:
        yield Answers(kiln)
    finally:
        kiln.stop()


def _params() -> list[Any]:
    params = []
    for key in ORDER:
        known = DIFFERENCES.get(key)
        marks = []
        if known and known["kind"] == "bug":
            marks.append(pytest.mark.xfail(strict=True, reason=known["reason"]))
        params.append(pytest.param(key, id=key, marks=marks))
    return params


def test_the_corpus_is_large_and_covers_every_area() -> None:
    areas = {key.split("/", 1)[0] for key in RECORDED}
    assert len(RECORDED) >= 1500
    assert areas == {"sections", "functions", "parameters", "resources", "api", "nested",
                     "hooks", "external", "outputs"}
    assert set(DIFFERENCES) <= set(RECORDED), "differences.json names unrecorded cases"
    # a case generated but never recorded would never be compared (the deployment groups'
    # 39 cases, generated once their schemas were added, went unrecorded so)
    generated = {f"{area}/{name}" for area, cases in all_cases().items() for name in cases}
    assert not generated - set(RECORDED), (
        f"generated, never recorded (run tests.corpus.record): "
        f"{sorted(generated - set(RECORDED))[:10]}")


@pytest.mark.parametrize("key", _params())
def test_kiln_answers_as_heat_did(key: str, answers: Answers) -> None:
    heat, kiln = RECORDED[key]["heat"], answers[key]
    known = DIFFERENCES.get(key)
    if known and known["kind"] == "deliberate":
        assert clean(kiln), f"{known['reason']}; Kiln must answer cleanly: {kiln}"
        return
    if kiln != heat and lock_race(heat, kiln):
        pytest.xfail(LOCK_RACE)
    assert kiln == heat

