"""The share of expressions typed ``Any``, per package, from mypy's any-exprs report.

``Any`` at a seam is where a bug passes ``mypy --strict`` unseen (an engine typed ``Any``
once hid a store that was never wired), so the test command gates the share::

    mypy --any-exprs-report DIR            # scripts/test.sh's mypy step writes DIR
    python scripts/any_exprs.py DIR --max kiln.engine=5

prints ``package  anys/exprs  share`` for each top-level package of kiln (and each engine
sub-package) and exits 1 when a package named by ``--max`` is over its limit (percent).
"""

from __future__ import annotations

import argparse
import sys
from collections import defaultdict
from pathlib import Path


def shares(report: Path) -> dict[str, tuple[int, int]]:
    """``package -> (Any expressions, expressions)`` from ``any-exprs.txt``."""
    totals: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for line in (report / "any-exprs.txt").read_text().splitlines():
        parts = line.split()
        if len(parts) != 4 or not parts[0].startswith("kiln") or not parts[1].isdigit():
            continue
        module, anys, exprs = parts[0], int(parts[1]), int(parts[2])
        names = module.split(".")
        packages = {".".join(names[:2])}
        if len(names) > 3 and names[1] == "engine":
            packages.add(".".join(names[:3]))
        for package in packages:
            totals[package][0] += anys
            totals[package][1] += exprs
    return {name: (a, e) for name, (a, e) in totals.items()}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("report", type=Path, help="the directory mypy wrote the report to")
    parser.add_argument("--max", action="append", default=[], metavar="PACKAGE=PERCENT",
                        help="fail when PACKAGE's share of Any expressions is over PERCENT")
    args = parser.parse_args(argv)
    found = shares(args.report)
    for name, (anys, exprs) in sorted(found.items()):
        print(f"{name:24} {anys:6} / {exprs:6}  {100 * anys / max(exprs, 1):5.1f}%")
    failed = False
    for item in args.max:
        name, _, limit = item.partition("=")
        if name not in found:
            print(f"any_exprs: no expressions of {name} in the report", file=sys.stderr)
            failed = True
            continue
        anys, exprs = found[name]
        share = 100 * anys / max(exprs, 1)
        if share > float(limit):
            print(f"any_exprs: {name} has {share:.1f}% Any expressions "
                  f"({anys}/{exprs}), over its limit of {limit}%", file=sys.stderr)
            failed = True
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
