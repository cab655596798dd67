"""`kiln serve` with tracemalloc snapshots on demand, for bench/soak_bench.py --tracemalloc.

    python -X tracemalloc=10 bench/traced_serve.py DIR serve --config-file kiln.conf

Each SIGUSR1 writes ``DIR/<n>.snapshot`` (tracemalloc's own format, ``Snapshot.load``),
so the soak can compare the heap at the end of its warm-up with the heap at its end and
name the lines whose allocations grew. Everything else is the ordinary ``kiln`` command.
"""

from __future__ import annotations

import os
import signal
import sys
import tracemalloc
from pathlib import Path
from types import FrameType


def main() -> None:
    directory = Path(sys.argv[1])
    taken = [0]

    def snapshot(signum: int, frame: FrameType | None) -> None:
        taken[0] += 1
        partial = directory / f"{taken[0]}.partial"
        tracemalloc.take_snapshot().dump(str(partial))
        os.replace(partial, directory / f"{taken[0]}.snapshot")   # whole, or not there

    signal.signal(signal.SIGUSR1, snapshot)
    sys.argv = ["kiln", *sys.argv[2:]]
    from kiln.cli import main as kiln_main

    kiln_main()


if __name__ == "__main__":
    main()
