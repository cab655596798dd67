"""A real headless Chromium for the dashboard tests: Debian's ``chromium`` package driven
by Playwright's Python API (Playwright's own browser download is never used).

``chromium_executable()`` installs the package with ``tests/support/install_browsers.sh``
when it is missing (as root, through apt-get); where that is impossible the tests skip
with the reason, or fail under ``KILN_REQUIRE_SERVICES=1``. Screenshots go to
``artifacts_dir()`` (``KILN_BROWSER_ARTIFACTS``, else ``<tmp>/kiln-browser-artifacts``),
which the test session prints at its end.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from tests.support.services import unavailable

CHROMIUM = "/usr/bin/chromium"
#: written into the artifacts directory when a test saves a screenshot
SESSION_MARKER = "SCREENSHOTS.txt"
INSTALLER = Path(__file__).with_name("install_browsers.sh")


def artifacts_dir() -> Path:
    path = Path(os.environ.get("KILN_BROWSER_ARTIFACTS")
                or Path(tempfile.gettempdir()) / "kiln-browser-artifacts")
    path.mkdir(parents=True, exist_ok=True)
    return path


def chromium_executable() -> str:
    """The path of Debian's chromium, installing it first if needed."""
    found = CHROMIUM if os.access(CHROMIUM, os.X_OK) else shutil.which("chromium")
    if found:
        return found
    result = subprocess.run(["bash", str(INSTALLER), "chromium"], capture_output=True, text=True,
                            timeout=900, check=False)
    if result.returncode != 0 or not os.access(CHROMIUM, os.X_OK):
        unavailable("Debian's chromium is not installed and tests/support/install_browsers.sh "
                    f"could not install it: {(result.stderr or result.stdout).strip()[-300:]}")
    return CHROMIUM


def launch_args() -> list[str]:
    """Chromium flags for a container: no sandbox as root, no GPU, small /dev/shm."""
    args = ["--disable-gpu", "--disable-dev-shm-usage"]
    if os.geteuid() == 0:
        args.append("--no-sandbox")
    return args


def save_screenshot(page: object, name: str) -> Path:
    """``<artifacts>/<name>.png`` of the whole page (``page`` is a Playwright Page)."""
    folder = artifacts_dir()
    path = folder / f"{name}.png"
    page.screenshot(path=str(path), full_page=False)  # type: ignore[attr-defined]
    with (folder / SESSION_MARKER).open("a") as index:
        index.write(f"{path.name}\n")
    print(f"screenshot: {path}")
    return path
