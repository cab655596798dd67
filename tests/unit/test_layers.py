"""The layer contracts (pyproject.toml, run by scripts/test.sh as `lint-imports`) hold for
Kiln, and they do catch an import that runs the wrong way.

The wrong imports are made in a copy of the package in a temporary directory, checked with
the project's own contracts: the real tree is never touched.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LINT = Path(sys.executable).parent / "lint-imports"


def lint(tree: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(tree)}
    return subprocess.run([str(LINT), "--no-cache", "--config", str(tree / "pyproject.toml")],
                          cwd=tree, env=env, capture_output=True, text=True, timeout=300,
                          check=False)


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """A copy of the package and its contracts."""
    shutil.copytree(ROOT / "kiln", tmp_path / "kiln",
                    ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    return tmp_path


def add_import(tree: Path, module: str, statement: str) -> None:
    path = tree / (module.replace(".", "/") + ".py")
    if not path.exists():  # a package
        path = tree / module.replace(".", "/") / "__init__.py"
    text = path.read_text()
    marker = "from __future__ import annotations\n"
    assert marker in text
    path.write_text(text.replace(marker, marker + statement + "\n", 1))


def test_the_tree_keeps_every_contract(tree: Path) -> None:
    result = lint(tree)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 broken" in result.stdout


@pytest.mark.parametrize(("module", "statement", "contract"), [
    # the model reaching up into the service
    ("kiln.engine.model.states", "import kiln.engine.service.replies",
     "Engine sub-packages import only downwards"),
    # the store reaching up into an action
    ("kiln.engine.store.recorder", "import kiln.engine.actions.create",
     "Engine sub-packages import only downwards"),
    # a plugin reaching into the engine
    ("kiln.resources.heat.none", "import kiln.engine.runtime.runner",
     "Kiln's layers"),
    # the API reaching past EngineService
    ("kiln.api.body", "import kiln.engine.runtime.engine", "The API reaches the engine"),
    # the APIs reaching the database or the alarms, directly or through a module that
    # does (the service's interface must stay free of records)
    ("kiln.api.cloudwatch.app", "from kiln.alarms.service import AlarmService",
     "The APIs reach neither the database nor the alarms"),
    ("kiln.api.body", "from kiln.db.records import StackRecord",
     "The APIs reach neither the database nor the alarms"),
    ("kiln.engine.service.shapes", "from kiln.db.records import StackRecord",
     "The APIs reach neither the database nor the alarms"),
    ("kiln.engine.service.interface", "import kiln.engine.service.cloudwatch",
     "The APIs reach neither the database nor the alarms"),
    # an action, the runtime or the model going round the store to the database
    ("kiln.engine.actions.delete", "import kiln.db.resources",
     "The engine's store is the only door to the database"),
    ("kiln.engine.runtime.claims", "from kiln.db.facade import DATABASE_ERRORS",
     "The engine's store is the only door to the database"),
    ("kiln.engine.model.states", "import kiln.db.locks",
     "The engine's store is the only door to the database"),
    ("kiln.engine.actions.update", "from sqlalchemy.orm import Session",
     "The engine's store is the only door to the database"),
    # the service going round the store to the database
    ("kiln.engine.service.reads", "import kiln.db.stacks",
     "EngineService reaches the database through the store"),
    ("kiln.engine.service.software", "from sqlalchemy.orm import Session",
     "EngineService reaches the database through the store"),
    ("kiln.engine.service.signals", "from kiln.db.facade import open_database",
     "EngineService reaches the database through the store"),
    # the modules whose calls moved behind the store (issue 23) are no longer excused
    ("kiln.engine.service.keypairs", "import kiln.db.keypairs",
     "EngineService reaches the database through the store"),
    ("kiln.engine.service.snapshots", "from kiln.db import snapshots",
     "EngineService reaches the database through the store"),
    ("kiln.engine.service.agent_reads", "from kiln.db.agent_view import AgentView",
     "EngineService reaches the database through the store"),
    ("kiln.engine.service.signals", "from kiln.db import signals",
     "EngineService reaches the database through the store"),
    # a part of EngineService reaching back up into the façade, directly or through the
    # package (whose EngineService is the façade)
    ("kiln.engine.service.reads", "import kiln.engine.service.engine_service",
     "EngineService is a facade"),
    ("kiln.engine.service.signals", "from kiln.engine.service import EngineService",
     "EngineService is a facade"),
    # the model loading plugins itself
    ("kiln.engine.model.slots", "import kiln.resources.registry",
     "The engine's model does no I/O"),
    # the circles there were: the CFN commands back into kiln.cli, the dashboard back
    # into the API that serves it, the auth middleware into the API's faults
    ("kiln.cli_cfn", "import kiln.cli", "Kiln's layers"),
    ("kiln.dashboard", "import kiln.api.faults", "Kiln's layers"),
    ("kiln.auth.middleware", "import kiln.api.faults", "Identity"),
    # the HTTP client using the engine in-process
    ("kiln.client.api", "import kiln.engine.service", "kiln.client reaches Kiln over HTTP"),
    # the alarm side of a process (the watcher `kiln engine` runs) reaching the API
    ("kiln.engine.service.alarm_process", "import kiln.api.cloudwatch.app", "Kiln's layers"),
    # alarms reaching up into the engine, configuration into a layer
    ("kiln.alarms.service", "import kiln.engine.service", "Below the engine"),
    ("kiln.conf", "import kiln.auth.caller", "Shared modules"),
    # a second SQLite-only data path beside kiln.db.sqlite_fast (issue 23 step 4)
    ("kiln.db.resources", "import sqlite3", "One SQLite fast path"),
    ("kiln.engine.store.resources", "import sqlite3", "One SQLite fast path"),
])
def test_a_wrong_import_breaks_its_contract(tree: Path, module: str, statement: str,
                                            contract: str) -> None:
    add_import(tree, module, statement)
    result = lint(tree)
    assert result.returncode != 0, result.stdout
    broken = [line for line in result.stdout.splitlines() if line.endswith("BROKEN")]
    assert any(contract in line for line in broken) or contract in result.stdout.split(
        "Broken contracts")[-1], result.stdout


def test_an_api_module_loads_no_engine() -> None:
    """The APIs type against the Protocol; importing them (or the service package for
    it) loads neither the façade nor the Engine: ``EngineService`` is imported on first
    use (kiln/engine/service/__init__.py)."""
    probe = ("import sys, kiln.api.app, kiln.engine.service\n"
             "print(sorted(m for m in sys.modules if m in {"
             "'kiln.engine.service.engine_service', 'kiln.engine.runtime.engine', "
             "'kiln.engine.store'}))\n"
             "from kiln.engine.service import EngineService\n"
             "print(EngineService.__module__)")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    out = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True,
                         text=True, timeout=120, check=True).stdout.splitlines()
    assert out == ["[]", "kiln.engine.service.engine_service"]


def test_every_folder_of_modules_is_a_regular_package() -> None:
    """A folder without __init__.py is a namespace package: import-linter does not see it
    (kiln/alarms went unchecked so) and setuptools' find_packages leaves it out of a
    wheel, so an installed Kiln would miss it. Alembic's scripts are data, not modules."""
    scripts = ROOT / "kiln" / "db" / "migrations"
    missing = [str(folder.relative_to(ROOT)) for folder in (ROOT / "kiln").rglob("*")
               if folder.is_dir() and any(folder.glob("*.py"))
               and not (folder / "__init__.py").exists()
               and not folder.is_relative_to(scripts)]
    assert missing == []
