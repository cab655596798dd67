"""Record Heat's answers to the corpus's cases.

    python -m tests.corpus.record http://127.0.0.1:8180/v1/admin [--area AREA] [--jobs 4]

Each answered case is appended at once to tests/corpus/heat27/<area>.jsonl (one JSON
object per line: name, case, heat; keys in the order they were sent, since Heat reports
the first of several errors in that order), so a crash loses nothing and a re-run asks only what
is missing; at the end each file is rewritten sorted by name. Delete a file (or lines of
it) to record those cases again. Cases that are no longer generated are dropped.
"""

from __future__ import annotations

import argparse
import json
import sys
import threading
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path
from typing import Any

import httpx

from tests.corpus.cases import all_cases
from tests.corpus.wire import Runner

STORE = Path(__file__).parent / "heat27"


def load(area: str) -> dict[str, dict[str, Any]]:
    path = STORE / f"{area}.jsonl"
    if not path.exists():
        return {}
    entries = (json.loads(line) for line in path.read_text().splitlines() if line.strip())
    return {e["name"]: e for e in entries}


def write_sorted(area: str, entries: dict[str, dict[str, Any]]) -> None:
    lines = [json.dumps(entries[n]) for n in sorted(entries)]
    (STORE / f"{area}.jsonl").write_text("\n".join(lines) + "\n")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[1])
    parser.add_argument("endpoint")
    parser.add_argument("--area", action="append")
    parser.add_argument("--jobs", type=int, default=4)
    args = parser.parse_args()
    STORE.mkdir(exist_ok=True)
    cases = all_cases()
    lock = threading.Lock()
    with httpx.Client(timeout=120.0, follow_redirects=False) as client:
        runner = Runner(args.endpoint, client)
        for area, generated in cases.items():
            if args.area and area not in args.area:
                continue
            known = {n: e for n, e in load(area).items()
                     if n in generated and e["case"] == json.loads(json.dumps(generated[n]))}
            write_sorted(area, known)
            todo = [n for n in generated if n not in known]
            print(f"{area}: {len(known)} recorded, {len(todo)} to ask", flush=True)
            with ThreadPoolExecutor(args.jobs) as pool, \
                    (STORE / f"{area}.jsonl").open("a") as out:
                futures = {pool.submit(runner.run, n, generated[n]): n for n in todo}
                for done, future in enumerate(as_completed(futures), 1):
                    name = futures[future]
                    entry = {"name": name, "case": generated[name], "heat": future.result()}
                    with lock:
                        out.write(json.dumps(entry) + "\n")
                        out.flush()
                        known[name] = entry
                    if done % 100 == 0:
                        print(f"  {area}: {done}/{len(todo)}", flush=True)
            write_sorted(area, known)
    return 0


if __name__ == "__main__":
    sys.exit(main())
