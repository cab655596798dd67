"""The documentation's promises that can go stale: the README's opening commands, CI, the
configuration reference (docs/configuration.md) and the example configurations."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

from kiln.conf import CONF
from kiln.conf_loader import INTERNAL_OPTIONS, registered_sections
from kiln.conf_reference import BEGIN_MARKER, END_MARKER, LEFT_OUT, render_markdown
from tests.support import docs

ROOT = Path(__file__).resolve().parents[3]
README = (ROOT / "README.md").read_text()
REFERENCE = (ROOT / "docs" / "configuration.md").read_text()
FENCE = re.compile(r"^```[a-z]*\n(.*?)^```", re.S | re.M)


def opening() -> str:
    """The README up to its first second-level heading."""
    return README.split("\n## ", 1)[0]


def test_readme_opens_with_exactly_two_commands() -> None:
    blocks = [b.strip() for b in FENCE.findall(opening())]
    assert len(blocks) == 2
    install_and_serve, run_tests = blocks
    assert "\n" not in install_and_serve and "\n" not in run_tests
    assert "pip install ." in install_and_serve
    assert install_and_serve.endswith("kiln serve")
    assert run_tests == "bash scripts/test.sh"


def test_ci_runs_exactly_the_readme_test_command_with_services_required() -> None:
    lines = [line.strip() for line in (ROOT / ".ci" / "run").read_text().splitlines()
             if line.strip() and not line.startswith("#")]
    assert "export KILN_REQUIRE_SERVICES=1" in lines
    assert lines[-1] == "exec bash scripts/test.sh"


def test_configuration_reference_is_current() -> None:
    start = REFERENCE.index(BEGIN_MARKER)
    end = REFERENCE.index(END_MARKER) + len(END_MARKER) + 1
    assert REFERENCE[start:end] == render_markdown(), (
        "docs/configuration.md is stale: regenerate it with "
        "`kiln config-reference --write docs/configuration.md`")


def test_every_option_is_documented_under_its_section() -> None:
    reference = render_markdown()
    for section, _, opts in registered_sections(CONF):
        if section in LEFT_OUT:
            continue
        for name in opts:
            if name in INTERNAL_OPTIONS:
                continue
            part = reference.split(f"### `[{section}]`", 1)[1].split("### ", 1)[0]
            assert f"| `{name}` |" in part, f"[{section}] {name} missing from the reference"


def test_rewriting_the_reference_keeps_the_rest_of_the_document() -> None:
    from kiln.conf_reference import replace_section

    document = f"intro\n{BEGIN_MARKER}\nold table\n{END_MARKER}\noutro\n"
    assert replace_section(document, "NEW\n") == "intro\nNEW\noutro\n"
    assert replace_section(REFERENCE, render_markdown()) == REFERENCE.replace(
        REFERENCE[REFERENCE.index(BEGIN_MARKER):REFERENCE.index(END_MARKER) + len(END_MARKER)
                  + 1],
        render_markdown())


def test_the_example_configuration_loads(tmp_path: Path) -> None:
    from kiln.conf_loader import load_config

    example = re.findall(r"```ini\n(.*?)```", docs.page("running.md"), re.S)[0]
    path = tmp_path / "kiln.conf"
    path.write_text(example)
    try:
        conf = load_config([str(path)])
        assert conf.heat_api.bind_host == "0.0.0.0"
        assert conf.max_resources_per_stack == 2000
    finally:
        CONF.clear()


def test_the_keystone_example_configuration_loads(tmp_path: Path) -> None:
    from kiln.conf_identity import flavor
    from kiln.conf_loader import load_config

    (example,) = [text for text in re.findall(r"```ini\n(.*?)```", docs.page("keystone.md"), re.S)
                  if "[keystone_authtoken]" in text]
    path = tmp_path / "kiln.conf"
    path.write_text(example)
    try:
        conf = load_config([str(path)])
        assert flavor(conf) == "keystone"
        assert conf.keystone_authtoken.auth_type == "password"
        # the plugin's own options (username, ...) are read by keystoneauth1 at serve
        # time, not registered here (that would leave them on the shared CONF)
    finally:
        CONF.clear()


def test_the_stack_user_domain_example_configuration_loads(tmp_path: Path) -> None:
    from kiln.auth.stack_users import check_config, domain_configured
    from kiln.conf_loader import load_config

    (example,) = [text for text in re.findall(r"```ini\n(.*?)```", docs.page("keystone.md"), re.S)
                  if "stack_domain_admin" in text]
    path = tmp_path / "kiln.conf"
    path.write_text(example)
    try:
        conf = load_config([str(path)])
        assert domain_configured(conf)
        assert conf.stack_domain_admin == "heat_stack_admin"
        check_config(conf)   # a domain with its admin and password: no error
    finally:
        CONF.clear()


STUB = """#!/usr/bin/env bash
# A stand-in interpreter: records each call; `-m venv DIR` makes DIR/bin with stand-ins.
echo "$(readlink -f "$0") $*" >> "{log}"
if [ "${{1:-}}" = "-m" ] && [ "${{2:-}}" = "venv" ]; then
    mkdir -p "$3/bin"
    for tool in python kiln pytest ruff mypy; do cp "$0" "$3/bin/$tool"; done
fi
exit 0
"""


def _tree(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file()}


def test_the_test_command_leaves_the_served_installation_alone(tmp_path: Path) -> None:
    """The README's first command serves from `.venv`; its second (scripts/test.sh) must
    install into another environment, or the running server loses the modules it has not
    imported yet (a reinstall there made it answer 500 with ModuleNotFoundError)."""
    checkout = tmp_path / "checkout"
    (checkout / "scripts").mkdir(parents=True)
    (checkout / "scripts" / "test.sh").write_bytes((ROOT / "scripts" / "test.sh").read_bytes())
    (checkout / "pyproject.toml").write_bytes((ROOT / "pyproject.toml").read_bytes())
    calls = tmp_path / "calls.log"
    python = tmp_path / "python3"
    python.write_text(STUB.format(log=calls))
    python.chmod(0o755)
    # the running installation of the first command: an environment with Kiln in it
    served = checkout / ".venv"
    subprocess.run([str(python), "-m", "venv", str(served)], check=True)
    (served / "lib" / "kiln").mkdir(parents=True)
    (served / "lib" / "kiln" / "__init__.py").write_text("# installed by pip install .\n")
    calls.write_text("")
    before = _tree(served)

    result = subprocess.run(["bash", str(checkout / "scripts" / "test.sh"), "tests/unit"],
                            env={**os.environ, "PYTHON": str(python)}, capture_output=True,
                            text=True, timeout=60, check=False)

    assert result.returncode == 0, result.stderr
    log = calls.read_text().splitlines()
    assert not [line for line in log if str(served) + "/" in line], log
    assert _tree(served) == before
    installs = [line for line in log if " -m pip install " in line]
    assert installs and all(line.startswith(str(checkout / ".venv-test" / "bin")) for line in
                            installs), log
    assert any(line.startswith(str(checkout / ".venv-test" / "bin" / "pytest"))
               for line in log), log


def test_the_readme_says_the_tests_have_their_own_environment() -> None:
    assert "a separate\n`.venv-test`" in opening()
    assert ".venv-test/" in (ROOT / ".gitignore").read_text().splitlines()
