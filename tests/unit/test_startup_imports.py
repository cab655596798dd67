"""What a noauth ``kiln serve`` loads: never the client or Keystone's libraries.

A module imported at start stays in the server's memory for its whole life. The ``kiln
stack`` client (rich, pygments) and keystoneauth1 (with requests under it) were loaded by
every ``kiln serve`` through the CLI's command table and the dashboard's login route,
~15 MB of RSS that a noauth server never uses (bench/README.md, soak). A fresh
interpreter is needed: this test process has imported them long before.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

#: what `kiln serve` imports on its way to serving (kiln.cli, kiln.server's run path)
#: and the Heat API app it builds, with the default (noauth) configuration
PROBE = """
import json, sys
import kiln.cli, kiln.server, kiln.logging, kiln.engine.service
import kiln.engine.service.alarm_process
from kiln.api.app import create_app
import kiln.api.cfn.app
from kiln.conf import CONF
CONF([], project="kiln", default_config_files=[])
create_app(None, CONF)
from kiln.oslo_notifier import build_notifier
assert not build_notifier(CONF).enabled  # no [oslo_messaging_notifications] driver
print(json.dumps(sorted(sys.modules)))
"""

UNUSED_IN_NOAUTH = ("keystoneauth1", "requests", "kiln.client", "rich", "pygments",
                    # the notifications' broker libraries, without a driver configured
                    "oslo_messaging", "kombu", "eventlet")


def loaded_by(code: str, *args: str) -> list[str]:
    done = subprocess.run([sys.executable, "-c", code, *args], capture_output=True,
                          text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    modules: list[str] = json.loads(done.stdout.splitlines()[-1])
    return modules


def test_noauth_server_loads_neither_client_nor_keystone() -> None:
    modules = loaded_by(PROBE)
    assert "kiln.api.dashboard_session" in modules  # the route that used to pull them in
    unused = [m for m in modules if m.split(".")[0] in UNUSED_IN_NOAUTH
              or m == "kiln.client" or m.startswith("kiln.client.")]
    assert unused == []


def test_the_client_command_is_still_there() -> None:
    """Loaded when named: ``kiln stack`` and ``kiln --help`` still list it."""
    modules = loaded_by("import json, sys\n"
                        "from kiln.cli import main\n"
                        "import click\n"
                        "ctx = click.Context(main)\n"
                        "assert 'stack' in main.list_commands(ctx)\n"
                        "assert main.get_command(ctx, 'stack') is not None\n"
                        "print(json.dumps(sorted(sys.modules)))\n")
    assert "kiln.client.commands" in modules


#: ``kiln engine`` as the CLI runs it (kiln.server.run with the engine role), stopped as
#: soon as it has started: the engine, the alarm process and its watcher are built
ENGINE_ROLE = """
import asyncio, json, sys
import kiln.cli, kiln.server
from kiln.conf_loader import load_config
conf = load_config([sys.argv[1]])
async def main():
    stop = asyncio.Event()
    stop.set()
    await kiln.server.run(conf, "engine", stop=stop)
asyncio.run(main())
print(json.dumps(sorted(sys.modules)))
"""


def test_the_engine_role_imports_no_api(tmp_path: Path) -> None:
    """``kiln engine`` serves no HTTP: it runs the engine and the alarm watcher, whose
    wiring (kiln.engine.service.alarm_process) lives in the engine's service layer, so
    nothing under kiln.api is loaded (issue 23, step 3). It used to import
    kiln.api.cloudwatch to run the watcher."""
    conf = tmp_path / "kiln.conf"
    conf.write_text(f"[DEFAULT]\nstate_path = {tmp_path}/state\n")
    modules = loaded_by(ENGINE_ROLE, str(conf))
    assert "kiln.engine.service.alarm_process" in modules  # the watcher was built
    assert "kiln.alarms.watcher" in modules
    api = [m for m in modules if m == "kiln.api" or m.startswith("kiln.api.")]
    assert api == []
