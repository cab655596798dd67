"""The custombackend flavor: authentication by a plugin from the ``kiln.auth`` entry-point
group, named by ``[kiln_auth] backend``. A plugin is a class taking the ConfigOpts and
implementing kiln.auth.middleware.Authenticator; Heat's policy rules still apply to the
Caller it returns. Kiln ships one, ``tokens_file`` (kiln/auth/tokens_file.py)."""

from __future__ import annotations

from importlib.metadata import entry_points

from oslo_config import cfg

from kiln.auth.middleware import Authenticator

GROUP = "kiln.auth"


def load_backend(conf: cfg.ConfigOpts) -> Authenticator:
    from kiln.conf_loader import ConfigError

    name = conf.kiln_auth.backend
    if not name:
        raise ConfigError("[kiln_auth] backend must name a kiln.auth entry point when "
                          "[paste_deploy] flavor = custombackend")
    found = [ep for ep in entry_points(group=GROUP) if ep.name == name]
    if not found:
        known = sorted(ep.name for ep in entry_points(group=GROUP))
        raise ConfigError(f"[kiln_auth] backend: no kiln.auth entry point named {name!r} "
                          f"(installed: {', '.join(known) or 'none'})")
    # loading imports the operator's module, running its code: whatever it raises stops
    # startup as a configuration error that names the backend
    try:
        plugin = found[0].load()
    except Exception as exc:  # noqa: BLE001  (see above: an operator's code)
        raise ConfigError(f"[kiln_auth] backend {name!r} cannot be loaded: {exc}") from None
    backend: Authenticator = plugin(conf)
    return backend
