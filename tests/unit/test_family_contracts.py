"""The plugin families' contracts (pyproject.toml) catch a wrong import: a family
reaching into another, directly or through kiln.resources.common, and common reaching
into a family. Each wrong import is made in a copy of the package (test_layers' way)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.unit.test_layers import ROOT, add_import, lint

FAMILIES = "Plugin families are self-contained"
COMMON = "What the families share (kiln.resources.common) imports no family"


@pytest.fixture
def copy(tmp_path: Path) -> Path:
    shutil.copytree(ROOT / "kiln", tmp_path / "kiln", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    return tmp_path


@pytest.mark.parametrize(
    ("module", "statement", "contracts"),
    [
        # the imports there were before issue 23: AWS on OpenStack's server, Heat on AWS's
        # wait condition handle, OpenStack on Heat's placeholder
        (
            "kiln.resources.aws.ec2_compute",
            "from kiln.resources.openstack import nova_server",
            [FAMILIES],
        ),
        (
            "kiln.resources.heat.wait_condition",
            "import kiln.resources.aws.wait_condition",
            [FAMILIES],
        ),
        (
            "kiln.resources.openstack.glance",
            "from kiln.resources.heat.none import NoneResource",
            [FAMILIES],
        ),
        # common reaching into a family breaks both: it would also join two families
        ("kiln.resources.common.cloud", "import kiln.resources.heat.none", [COMMON, FAMILIES]),
    ],
)
def test_a_family_reaching_into_another_breaks_the_contract(
    copy: Path, module: str, statement: str, contracts: list[str]
) -> None:
    add_import(copy, module, statement)
    result = lint(copy)
    assert result.returncode != 0, result.stdout
    broken = result.stdout.split("Broken contracts")[-1]
    for contract in contracts:
        assert contract in broken, result.stdout
