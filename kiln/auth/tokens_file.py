"""An example ``kiln.auth`` plugin: fixed tokens listed in a YAML file.

``[paste_deploy] flavor = custombackend``, ``[kiln_auth] backend = tokens_file`` and
``[kiln_auth] tokens_file = /etc/kiln/tokens.yaml``, a list of entries::

    - token_sha256: <hex SHA-256 of the token>   # or token: <the token itself>
      user_id: ci
      project_id: ci-project
      roles: [member, reader]

A request's ``X-Auth-Token`` is looked up by its digest; unknown tokens get 401. It
shows the plugin contract (kiln.auth.middleware.Authenticator) in a few lines, and
suits a CI machine that needs a fixed credential without running Keystone.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Any

import yaml
from oslo_config import cfg

from kiln.auth.caller import Caller
from kiln.auth.errors import InvalidToken


def _digest(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8", "surrogateescape")).hexdigest()


class TokensFileAuth:
    www_authenticate = "Token"

    def __init__(self, conf: cfg.ConfigOpts) -> None:
        from kiln.conf_loader import ConfigError

        path = conf.kiln_auth.tokens_file
        if not path:
            raise ConfigError("[kiln_auth] tokens_file is required by backend tokens_file")
        try:
            with open(path, encoding="utf-8") as handle:
                entries = yaml.safe_load(handle)
        except (OSError, yaml.YAMLError) as exc:
            raise ConfigError(f"{path}: cannot read the tokens file: {exc}") from None
        if not isinstance(entries, list):
            raise ConfigError(f"{path}: the tokens file must be a list of entries")
        self._callers: dict[str, Caller] = {}
        for index, entry in enumerate(entries, 1):
            digest, caller = self._entry(entry, f"{path}: entry {index}")
            self._callers[digest] = caller

    @staticmethod
    def _entry(entry: Any, where: str) -> tuple[str, Caller]:
        from kiln.conf_loader import ConfigError

        if not isinstance(entry, dict):
            raise ConfigError(f"{where}: not a mapping")
        if "token_sha256" in entry:
            digest = str(entry["token_sha256"]).lower()
        elif "token" in entry:
            digest = _digest(str(entry["token"]))
        else:
            raise ConfigError(f"{where}: needs token or token_sha256")
        for key in ("user_id", "project_id"):
            if not entry.get(key):
                raise ConfigError(f"{where}: needs {key}")
        roles = entry.get("roles") or []
        if not isinstance(roles, list):
            raise ConfigError(f"{where}: roles must be a list")
        return digest, Caller(user_id=str(entry["user_id"]),
                              username=str(entry.get("username") or entry["user_id"]),
                              project_id=str(entry["project_id"]),
                              roles=tuple(str(r) for r in roles))

    async def authenticate(self, path: str, headers: Mapping[str, str]) -> Caller:
        token = headers.get("x-auth-token")
        caller = self._callers.get(_digest(token)) if token else None
        if caller is None:
            raise InvalidToken("unknown token")
        return caller
