"""scripts/test.sh's fast subsets, run for real with stand-in tools: each stand-in records
its name and arguments, so the test sees which steps a subset runs (the tools themselves
are run by the full CI run)."""

from __future__ import annotations

import hashlib
import os
import subprocess
from pathlib import Path

from tests.support import docs

ROOT = docs.ROOT
TOOLS = ("python", "ruff", "mypy", "lint-imports", "mkdocs", "kiln", "pytest")


def _venv(tmp_path: Path, failing: str = "") -> tuple[Path, Path]:
    """A stand-in .venv-test whose dependency stamp matches (so nothing is installed)."""
    venv, log = tmp_path / "venv", tmp_path / "calls.log"
    (venv / "bin").mkdir(parents=True)
    for tool in TOOLS:
        status = 1 if tool == failing else 0
        script = venv / "bin" / tool
        script.write_text(f'#!/bin/sh\necho "{tool} $*" >> "{log}"\nexit {status}\n')
        script.chmod(0o755)
    stamp = hashlib.sha256((ROOT / "pyproject.toml").read_bytes()).hexdigest()
    (venv / ".kiln-test-deps").write_text(stamp + "\n")
    return venv, log


def _run(venv: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["bash", str(ROOT / "scripts" / "test.sh"), *args], cwd=ROOT,
                          env={**os.environ, "KILN_TEST_VENV": str(venv)},
                          capture_output=True, text=True, timeout=60, check=False)


def test_lint_runs_the_static_checks_and_no_test(tmp_path: Path) -> None:
    venv, log = _venv(tmp_path)
    done = _run(venv, "lint")
    assert done.returncode == 0, done
    assert done.stdout.splitlines()[-1] == "scripts/test.sh: all passed"
    tools = [line.split()[0] for line in log.read_text().splitlines()]
    assert tools == ["ruff", "mypy", "python", "lint-imports", "mkdocs"]
    assert "scripts/any_exprs.py" in log.read_text()


def test_lint_reports_a_failing_step_and_fails(tmp_path: Path) -> None:
    venv, log = _venv(tmp_path, failing="ruff")
    done = _run(venv, "lint")
    assert done.returncode == 1, done
    assert "scripts/test.sh: FAILED: ruff" in done.stderr
    # every step still ran, so one run reports every problem
    assert [line.split()[0] for line in log.read_text().splitlines()] == [
        "ruff", "mypy", "python", "lint-imports", "mkdocs"]


def test_other_arguments_go_to_one_pytest_run(tmp_path: Path) -> None:
    venv, log = _venv(tmp_path)
    done = _run(venv, "tests/integration", "-m", "postgresql")
    assert done.returncode == 0, done
    (call,) = log.read_text().splitlines()
    assert call.startswith("pytest ") and call.endswith(" tests/integration -m postgresql")
