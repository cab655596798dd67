"""Run the whole corpus against a fresh ``kiln serve`` and (re)write differences.json.

    python -m tests.corpus.triage [--keep ANSWERS.json] [--answers ANSWERS.json]

Cases Kiln answers as Heat did are left out of the file; a case that differs gets
``kind`` "deliberate" when Heat misbehaved (or compare.DELIBERATE names it) and Kiln
answered cleanly, else "bug", with a reason naming the first step and field that differ.
``--keep`` saves Kiln's answers (to read the differences); ``--answers`` classifies saved
answers instead of starting a server. Prints the counts per area and kind.
"""

from __future__ import annotations

import argparse
import collections
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

from tests.corpus.compare import (
    DELIBERATE,
    DIFFERENCES,
    clean,
    explain,
    heat_misbehaved,
    load_differences,
    load_recorded,
    lock_race,
)
from tests.corpus.kiln_run import run_all
from tests.support.server import start_kiln

SERVER_OPTIONS = {"DEFAULT": {"max_stacks_per_tenant": -1}}


def kiln_answers(recorded: dict[str, dict[str, Any]]) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        kiln = start_kiln(Path(tmp), options=SERVER_OPTIONS)
        try:
            return run_all(kiln.endpoint("admin"), recorded)
        finally:
            kiln.stop()


def classify(recorded: dict[str, dict[str, Any]], answers: dict[str, Any],
             previous: dict[str, dict[str, str]]
             ) -> tuple[dict[str, dict[str, str]], collections.Counter[tuple[str, str]]]:
    differences: dict[str, dict[str, str]] = {}
    counts: collections.Counter[tuple[str, str]] = collections.Counter()
    for key, entry in sorted(recorded.items()):
        heat, got = entry["heat"], answers[key]
        area = key.split("/", 1)[0]
        if heat == got:
            counts[(area, "pass")] += 1
            continue
        if lock_race(heat, got):  # intermittent: the test expects it case by case
            counts[(area, "race")] += 1
            if key in previous:  # a difference seen in a run the race spared stays
                differences[key] = previous[key]
            continue
        why = DELIBERATE.get(key) or heat_misbehaved(heat)
        kind = "deliberate" if why and clean(got) else "bug"
        reason = why if kind == "deliberate" else explain(heat, got)
        differences[key] = {"kind": kind, "reason": reason or ""}
        counts[(area, kind)] += 1
    return differences, counts


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--keep", type=Path)
    parser.add_argument("--answers", type=Path)
    args = parser.parse_args()
    recorded = load_recorded()
    answers = (json.loads(args.answers.read_text()) if args.answers
               else kiln_answers(recorded))
    if args.keep:
        args.keep.write_text(json.dumps(answers, indent=1))
    differences, counts = classify(recorded, answers, load_differences())
    DIFFERENCES.write_text(json.dumps(differences, indent=0, sort_keys=True) + "\n")
    for (area, kind), n in sorted(counts.items()):
        print(f"{area:12} {kind:11} {n}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
