"""Heat's in-instance agents, installed from the package registries and run unprivileged.

A server deployed by Heat runs os-collect-config, which polls for metadata and, when it
changes, runs os-refresh-config; that runs os-apply-config (rendering the collected
deployments into ``/var/run/heat-config/heat-config``) and heat-agents' ``55-heat-config``,
which hands each deployment to its group's hook (``script``, ...) and signals the hook's
result back with ``heat-config-notify``. Tests run exactly that chain against a real
``kiln serve``, as local processes of the test's user, inside a sandbox "instance root"
directory: every path the agents would write under ``/`` is redirected there through the
environment variables the agents read (``HEAT_CONFIG_*``, ``HEAT_SCRIPT_*``,
``OS_REFRESH_CONFIG_BASE_DIR``) and one replacement for ``20-os-apply-config``.

The agents are installed once into a cached venv, ``~/.cache/kiln-test/agents-<hash>``,
keyed by what is installed (:data:`PACKAGES`, the heat-agents sdist, the interpreter).
heat-agents' wheel ships no hooks, so the hooks, ``55-heat-config``, the os-apply-config
templates and ``heat-config-notify`` come from its sdist. heat-cfntools depends on boto 2,
which imports on Python 3.11 and not later; the venv uses the interpreter running the
tests. When the registry cannot be reached the tests that need the agents skip (or fail
under ``KILN_REQUIRE_SERVICES=1``) with the installer's reason.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tarfile
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.support.services import unavailable

HEAT_AGENTS = "13.0.0"
#: what goes into the agents' venv (pinned: the cache key is the text of this list)
PACKAGES = (
    "os-collect-config==14.1.0",
    "os-refresh-config==14.1.0",
    "os-apply-config==14.1.0",
    "heat-cfntools==2.0.0",
    f"heat-agents=={HEAT_AGENTS}",
)
#: heat-agents' ``ansible`` hook runs ``ansible-playbook``: ansible-core is on PyPI (its
#: own cached venv, so the agents' cache key is unchanged). Puppet is not (a Ruby gem or
#: a distribution package), so the ``puppet`` hook is not run by the tests.
ANSIBLE = ("ansible-core==2.19.14",)
INSTALL_TIMEOUT = 900.0
#: the whole chain for one collection (collect, apply, hook, notify)
CHAIN_TIMEOUT = 120.0


def cache_root() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "kiln-test"


def _key() -> str:
    spec = json.dumps({"packages": PACKAGES, "python": sys.version_info[:2],
                       "base": sys.base_prefix, "layout": 1})
    return hashlib.sha256(spec.encode()).hexdigest()[:12]


@dataclass(frozen=True)
class AgentInstall:
    """A finished install: the venv with the agents' commands, the heat-agents sources."""

    venv: Path
    source: Path

    @property
    def bin(self) -> Path:
        return self.venv / "bin"

    def command(self, name: str) -> str:
        return str(self.bin / name)


class InstallFailed(Exception):
    """pip could not install the agents (no registry, no network): the reason, for a skip."""


def _run(args: Sequence[str], log: Path) -> None:
    with log.open("ab") as out:
        out.write(("$ " + " ".join(args) + "\n").encode())
        out.flush()
        try:
            done = subprocess.run(args, stdout=out, stderr=out, timeout=INSTALL_TIMEOUT,
                                  stdin=subprocess.DEVNULL, check=False)
        except subprocess.TimeoutExpired:
            raise InstallFailed(f"{args[0]} timed out after {INSTALL_TIMEOUT}s (log {log})"
                                ) from None
    if done.returncode != 0:
        tail = log.read_text(errors="replace").strip().splitlines()[-3:]
        raise InstallFailed(f"{' '.join(args[:4])}... exited {done.returncode} (log {log}): "
                            + " | ".join(tail))


def _install(root: Path) -> AgentInstall:
    """Build the venv and unpack the sdist in a scratch directory, then rename it into
    place, so an interrupted install is never mistaken for a finished one."""
    scratch = root.with_name(root.name + ".partial")
    shutil.rmtree(scratch, ignore_errors=True)
    scratch.mkdir(parents=True)
    log = scratch / "install.log"
    venv = scratch / "venv"
    _run([sys.executable, "-m", "venv", str(venv)], log)
    pip = [str(venv / "bin" / "python"), "-m", "pip", "--disable-pip-version-check"]
    _run([*pip, "install", "-q", *PACKAGES], log)
    sdist_dir = scratch / "sdist"
    _run([*pip, "download", "-q", "--no-deps", "--no-binary", ":all:",
          f"heat-agents=={HEAT_AGENTS}", "-d", str(sdist_dir)], log)
    archives = sorted(sdist_dir.glob("heat*agents-*.tar.gz"))
    if not archives:
        raise InstallFailed(f"no heat-agents sdist was downloaded into {sdist_dir}")
    with tarfile.open(archives[0]) as tar:
        tar.extractall(sdist_dir, filter="data")
    sources = [p for p in sdist_dir.iterdir() if p.is_dir()]
    if len(sources) != 1 or not (sources[0] / "heat-config").is_dir():
        raise InstallFailed(f"unexpected heat-agents sdist layout in {sdist_dir}")
    _move_venv(scratch, root)
    return AgentInstall(venv=root / "venv", source=root / "sdist" / sources[0].name)


def _move_venv(scratch: Path, root: Path) -> None:
    """Rename the finished scratch directory into place; the venv's scripts name their
    interpreter by absolute path: repoint them."""
    os.replace(scratch, root)
    for script in (root / "venv" / "bin").iterdir():
        if script.is_file() and not script.is_symlink():
            with contextlib.suppress(UnicodeDecodeError):
                text = script.read_text()
                if str(scratch) in text:
                    script.write_text(text.replace(str(scratch), str(root)))
    cfg = root / "venv" / "pyvenv.cfg"
    cfg.write_text(cfg.read_text().replace(str(scratch), str(root)))


def _finished(root: Path) -> AgentInstall | None:
    venv = root / "venv"
    sources = [p for p in (root / "sdist").glob("*") if p.is_dir()]
    if (venv / "bin" / "os-collect-config").exists() and len(sources) == 1:
        return AgentInstall(venv=venv, source=sources[0])
    return None


def install_agents() -> AgentInstall:
    """The cached install, made on first use (one installer at a time across processes)."""
    root = cache_root() / f"agents-{_key()}"
    done = _finished(root)
    if done is not None:
        return done
    root.parent.mkdir(parents=True, exist_ok=True)
    with (root.parent / f"agents-{_key()}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        done = _finished(root)
        if done is not None:
            return done
        shutil.rmtree(root, ignore_errors=True)
        return _install(root)


def install_ansible() -> Path:
    """The ``bin`` of a cached venv with ansible-core (made on first use, locked)."""
    key = hashlib.sha256(json.dumps([ANSIBLE, sys.version_info[:2]]).encode()
                         ).hexdigest()[:12]
    root = cache_root() / f"ansible-{key}"
    playbook = root / "venv" / "bin" / "ansible-playbook"
    if playbook.exists():
        return playbook.parent
    root.parent.mkdir(parents=True, exist_ok=True)
    with (root.parent / f"ansible-{key}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not playbook.exists():
            scratch = root.with_name(root.name + ".partial")
            shutil.rmtree(scratch, ignore_errors=True)
            scratch.mkdir(parents=True)
            log = scratch / "install.log"
            _run([sys.executable, "-m", "venv", str(scratch / "venv")], log)
            _run([str(scratch / "venv" / "bin" / "python"), "-m", "pip",
                  "--disable-pip-version-check", "install", "-q", *ANSIBLE], log)
            shutil.rmtree(root, ignore_errors=True)
            _move_venv(scratch, root)
    return playbook.parent


def ansible_or_skip() -> Path:
    """ansible-core's ``bin``, or skip the test (fail under KILN_REQUIRE_SERVICES=1)."""
    try:
        return install_ansible()
    except InstallFailed as exc:
        unavailable(f"ansible-core could not be installed from the registry: {exc}")
        raise AssertionError("unreachable") from None


_INSTALLED: AgentInstall | InstallFailed | None = None


def agents_or_skip() -> AgentInstall:
    """The agents, or skip the test (fail under KILN_REQUIRE_SERVICES=1) saying why not."""
    global _INSTALLED
    if _INSTALLED is None:
        try:
            _INSTALLED = install_agents()
        except InstallFailed as exc:
            _INSTALLED = exc
    if isinstance(_INSTALLED, InstallFailed):
        unavailable(f"Heat's agents could not be installed from the registry: {_INSTALLED}")
        raise AssertionError("unreachable")  # unavailable() skips or fails
    return _INSTALLED


# -- the sandbox instance root ----------------------------------------------------------------

APPLY_CONFIG = """#!/bin/bash
# The sandbox's 20-os-apply-config: render into the instance root, not into /.
set -ue
exec os-apply-config -t "$KILN_SANDBOX/templates" -o "$KILN_SANDBOX/root"
"""


@dataclass
class ChainRun:
    """One run of the chain: its exit status and everything it printed."""

    returncode: int
    output: str


@dataclass
class Sandbox:
    """One server's instance root: what the agents read and write, all under ``path``."""

    path: Path
    install: AgentInstall
    runs: list[ChainRun] = field(default_factory=list)
    #: more environment for the agents (a hook's tool, e.g. ``HEAT_ANSIBLE_CMD``)
    extra_env: dict[str, str] = field(default_factory=dict)

    @property
    def root(self) -> Path:
        """Where ``/`` would be on a real server."""
        return self.path / "root"

    def env(self) -> dict[str, str]:
        root = self.root
        env = {k: v for k, v in os.environ.items()
               if not k.startswith(("OS_", "HEAT_", "PYTHON"))}
        env.update({
            "PATH": os.pathsep.join([str(self.path / "bin"), str(self.install.bin),
                                     env.get("PATH", "/usr/bin:/bin")]),
            "PYTHONWARNINGS": "ignore",
            "KILN_SANDBOX": str(self.path),
            "OS_REFRESH_CONFIG_BASE_DIR": str(self.path / "orc"),
            "HEAT_CONFIG_HOOKS": str(self.path / "hooks"),
            "HEAT_SHELL_CONFIG": str(root / "var/run/heat-config/heat-config"),
            "HEAT_CONFIG_DEPLOYED": str(root / "var/lib/heat-config/deployed"),
            "HEAT_CONFIG_DEPLOYED_OLD": str(root / "var/run/heat-config/deployed"),
            "HEAT_SCRIPT_WORKING": str(root / "var/lib/heat-config/heat-config-script"),
            "HEAT_SCRIPT_OUTPUTS": str(root / "var/run/heat-config/heat-config-script"),
            "HEAT_ANSIBLE_WORKING": str(root / "var/lib/heat-config/heat-config-ansible"),
            "HEAT_ANSIBLE_OUTPUTS": str(root / "var/run/heat-config/heat-config-ansible"),
        })
        env.update(self.extra_env)
        return env

    def collect_args(self) -> list[str]:
        return [self.install.command("os-collect-config"), "--one-time",
                "--cachedir", str(self.path / "occ-cache")]

    def run_chain(self, collector_args: Sequence[str], *, force: bool = True,
                  timeout: float = CHAIN_TIMEOUT) -> ChainRun:
        """os-collect-config once with os-refresh-config as its command: collect, apply,
        run the hooks, signal. ``collector_args`` are the collector's options and name."""
        lock = self.path / "orc.lock"
        args = [*self.collect_args(), *(["--force"] if force else []),
                "--command", f"os-refresh-config --lockfile {lock}", *collector_args]
        return self._run(args, timeout)

    def collect(self, collector_args: Sequence[str],
                timeout: float = CHAIN_TIMEOUT) -> dict[str, Any]:
        """What os-collect-config collects (``--print``), without running anything."""
        run = self._run([*self.collect_args(), "--print", *collector_args], timeout)
        if run.returncode != 0:
            raise AssertionError(f"os-collect-config --print failed:\n{run.output}")
        start = run.output.find("{")
        if start < 0:
            raise AssertionError(f"os-collect-config printed no JSON:\n{run.output}")
        collected, _ = json.JSONDecoder().raw_decode(run.output[start:])
        assert isinstance(collected, dict)
        return collected

    def notify(self, deployment: Mapping[str, Any], result: Mapping[str, Any],
               timeout: float = CHAIN_TIMEOUT) -> ChainRun:
        """heat-config-notify alone: signal ``result`` for ``deployment`` (a deployment as
        the hooks get it: ``id``, ``inputs``, ...)."""
        path = self.path / f"notify-{len(self.runs)}.json"
        path.write_text(json.dumps(deployment))
        return self._run([str(self.path / "bin" / "heat-config-notify"), str(path)],
                         timeout, stdin=json.dumps(result))

    def _run(self, args: Sequence[str], timeout: float, stdin: str | None = None) -> ChainRun:
        try:
            done = subprocess.run(args, env=self.env(), cwd=self.path, input=stdin,
                                  capture_output=True, text=True, timeout=timeout,
                                  check=False)
        except subprocess.TimeoutExpired as exc:
            raise AssertionError(f"{args[0]} did not finish in {timeout}s:\n"
                                 f"{exc.stdout!r}\n{exc.stderr!r}") from None
        run = ChainRun(done.returncode, done.stdout + done.stderr)
        self.runs.append(run)
        return run

    def deployed(self) -> dict[str, Any]:
        """What 55-heat-config recorded per deployment id (``<id>.json`` and its
        ``<id>.notify.json``, the signal it sent)."""
        out: dict[str, Any] = {}
        folder = self.root / "var/lib/heat-config/deployed"
        for path in sorted(folder.glob("*.json")) if folder.is_dir() else []:
            out[path.name] = json.loads(path.read_text())
        return out

    def log(self) -> str:
        return "\n---\n".join(r.output for r in self.runs)


def make_sandbox(path: Path, install: AgentInstall) -> Sandbox:
    """Lay out an instance root at ``path`` from the heat-agents sources."""
    src = install.source / "heat-config"
    for sub in ("templates", "root", "orc/configure.d", "hooks", "bin"):
        (path / sub).mkdir(parents=True, exist_ok=True)
    shutil.copytree(src / "os-apply-config", path / "templates", dirs_exist_ok=True)
    shutil.copy(src / "os-refresh-config/configure.d/55-heat-config",
                path / "orc/configure.d")
    (path / "orc/configure.d/20-os-apply-config").write_text(APPLY_CONFIG)
    shutil.copy(src / "bin/heat-config-notify", path / "bin")
    for hook in install.source.glob("heat-config-*/install.d/hook-*.py"):
        shutil.copy(hook, path / "hooks" / hook.stem.removeprefix("hook-"))
    python = install.command("python")
    for folder in ("orc/configure.d", "bin", "hooks"):
        for script in (path / folder).iterdir():
            _use_interpreter(script, python)
            script.chmod(0o755)
    return Sandbox(path=path, install=install)


def _use_interpreter(script: Path, python: str) -> None:
    """Point a ``#!/usr/bin/env python3`` script at the agents' venv (its imports, e.g.
    heatclient in heat-config-notify, live there); shell scripts are left alone."""
    text = script.read_text()
    first, _, rest = text.partition("\n")
    if first.startswith("#!") and "python" in first:
        script.write_text(f"#!{python}\n{rest}")


@contextlib.contextmanager
def sandbox(path: Path) -> Iterator[Sandbox]:
    """A fresh instance root (skipping the test when the agents cannot be installed)."""
    box = make_sandbox(path, agents_or_skip())
    yield box


def main(argv: Sequence[str]) -> int:
    """``python -m tests.support.agents``: install the agents (scripts/test.sh runs this
    in the background). ``python -m tests.support.agents DIR COLLECTOR-ARGS...``: also run
    the chain once in the instance root DIR (made if missing), as docs/agents.md shows."""
    try:
        install = install_agents()
    except InstallFailed as failure:
        print(f"agents not installed: {failure}", file=sys.stderr)
        return 1
    if not argv:
        print(install.venv)
        return 0
    path = Path(argv[0]).resolve()
    box = Sandbox(path, install) if (path / "hooks").is_dir() else make_sandbox(path, install)
    run = box.run_chain(list(argv[1:]))
    print(run.output, end="")
    return run.returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
