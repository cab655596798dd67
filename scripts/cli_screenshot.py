"""Capture `kiln stack create --wait` in progress as an SVG for docs/cli.md.

It starts a real ``kiln serve`` on an ephemeral port, runs the real ``kiln stack create``
on a pseudo-terminal (tests/support/terminal.py), and when the live display shows work
done, in progress and still waiting at once, turns that screen — characters, colours and
bold, as the terminal emulator holds them — into rich text and exports it as SVG. What
the picture shows is what the command drew, not a mock-up.

    .venv-test/bin/python scripts/cli_screenshot.py [docs/kiln-stack-create.svg]
"""

from __future__ import annotations

import re
import sys
import tempfile
from pathlib import Path

from rich.console import Console
from rich.style import Style
from rich.text import Text

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.support.server import clean_env, kiln_command, start_kiln  # noqa: E402
from tests.support.terminal import TerminalRun  # noqa: E402

TEMPLATE = """\
heat_template_version: 2018-08-31
description: A web tier waiting on its network and database
resources:
  network:
    type: OS::Heat::TestResource
    properties: {value: net, action_wait_secs: {create: 1}}
  database:
    type: OS::Heat::TestResource
    properties: {value: {get_attr: [network, output]}, action_wait_secs: {create: 6}}
  cache:
    type: OS::Heat::TestResource
    properties: {value: {get_attr: [network, output]}, action_wait_secs: {create: 4}}
  secret:
    type: OS::Heat::RandomString
  web_config:
    type: OS::Heat::TestResource
    properties: {value: {get_attr: [secret, value]}, action_wait_secs: {create: 3}}
  web:
    type: OS::Heat::ResourceGroup
    depends_on: [database, cache, web_config]
    properties:
      count: 3
      resource_def: {type: OS::Heat::None}
  dns:
    type: OS::Heat::TestResource
    properties: {value: {list_join: [',', {get_attr: [web, refs]}]}, action_wait_secs: {create: 1}}
"""

COLUMNS, ROWS = 92, 12


def _colour(name: str) -> str | None:
    """pyte's colour name as rich's ("brown" is pyte's yellow)."""
    if name == "default":
        return None
    if re.fullmatch(r"[0-9a-f]{6}", name):
        return "#" + name
    bright = name.startswith("bright")
    base = name.removeprefix("bright").replace("brown", "yellow")
    return f"bright_{base}" if bright else base


def screen_text(run: TerminalRun) -> Text:
    """The pty's screen with its colours, as rich text."""
    text = Text()
    lines = [run.screen.buffer[y] for y in range(run.screen.lines)]
    last = max((y for y, line in enumerate(run.screen.display) if line.strip()), default=0)
    for y in range(last + 1):
        row = lines[y]
        run_chars: list[str] = []
        run_style: tuple[str | None, bool] = (None, False)
        for x in range(run.screen.columns):
            char = row[x]
            style = (_colour(char.fg), bool(char.bold))
            if style != run_style and run_chars:
                text.append("".join(run_chars), Style(color=run_style[0], bold=run_style[1]))
                run_chars = []
            run_style = style
            run_chars.append(char.data)
        text.append("".join(run_chars), Style(color=run_style[0], bold=run_style[1]))
        text.rstrip()
        text.append("\n")
    return text


def busy(screen: str) -> bool:
    counts = re.search(r"(\d+) done · (\d+) in progress · (\d+) failed · (\d+) waiting", screen)
    elapsed = re.search(r"Creating stack web +(\d+\.\d)s", screen)
    return bool(counts and elapsed and float(elapsed[1]) >= 4.0 and int(counts[1]) >= 2
                and int(counts[2]) >= 2 and int(counts[4]) >= 1)


def main(target: Path) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        server = start_kiln(work / "kiln")
        try:
            (work / "web.yaml").write_text(TEMPLATE)
            env = {**clean_env(), "OS_ENDPOINT": server.endpoint("demo")}
            run = TerminalRun([*kiln_command(), "stack", "create", "-t", "web.yaml",
                               "--wait", "web"], env=env, cwd=work, columns=COLUMNS,
                              rows=ROWS)
            run.expect(busy, "done, in-progress and waiting resources at once")
            shot = screen_text(run)
            status = run.wait()
            if status != 0:
                raise SystemExit(f"kiln stack create exited {status}:\n{run.text}")
        finally:
            server.stop()
    console = Console(record=True, width=COLUMNS, file=open("/dev/null", "w"))  # noqa: SIM115
    console.print("$ kiln stack create -t web.yaml --wait web", style="bold")
    console.print(shot, end="")
    target.write_text(console.export_svg(title="kiln stack create"))
    print(f"wrote {target}")


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "docs" / "kiln-stack-create.svg")
