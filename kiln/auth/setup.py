"""Choosing and building the authentication mode at startup (``[paste_deploy] flavor``)."""

from __future__ import annotations

from oslo_config import cfg

from kiln.auth.middleware import Authenticator
from kiln.conf_identity import FLAVORS, flavor


def authenticator(conf: cfg.ConfigOpts) -> Authenticator | None:
    """The configured mode's authenticator; None for noauth. Raises ConfigError."""
    from kiln.conf_loader import ConfigError

    mode = flavor(conf)
    if mode == "noauth":
        return None
    if mode == "keystone":
        from kiln.auth.keystone import KeystoneAuthenticator
        from kiln.auth.stack_users import check_config

        check_config(conf)

        return KeystoneAuthenticator(conf)
    if mode == "standalone":
        from kiln.auth.standalone import StandaloneAuthenticator

        return StandaloneAuthenticator(conf)
    if mode == "custombackend":
        from kiln.auth.custom import load_backend

        return load_backend(conf)
    raise ConfigError(f"[paste_deploy] flavor: unknown value {conf.paste_deploy.flavor!r}; "
                      f"one of {', '.join(FLAVORS)} (empty means keystone)")
