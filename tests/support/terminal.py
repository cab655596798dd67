"""Run a command on a real pseudo-terminal and see its output as a person would.

The child gets a pty as stdin, stdout and stderr (so it believes it talks to a terminal:
colours, cursor movement, redraws in place), with a fixed window size. Everything it
writes is fed to a terminal emulator (pyte), so a test asserts on the *screen* — the text
left visible after every redraw and erase — not on the escape sequences. Each read keeps
a snapshot of the screen, so a test can also ask what was shown at some point during the
run (a live progress display that is gone by the end). The pty is the child's controlling
terminal, so Ctrl-C typed into it is a SIGINT, as at a keyboard.
"""

from __future__ import annotations

import fcntl
import os
import pty
import select
import struct
import subprocess
import termios
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

import pyte

DEADLINE = 60.0


def _own_terminal() -> None:
    """In the child: a session of its own whose controlling terminal is the pty, so that
    typing Ctrl-C there interrupts it as it would in a real terminal."""
    os.setsid()
    fcntl.ioctl(0, termios.TIOCSCTTY, 0)


class TerminalRun:
    """One process on a pty, with the screens it showed."""

    def __init__(self, argv: Sequence[str], *, env: Mapping[str, str], cwd: Path,
                 columns: int = 120, rows: int = 40) -> None:
        self.screen = pyte.Screen(columns, rows)
        self.stream = pyte.ByteStream(self.screen)
        self.snapshots: list[str] = []
        master, slave = pty.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", rows, columns, 0, 0))
        self._master = master
        self.proc = subprocess.Popen(
            list(argv), stdin=slave, stdout=slave, stderr=slave, cwd=cwd,
            env={**env, "TERM": "xterm-256color", "COLUMNS": str(columns),
                 "LINES": str(rows)},
            preexec_fn=_own_terminal)
        os.close(slave)
        self._eof = False

    @property
    def text(self) -> str:
        """The screen now, line by line, trailing blanks trimmed."""
        return "\n".join(line.rstrip() for line in self.screen.display).rstrip()

    def _read(self, timeout: float) -> None:
        if self._eof:
            return
        ready, _, _ = select.select([self._master], [], [], timeout)
        if not ready:
            return
        try:
            data = os.read(self._master, 65536)
        except OSError:  # EIO: the child closed its side
            data = b""
        if not data:
            self._eof = True
            return
        self.stream.feed(data)
        self.snapshots.append(self.text)

    def expect(self, seen: Callable[[str], bool], what: str,
               deadline: float = DEADLINE) -> str:
        """Read until the screen satisfies ``seen``; return that screen."""
        end = time.monotonic() + deadline
        while not seen(self.text):
            if self._eof:
                self.proc.wait(timeout=DEADLINE)  # it closed the terminal: reaped, not left
                raise AssertionError(f"the command ended before showing {what}:\n{self.text}")
            if time.monotonic() > end:
                self._abandon()
                raise AssertionError(f"no {what} within {deadline}s; screen:\n{self.text}")
            self._read(0.2)
        return self.text

    def _abandon(self) -> None:
        """Kill and reap the process of a failed test: a Popen collected while its process
        runs warns, and the suite turns that warning into an error in whichever test is
        running at the time."""
        self.proc.kill()
        self.proc.wait()
        self._eof = True
        os.close(self._master)

    def type(self, text: str) -> None:
        """Type on the terminal's keyboard."""
        os.write(self._master, text.encode())

    def wait(self, deadline: float = DEADLINE) -> int:
        """Read to the end of the output and return the exit status."""
        end = time.monotonic() + deadline
        while not self._eof:
            if time.monotonic() > end:
                self._abandon()
                raise AssertionError(f"the command did not end within {deadline}s:\n"
                                     f"{self.text}")
            self._read(0.2)
        status = self.proc.wait(timeout=max(1.0, end - time.monotonic()))
        os.close(self._master)
        return status
