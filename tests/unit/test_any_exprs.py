"""scripts/any_exprs.py: the gate on the share of Any expressions per package."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "any_exprs.py"

# the shape of mypy's any-exprs.txt (names, Any expressions, expressions, coverage)
REPORT = """\
                   Name   Anys   Exprs   Coverage
-------------------------------------------------
  kiln.engine.model.x     10     100     90.00%
kiln.engine.service.y      2     100     98.00%
            kiln.db.z      5     100     95.00%
-------------------------------------------------
                Total     17     300     94.33%
"""


def gate(tmp_path: Path, *limits: str) -> subprocess.CompletedProcess[str]:
    (tmp_path / "any-exprs.txt").write_text(REPORT)
    return subprocess.run([sys.executable, str(SCRIPT), str(tmp_path),
                           *(f"--max={limit}" for limit in limits)],
                          capture_output=True, text=True, check=False)


def test_shares_are_summed_per_package_and_engine_sub_package(tmp_path: Path) -> None:
    result = gate(tmp_path)
    assert result.returncode == 0
    rows = {line.split()[0]: line.split()[1:] for line in result.stdout.splitlines()}
    assert rows["kiln.engine"] == ["12", "/", "200", "6.0%"]
    assert rows["kiln.engine.model"] == ["10", "/", "100", "10.0%"]
    assert rows["kiln.db"] == ["5", "/", "100", "5.0%"]


def test_a_package_over_its_limit_fails_the_gate(tmp_path: Path) -> None:
    assert gate(tmp_path, "kiln.engine=6").returncode == 0
    over = gate(tmp_path, "kiln.engine=5")
    assert over.returncode == 1
    assert "kiln.engine has 6.0% Any expressions (12/200), over its limit of 5%" in over.stderr


def test_a_limit_on_a_package_the_report_lacks_fails(tmp_path: Path) -> None:
    result = gate(tmp_path, "kiln.nothing=5")
    assert result.returncode == 1 and "no expressions of kiln.nothing" in result.stderr
