"""A real OpenStack Keystone for the tests: installed, configured, started and stopped here.

Keystone is the PyPI ``keystone`` package (pinned below) served by gunicorn on an ephemeral
loopback port, with SQLite, fernet tokens and the two settings that make it fast enough for
tests: the in-process dogpile cache (without it a token validation runs ~200 SQL queries)
and bcrypt cost 4 for passwords. One worker process, since the cache lives in it.

The expensive steps happen once per machine and are cached under
``~/.cache/kiln-test/keystone-<hash>`` (the hash covers the pinned requirements, the Python
version and the set-up recipe): the venv (~25 s of pip) and a bootstrapped *template* state
(database after ``db_sync`` and ``bootstrap``, ~8 s). A file lock makes concurrent xdist
workers (or checkouts) wait for one installer instead of racing. Each started Keystone
copies the template into its own directory, gets fresh fernet and credential keys (so no
two instances accept each other's tokens) and points the catalog's identity endpoints at
its own port: about 2 s from nothing to answering.

``python -m tests.support.keystone`` does the cached set-up alone (scripts/test.sh runs it
beside ruff and mypy), printing where and how long.
"""

from __future__ import annotations

import base64
import contextlib
import fcntl
import hashlib
import os
import shutil
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from tests.support.ports import free_port, listens_on

KEYSTONE_VERSION = "30.0.0"
REQUIREMENTS = (f"keystone=={KEYSTONE_VERSION}", "gunicorn==27.0.1")
#: bump when the set-up steps below change, so caches made by older steps are not reused
RECIPE = "1"
ADMIN_USER = "admin"
ADMIN_PASSWORD = "admin-secret"
ADMIN_PROJECT = "admin"
REGION = "RegionOne"
#: gunicorn importing Keystone takes seconds of CPU; at load 15-25 on 2 CPUs that is
#: over a minute of wall-clock time
START_DEADLINE = 180.0
#: starts tried when the port chosen for gunicorn is taken before it binds it
PORT_ATTEMPTS = 3
INSTALL_TIMEOUT = 900.0
#: holds only the WSGI shim, so gunicorn's --pythonpath does not shadow ``keystone``
SHIM_DIR = Path(__file__).resolve().parent / "keystone_wsgi"


class KeystoneUnavailable(RuntimeError):
    """Keystone could not be installed or started here (the message says why)."""


def cache_root() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "kiln-test"


def install_key() -> str:
    text = "\n".join([*REQUIREMENTS, f"py{sys.version_info[0]}.{sys.version_info[1]}", RECIPE])
    return hashlib.sha256(text.encode()).hexdigest()[:12]


@dataclass(frozen=True)
class Installation:
    """The cached venv and bootstrapped template state."""

    root: Path

    @property
    def venv(self) -> Path:
        return self.root / "venv"

    @property
    def template(self) -> Path:
        return self.root / "template"

    def bin(self, name: str) -> Path:
        return self.venv / "bin" / name

    @property
    def ready(self) -> bool:
        return (self.root / "ready").exists()


def _keystone_env(state: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("OS_")}
    env.update(OS_KEYSTONE_CONFIG_DIR=str(state), OS_KEYSTONE_CONFIG_FILES="keystone.conf",
               PYTHONWARNINGS="ignore::DeprecationWarning")
    env.pop("PYTHONPATH", None)
    return env


def write_keystone_conf(state: Path, *, token_expiration: int = 3600,
                        debug: bool = False) -> Path:
    """keystone.conf for a state directory (database, keys and logs all inside it)."""
    conf = state / "keystone.conf"
    conf.write_text(f"""\
[DEFAULT]
debug = {str(debug).lower()}
log_file = {state / "keystone.log"}

[database]
connection = sqlite:///{state / "keystone.db"}

[identity]
# bcrypt cost 4: a password check takes ~5 ms instead of ~250 ms (tests only)
password_hash_rounds = 4

[token]
provider = fernet
expiration = {token_expiration}

[fernet_tokens]
key_repository = {state / "fernet-keys"}

[fernet_receipts]
key_repository = {state / "fernet-keys"}

[credential]
key_repository = {state / "credential-keys"}

[cache]
# in-process cache: a token validation takes a few ms instead of ~200 SQL queries
enabled = true
backend = dogpile.cache.memory

[oslo_policy]
# the legacy rules: a project-scoped admin token acts as the cloud admin
enforce_scope = false
enforce_new_defaults = false
""")
    return conf


def _run(cmd: Sequence[str | Path], log: Path, *, env: dict[str, str] | None = None,
         timeout: float = INSTALL_TIMEOUT) -> None:
    with log.open("ab") as out:
        out.write(f"$ {' '.join(map(str, cmd))}\n".encode())
        out.flush()
        try:
            result = subprocess.run([str(c) for c in cmd], stdout=out, stderr=out, env=env,
                                    stdin=subprocess.DEVNULL, timeout=timeout, check=False)
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise KeystoneUnavailable(f"{cmd[0]} failed: {exc} (log: {log})") from exc
    if result.returncode != 0:
        tail = "\n".join(log.read_text(errors="replace").splitlines()[-15:])
        raise KeystoneUnavailable(
            f"`{' '.join(map(str, cmd[:3]))} ...` exited {result.returncode} (log: {log}):\n"
            f"{tail}")


def _fresh_keys(directory: Path, count: int = 2) -> None:
    """A key repository as keystone-manage's fernet_setup/credential_setup make it: keys
    named 0 (staged) .. n-1 (primary), 32 random bytes each, url-safe base64, mode 0600."""
    if directory.exists():
        shutil.rmtree(directory)
    directory.mkdir(mode=0o700)
    for index in range(count):
        path = directory / str(index)
        path.write_bytes(base64.urlsafe_b64encode(os.urandom(32)))
        path.chmod(0o600)


def _build(inst: Installation) -> None:
    inst.root.mkdir(parents=True, exist_ok=True)
    log = inst.root / "install.log"
    if not inst.bin("keystone-manage").exists() or not inst.bin("gunicorn").exists():
        if inst.venv.exists():
            shutil.rmtree(inst.venv)
        _run([sys.executable, "-m", "venv", inst.venv], log)
        _run([inst.bin("python"), "-m", "pip", "install", "-q", *REQUIREMENTS], log)
    if inst.template.exists():
        shutil.rmtree(inst.template)
    inst.template.mkdir()
    write_keystone_conf(inst.template)
    manage: list[str | Path] = [inst.bin("keystone-manage"), "--config-file",
                                 inst.template / "keystone.conf"]
    env = _keystone_env(inst.template)
    _run([*manage, "db_sync"], log, env=env)
    _fresh_keys(inst.template / "fernet-keys")
    _fresh_keys(inst.template / "credential-keys", count=1)
    # the endpoint URL is a placeholder: every started instance rewrites it to its own port
    url = "http://127.0.0.1:5000/v3/"
    _run([*manage, "bootstrap", "--bootstrap-username", ADMIN_USER,
          "--bootstrap-password", ADMIN_PASSWORD, "--bootstrap-project-name", ADMIN_PROJECT,
          "--bootstrap-role-name", "admin", "--bootstrap-service-name", "keystone",
          "--bootstrap-admin-url", url, "--bootstrap-public-url", url,
          "--bootstrap-internal-url", url, "--bootstrap-region-id", REGION], log, env=env)
    (inst.root / "ready").write_text(time.strftime("%Y-%m-%dT%H:%M:%S\n"))


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)  # waits for another installer, released on close
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


_install_failure: KeystoneUnavailable | None = None


def installation() -> Installation:
    """The cached installation, building it first if needed (under a machine-wide lock).
    A failure is remembered, so a session tries the 40-second install once."""
    global _install_failure
    if _install_failure is not None:
        raise _install_failure
    root = cache_root()
    inst = Installation(root / f"keystone-{install_key()}")
    if inst.ready:
        return inst
    try:
        with _locked(root / f"keystone-{install_key()}.lock"):
            if not inst.ready:
                _build(inst)
    except KeystoneUnavailable as exc:
        _install_failure = exc
        raise
    return inst


@dataclass
class Token:
    """A token Keystone issued, with what it says about its holder."""

    id: str
    body: dict[str, Any]

    @property
    def user_id(self) -> str:
        return str(self.body["token"]["user"]["id"])

    @property
    def project_id(self) -> str | None:
        project = self.body["token"].get("project")
        return str(project["id"]) if project else None

    @property
    def roles(self) -> list[str]:
        return [r["name"] for r in self.body["token"].get("roles", [])]

    @property
    def expires_at(self) -> str:
        return str(self.body["token"]["expires_at"])


@dataclass
class Account:
    """A user with roles on a project of its own (names unique per call), as a test's
    caller: its password, its tokens and the ``OS_*`` settings a client logs in with."""

    keystone: KeystoneProcess
    username: str
    password: str
    project: str
    project_id: str
    user_id: str
    roles: tuple[str, ...]

    def token(self) -> Token:
        return self.keystone.token(self.username, self.password, self.project)

    def openrc(self) -> dict[str, str]:
        """What ``openstack`` needs to log in as this user (``OS_AUTH_URL`` and friends)."""
        return {"OS_AUTH_URL": self.keystone.url, "OS_USERNAME": self.username,
                "OS_PASSWORD": self.password, "OS_PROJECT_NAME": self.project,
                "OS_USER_DOMAIN_NAME": "Default", "OS_PROJECT_DOMAIN_NAME": "Default",
                "OS_IDENTITY_API_VERSION": "3"}


@dataclass
class KeystoneProcess:
    """A running Keystone: where it answers, how to administer it, how to stop it."""

    proc: subprocess.Popen[bytes]
    state: Path
    port: int
    token_expiration: int
    _admin: httpx.Client | None = field(default=None, repr=False)
    _admin_token: Token | None = field(default=None, repr=False)
    _service: Account | None = field(default=None, repr=False)

    @property
    def url(self) -> str:
        """The identity v3 URL (``OS_AUTH_URL``)."""
        return f"http://127.0.0.1:{self.port}/v3"

    @property
    def access_log(self) -> Path:
        return self.state / "access.log"

    def logs(self) -> str:
        parts = []
        for name in ("gunicorn.log", "keystone.log"):
            path = self.state / name
            if path.exists():
                parts.append(f"--- {name}\n" + path.read_text(errors="replace")[-4000:])
        return "\n".join(parts)

    # -- tokens -------------------------------------------------------------------------

    def token(self, username: str, password: str, project: str | None = None, *,
              project_id: str | None = None, domain: str = "Default") -> Token:
        """Password authentication; scoped to ``project`` (a name) or ``project_id``,
        unscoped when neither is given."""
        auth: dict[str, Any] = {"identity": {"methods": ["password"], "password": {"user": {
            "name": username, "password": password, "domain": {"name": domain}}}}}
        if project_id is not None:
            auth["scope"] = {"project": {"id": project_id}}
        elif project is not None:
            auth["scope"] = {"project": {"name": project, "domain": {"name": domain}}}
        with httpx.Client(timeout=30.0) as client:
            reply = client.post(self.url + "/auth/tokens", json={"auth": auth})
        if reply.status_code != 201:
            raise AssertionError(f"token for {username}: {reply.status_code} {reply.text}")
        return Token(reply.headers["X-Subject-Token"], reply.json())

    def admin(self) -> httpx.Client:
        """An HTTP client carrying a fresh admin token (re-issued when it nears expiry)."""
        token = self._admin_token
        if self._admin is None or token is None or _expiring(token):
            token = self.token(ADMIN_USER, ADMIN_PASSWORD, ADMIN_PROJECT)
            if self._admin is not None:
                self._admin.close()
            self._admin = httpx.Client(base_url=self.url, timeout=30.0,
                                       headers={"X-Auth-Token": token.id})
            self._admin_token = token
        return self._admin

    def _call(self, method: str, path: str, expect: int | tuple[int, ...] = (200, 201, 204),
              **kwargs: Any) -> Any:
        reply = self.admin().request(method, path, **kwargs)
        wanted = (expect,) if isinstance(expect, int) else expect
        if reply.status_code not in wanted:
            raise AssertionError(f"keystone {method} {path}: {reply.status_code} {reply.text}")
        return reply.json() if reply.content else None

    def revoke(self, token: str) -> None:
        self._call("DELETE", "/auth/tokens", headers={"X-Subject-Token": token})

    # -- identities ---------------------------------------------------------------------

    def role_id(self, name: str) -> str:
        found = self._call("GET", "/roles", params={"name": name})["roles"]
        if found:
            return str(found[0]["id"])
        return str(self._call("POST", "/roles", json={"role": {"name": name}})["role"]["id"])

    def project_id(self, name: str, domain_id: str = "default") -> str:
        found = self._call("GET", "/projects",
                           params={"name": name, "domain_id": domain_id})["projects"]
        if found:
            return str(found[0]["id"])
        body = {"project": {"name": name, "domain_id": domain_id}}
        return str(self._call("POST", "/projects", json=body)["project"]["id"])

    def create_user(self, name: str, password: str, project: str | None = None,
                    roles: Sequence[str] = ("member",), domain_id: str = "default") -> str:
        """A user with ``roles`` on ``project`` (created if missing); returns its id."""
        body = {"user": {"name": name, "password": password, "domain_id": domain_id}}
        user_id = str(self._call("POST", "/users", json=body)["user"]["id"])
        if project is not None:
            project_id = self.project_id(project, domain_id)
            for role in roles:
                self.grant(user_id, project_id, role)
        return user_id

    def account(self, roles: Sequence[str] = ("member",), *, project: str | None = None,
                prefix: str = "u") -> Account:
        """A new user with ``roles`` on ``project`` (a new project unless named)."""
        suffix = uuid.uuid4().hex[:8]
        project = project or f"p-{suffix}"
        username, password = f"{prefix}-{suffix}", f"pw-{uuid.uuid4().hex}"
        user_id = self.create_user(username, password, project, roles)
        return Account(self, username, password, project, self.project_id(project), user_id,
                       tuple(roles))

    def service_account(self) -> Account:
        """Kiln's own service user (project ``service``, roles admin and service), made
        once per instance: the credentials of ``[keystone_authtoken]`` and ``[trustee]``."""
        if self._service is None:
            self._service = self.account(("admin", "service"), project="service",
                                         prefix="kiln")
        return self._service

    def kiln_options(self, **authtoken: Any) -> dict[str, dict[str, Any]]:
        """Kiln config sections for keystone mode with this Keystone."""
        service = self.service_account()
        section: dict[str, Any] = {
            "www_authenticate_uri": self.url, "auth_url": self.url, "auth_type": "password",
            "username": service.username, "password": service.password,
            "project_name": service.project, "user_domain_name": "Default",
            "project_domain_name": "Default", "interface": "public",
            "http_connect_timeout": 5}
        section.update(authtoken)
        trustee = {"auth_type": "password", "auth_url": self.url,
                   "username": service.username, "password": service.password,
                   "user_domain_name": "Default"}
        return {"paste_deploy": {"flavor": "keystone"}, "keystone_authtoken": section,
                "trustee": trustee}

    def grant(self, user_id: str, project_id: str, role: str) -> None:
        self._call("PUT", f"/projects/{project_id}/users/{user_id}/roles/{self.role_id(role)}")

    def delete_user(self, user_id: str) -> None:
        self._call("DELETE", f"/users/{user_id}")

    def register_service(self, service_type: str, name: str, url: str,
                         region: str = REGION) -> str:
        """A catalog service with public, internal and admin endpoints at ``url``."""
        body = {"service": {"type": service_type, "name": name}}
        service_id = str(self._call("POST", "/services", json=body)["service"]["id"])
        for interface in ("public", "internal", "admin"):
            self._call("POST", "/endpoints", json={"endpoint": {
                "service_id": service_id, "interface": interface, "url": url,
                "region_id": region}})
        return service_id

    def _point_identity_endpoints_here(self) -> None:
        services = self._call("GET", "/services", params={"type": "identity"})["services"]
        for service in services:
            endpoints = self._call("GET", "/endpoints",
                                   params={"service_id": service["id"]})["endpoints"]
            for endpoint in endpoints:
                self._call("PATCH", f"/endpoints/{endpoint['id']}",
                           json={"endpoint": {"url": self.url + "/"}})

    # -- observation --------------------------------------------------------------------

    def validations(self) -> int:
        """How many token validations (``GET /v3/auth/tokens``) Keystone has answered.

        gunicorn writes an access-log line after the response has gone out, so a count
        read straight after a reply can miss it. A marker request sent now, whose line is
        awaited (bounded), puts every earlier request's line in the log first."""
        marker = f"/v3?kiln-marker={uuid.uuid4().hex}"
        with httpx.Client(timeout=60.0) as client:
            client.get(f"http://127.0.0.1:{self.port}{marker}")
        # generous: at load 15+ on 2 CPUs the one gunicorn worker can be slow to write it,
        # and a count read without the marker could miss the last requests' lines
        deadline = time.monotonic() + 60.0
        while True:
            text = self.access_log.read_text(errors="replace")
            if marker in text:
                return text.count('"GET /v3/auth/tokens ')
            if time.monotonic() > deadline:
                raise AssertionError(f"Keystone never logged the marker request {marker}")
            time.sleep(0.02)  # the marker's line is written just after its reply; bounded

    # -- life ---------------------------------------------------------------------------

    def running(self) -> bool:
        return self.proc.poll() is None

    def stop(self, timeout: float = 20.0) -> None:
        if self._admin is not None:
            self._admin.close()
            self._admin = None
        if self.proc.poll() is None:
            # SIGQUIT: gunicorn's quick shutdown (SIGTERM waits out in-flight requests)
            self.proc.send_signal(signal.SIGQUIT)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                # the group is the one this module started (start_new_session)
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()


def _expiring(token: Token) -> bool:
    from datetime import UTC, datetime, timedelta

    expires = datetime.fromisoformat(token.expires_at.replace("Z", "+00:00"))
    return expires - datetime.now(UTC) < timedelta(seconds=30)


def start_keystone(workdir: Path, *, token_expiration: int = 3600, port: int | None = None,
                   debug: bool = False) -> KeystoneProcess:
    """A new Keystone in ``workdir`` (made from the cached template) on a free port, ready.
    Raises KeystoneUnavailable when it cannot be installed or does not come up.

    A chosen port that another process takes before gunicorn binds it is a race of the
    test machine: the start is repeated on a newly chosen port."""
    for attempt in range(1, PORT_ATTEMPTS + 1):
        try:
            return _start_keystone_once(workdir, token_expiration=token_expiration,
                                        port=port, debug=debug)
        except KeystonePortTaken:
            if attempt == PORT_ATTEMPTS or port is not None:
                raise
    raise AssertionError("unreachable")


class KeystonePortTaken(KeystoneUnavailable):
    """gunicorn could not bind its port: another process took it first."""


def _start_keystone_once(workdir: Path, *, token_expiration: int, port: int | None,
                         debug: bool) -> KeystoneProcess:
    inst = installation()
    state = workdir
    if state.exists():
        shutil.rmtree(state)
    state.mkdir(parents=True)
    shutil.copy2(inst.template / "keystone.db", state / "keystone.db")
    _fresh_keys(state / "fernet-keys")
    _fresh_keys(state / "credential-keys", count=1)
    write_keystone_conf(state, token_expiration=token_expiration, debug=debug)
    port = port or free_port()
    out = (state / "gunicorn.out").open("ab")
    proc = subprocess.Popen(
        [str(inst.bin("gunicorn")), "--bind", f"127.0.0.1:{port}", "--workers", "1",
         "--worker-class", "gthread", "--threads", "8", "--timeout", "120",
         "--no-control-socket", "--access-logfile", str(state / "access.log"),
         "--error-logfile", str(state / "gunicorn.log"),
         "--pythonpath", str(SHIM_DIR), "kiln_keystone_wsgi:application"],
        stdin=subprocess.DEVNULL, stdout=out, stderr=out, env=_keystone_env(state),
        cwd=state, start_new_session=True)
    out.close()
    keystone = KeystoneProcess(proc=proc, state=state, port=port,
                               token_expiration=token_expiration)
    try:
        _wait_ready(keystone, time.monotonic() + START_DEADLINE)
        keystone._point_identity_endpoints_here()
    except BaseException:
        keystone.stop()
        raise
    return keystone


def _wait_ready(keystone: KeystoneProcess, deadline: float) -> None:
    delay = 0.05
    with httpx.Client(timeout=2.0) as client:
        while True:
            if not keystone.running():
                logs = keystone.logs()
                kind = (KeystonePortTaken if "Connection in use" in logs
                        or "Address already in use" in logs else KeystoneUnavailable)
                raise kind(f"keystone exited with {keystone.proc.returncode} while "
                           f"starting:\n{logs}")
            try:
                if (client.get(keystone.url).status_code == 200
                        and listens_on(keystone.proc.pid, keystone.port)):
                    return
            except httpx.TransportError:
                pass
            if time.monotonic() > deadline:
                raise KeystoneUnavailable(
                    f"keystone did not answer on {keystone.url} within {START_DEADLINE}s:\n"
                    f"{keystone.logs()}")
            time.sleep(delay)  # readiness poll with backoff, bounded by the deadline
            delay = min(delay * 2, 0.3)


def main() -> int:
    """Build the cached installation (CI runs this beside the linters)."""
    started = time.monotonic()
    try:
        inst = installation()
    except KeystoneUnavailable as exc:
        print(f"keystone: not installed: {exc}", file=sys.stderr)
        return 1
    print(f"keystone {KEYSTONE_VERSION} ready in {inst.root} "
          f"({time.monotonic() - started:.1f}s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
