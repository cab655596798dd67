"""Which key encrypts secrets at rest: the operator's, or one Kiln made and kept.

``[DEFAULT] auth_encryption_key`` set in a configuration file always wins. Unset, Kiln
uses the key in ``<state_path>/auth_encryption_key``, generating it (32 random bytes,
file mode 0600) the first time, so a fresh install never encrypts with a key anyone can
read in Heat's sample configuration, as Kiln did before. That suits one machine; every
process sharing a server database (``kiln api`` and ``kiln engine`` on several hosts)
must be given the same key, so with such a database and no key configured a warning says
so.

Heat's sample value (:data:`kiln.db.crypt.LEGACY_DEFAULT_KEY`) set explicitly is refused
in an authenticating mode (any ``[paste_deploy] flavor`` but ``noauth``: tenants' secrets
are at stake) and warned about once in no-auth mode.

The resolved key is set as the option's override, so every reader of
``auth_encryption_key`` (the database's encryption, signal tokens) sees the same value.
"""

from __future__ import annotations

import contextlib
import logging
import os
import secrets

from oslo_config import cfg

from kiln.conf_loader import ConfigError, database_url, state_path

LOG = logging.getLogger(__name__)

#: the file under state_path holding a generated key
KEY_FILE = "auth_encryption_key"
#: the sample-key warning is given once a process, however often the key is resolved
_warned: set[str] = set()
#: (level, message, args) logged by :func:`log_notes` once the server has started, so
#: that a start failing later still shows its one error line first
_notes: list[tuple[int, str, tuple[object, ...]]] = []


def key_file(conf: cfg.ConfigOpts) -> str:
    return os.path.join(state_path(conf), KEY_FILE)


def resolve(conf: cfg.ConfigOpts) -> str:
    """The key this process encrypts with (and sets as the option's value); raises
    ConfigError for Heat's public sample key in an authenticating mode or a key file
    that cannot be read or made."""
    from kiln.conf_identity import flavor
    from kiln.db.crypt import LEGACY_DEFAULT_KEY

    configured = conf.auth_encryption_key
    if configured is not None:
        key = str(configured)
        if key == LEGACY_DEFAULT_KEY:
            if flavor(conf) != "noauth":
                raise ConfigError(
                    "auth_encryption_key is Heat's public sample value: set [DEFAULT] "
                    "auth_encryption_key to a random secret (e.g. the output of "
                    "`openssl rand -hex 32`), or remove it to use a generated key")
            if "sample" not in _warned:
                _warned.add("sample")
                _notes.append((logging.WARNING, "auth_encryption_key is Heat's public "
                               "sample value: secrets at rest are as good as plain text; "
                               "set it to a random secret or remove it to use a generated "
                               "key", ()))
        return key
    key = _read_or_create(key_file(conf))
    if not database_url(conf).startswith("sqlite"):
        _notes.append((logging.WARNING, "auth_encryption_key is not set: using the key "
                       "generated in %s; every kiln process sharing this database must use "
                       "the same key (set [DEFAULT] auth_encryption_key to it on each)",
                       (key_file(conf),)))
    conf.set_override("auth_encryption_key", key)
    return key


def log_notes() -> None:
    """Log what :func:`resolve` found worth saying (a generated key, a sample key)."""
    while _notes:
        level, message, args = _notes.pop(0)
        LOG.log(level, message, *args)


def _read_or_create(path: str) -> str:
    """The key in ``path``, made first if absent. A new key is written to a private temp
    file and linked into place, so two processes starting together agree on one key and
    neither reads a half-written file."""
    try:
        return _read(path)
    except FileNotFoundError:
        pass
    directory = os.path.dirname(path)
    try:
        os.makedirs(directory, exist_ok=True)
        tmp = f"{path}.{os.getpid()}.tmp"
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            with os.fdopen(fd, "w") as f:
                f.write(secrets.token_hex(32) + "\n")
            with contextlib.suppress(FileExistsError):  # another process made one first
                os.link(tmp, path)
        finally:
            os.unlink(tmp)
        key = _read(path)
    except OSError as exc:
        raise ConfigError(f"cannot create the auth_encryption_key file {path}: "
                          f"{exc.strerror}; set [DEFAULT] auth_encryption_key") from None
    _notes.append((logging.INFO, "generated auth_encryption_key in %s (file mode 0600): "
                   "keep it with the database, which cannot be read without it", (path,)))
    return key


def _read(path: str) -> str:
    try:
        with open(path, encoding="ascii") as f:
            key = f.read().strip()
    except FileNotFoundError:
        raise
    except (OSError, ValueError) as exc:
        raise ConfigError(f"cannot read the auth_encryption_key file {path}: "
                          f"{getattr(exc, 'strerror', None) or exc}") from None
    if not key:
        raise ConfigError(f"the auth_encryption_key file {path} is empty; remove it to "
                          "generate a new key (secrets stored with the old one are lost) "
                          "or write the key into it")
    mode = os.stat(path).st_mode & 0o777
    if mode & 0o077:
        LOG.warning("the auth_encryption_key file %s is readable by others (mode %o); "
                    "chmod 600 it", path, mode)
    return key
