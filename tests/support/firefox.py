"""A real headless Firefox for the dashboard tests, driven over WebDriver BiDi.

Playwright drives only its own patched Firefox builds (downloaded from its CDN, which this
machine cannot reach), and Selenium needs geckodriver, which Debian does not package. But
Firefox itself serves WebDriver BiDi (``--remote-debugging-port``): this module starts
Debian's ``firefox-esr`` headless with a fresh profile and speaks the protocol's few
commands the tests need (navigate, evaluate), with a ``websockets`` client. Script errors
and failed CSP checks the page logs are collected (``log.entryAdded``) so a test can
assert there were none, as the Chromium tests do.

``wait_for`` runs its condition inside the page, re-checked on the page's own timer until
it holds (or the timeout passes), so the test waits on the page's state, not a sleep.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from tests.support.services import unavailable

FIREFOX = "/usr/bin/firefox-esr"
INSTALLER = Path(__file__).with_name("install_browsers.sh")
START_SECONDS = 120.0


class BiDiError(AssertionError):
    """A command the browser answered with an error (or a script that threw)."""


def firefox_executable() -> str:
    found = FIREFOX if os.access(FIREFOX, os.X_OK) else shutil.which("firefox-esr")
    if found:
        return found
    result = subprocess.run(["bash", str(INSTALLER), "firefox-esr"], capture_output=True,
                            text=True, timeout=900, check=False)
    if result.returncode != 0 or not os.access(FIREFOX, os.X_OK):
        unavailable("Debian's firefox-esr is not installed and tests/support/install_browsers.sh "
                    f"could not install it: {(result.stderr or result.stdout).strip()[-300:]}")
    return FIREFOX


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class Firefox:
    """One BiDi session on one browsing context (the first tab)."""

    def __init__(self, ws: Any) -> None:
        self.ws = ws
        self._next = 0
        #: page log entries of level error (script errors, CSP violations)
        self.errors: list[str] = []
        self.send("session.new", {"capabilities": {}})
        self.send("session.subscribe", {"events": ["log.entryAdded"]})
        tree = self.send("browsingContext.getTree", {})
        self.context = tree["contexts"][0]["context"]

    def send(self, method: str, params: dict[str, Any]) -> Any:
        self._next += 1
        ident = self._next
        self.ws.send(json.dumps({"id": ident, "method": method, "params": params}))
        while True:
            message = json.loads(self.ws.recv())
            if message.get("type") == "event":
                self._event(message)
                continue
            if message.get("id") != ident:
                continue
            if message.get("type") == "error":
                raise BiDiError(f"{method}: {message.get('error')}: {message.get('message')}")
            return message["result"]

    def _event(self, message: dict[str, Any]) -> None:
        if message.get("method") == "log.entryAdded":
            entry = message.get("params", {})
            if entry.get("level") == "error":
                self.errors.append(str(entry.get("text")))

    def wait_for_error(self, text: str, timeout: float = 60.0) -> str:
        """The first logged page error containing ``text``, reading the browser's events
        as they come (a BiDiError after ``timeout`` seconds)."""
        deadline = time.monotonic() + timeout
        while True:
            found = next((e for e in self.errors if text in e), None)
            if found is not None:
                return found
            left = deadline - time.monotonic()
            if left <= 0:
                raise BiDiError(f"no page error containing {text!r}: {self.errors}")
            try:
                message = json.loads(self.ws.recv(timeout=left))
            except TimeoutError:
                continue
            if message.get("type") == "event":
                self._event(message)

    def navigate(self, url: str) -> None:
        self.send("browsingContext.navigate",
                  {"context": self.context, "url": url, "wait": "complete"})

    def evaluate(self, expression: str) -> Any:
        """The expression's value (awaited if a promise), as JSON."""
        result = self.send("script.evaluate", {
            "expression": f"(async () => JSON.stringify(await ({expression})))()",
            "target": {"context": self.context}, "awaitPromise": True})
        if result.get("type") == "exception":
            details = result.get("exceptionDetails", {})
            raise BiDiError(f"{expression}: {details.get('text')}")
        value = result["result"].get("value")
        return None if value is None else json.loads(value)

    def wait_for(self, condition: str, timeout: float = 60.0) -> Any:
        """The first truthy value of ``condition`` (a JS expression), checked in the page
        every 50 ms of its own timer; a BiDiError after ``timeout`` seconds."""
        script = f"""new Promise((resolve, reject) => {{
            const until = Date.now() + {int(timeout * 1000)};
            const check = () => {{
                let value;
                try {{ value = ({condition}); }} catch (e) {{ value = undefined; }}
                if (value) resolve(value);
                else if (Date.now() > until) reject(new Error('timed out waiting for: ' +
                                                              {json.dumps(condition)}));
                else setTimeout(check, 50);
            }};
            check();
        }})"""
        return self.evaluate(script)

    def screenshot(self, path: Path) -> Path:
        import base64

        shot = self.send("browsingContext.captureScreenshot", {"context": self.context})
        path.write_bytes(base64.b64decode(shot["data"]))
        return path


@contextmanager
def firefox() -> Iterator[Firefox]:
    """A headless Firefox with its own profile, stopped (and the profile removed) after."""
    try:
        from websockets.sync.client import connect
    except ImportError:
        unavailable("websockets (the test extra) is not installed")
    executable = firefox_executable()
    port = _free_port()
    with tempfile.TemporaryDirectory(prefix="kiln-firefox-") as profile:
        log = Path(profile) / "firefox.log"
        with log.open("wb") as out:
            proc = subprocess.Popen(
                [executable, "--headless", "--no-remote", "--profile", profile,
                 f"--remote-debugging-port={port}", "about:blank"],
                stdout=out, stderr=subprocess.STDOUT,
                env={**os.environ, "MOZ_CRASHREPORTER_DISABLE": "1"})
        try:
            deadline = time.monotonic() + START_SECONDS
            ws = None
            while ws is None:
                if proc.poll() is not None:
                    raise BiDiError(f"firefox exited: {log.read_text()[-500:]}")
                try:
                    ws = connect(f"ws://127.0.0.1:{port}/session", max_size=None,
                                 open_timeout=5)
                except OSError:
                    if time.monotonic() > deadline:
                        raise BiDiError(f"firefox did not listen on {port}: "
                                        f"{log.read_text()[-500:]}") from None
                    time.sleep(0.2)  # startup poll, bounded by the deadline
            with ws:
                yield Firefox(ws)
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
