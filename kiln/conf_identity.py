"""The identity options, with the section and option names Heat 27 reads.

``[keystone_authtoken]`` carries keystonemiddleware's options (those Kiln acts on; the
rest of keystonemiddleware's are accepted and ignored, see kiln.conf_loader) plus a
keystoneauth1 auth plugin (``auth_type`` and the plugin's own options, which are known
only once ``auth_type`` is read). Config files are checked before that, so the keys every
installed keystoneauth1 plugin defines are accepted in the plugin sections; a key no
plugin has is still refused.

A shared module beside kiln.conf (it was kiln.auth.options): the configuration registers
these at import, and every layer reads them, so it belongs to no layer and imports none.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from oslo_config import cfg
from oslo_policy import opts as policy_opts

FLAVORS = ("noauth", "keystone", "standalone", "custombackend")

paste_deploy_opts = [
    cfg.StrOpt("flavor", default="noauth",
               help="Authentication mode: noauth (no authentication, the project is the "
                    "URL's), keystone (an empty value means keystone too, as in Heat), "
                    "standalone or custombackend."),
    cfg.StrOpt("api_paste_config", default="api-paste.ini",
               help="Accepted for heat.conf compatibility; Kiln has no paste pipeline."),
]

authtoken_opts = [
    cfg.StrOpt("www_authenticate_uri", deprecated_name="auth_uri",
               help="Keystone URL named in the WWW-Authenticate header of a 401, where "
                    "clients get a token; defaults to the auth plugin's auth_url."),
    cfg.StrOpt("interface", default="internal",
               help="Catalog interface of the identity endpoint tokens are validated at."),
    cfg.StrOpt("region_name", help="Region of the identity endpoint."),
    cfg.IntOpt("http_connect_timeout", min=1,
               help="Seconds one request to Keystone may take. Kiln bounds it to 10 s "
                    "when unset (keystonemiddleware would wait without limit)."),
    cfg.IntOpt("http_request_max_retries", default=3, min=0,
               help="Retries of a Keystone request whose connection failed; all of them "
                    "together stay within http_connect_timeout."),
    cfg.IntOpt("token_cache_time", default=300, min=-1,
               help="Seconds a validated token is reused without asking Keystone again "
                    "(never past its expiry); -1 disables the cache."),
    cfg.IntOpt("token_cache_size", default=10000, min=1,
               help="Most validated tokens kept in the cache (Kiln only); the least "
                    "recently used leave first."),
    cfg.ListOpt("service_token_roles", default=["service"],
                help="A service token (X-Service-Token) must have one of these roles "
                     "to be honoured."),
    cfg.BoolOpt("service_token_roles_required", default=True,
                help="Refuse a service token without one of service_token_roles (False: "
                     "accept it, but it still may not extend an expired user token)."),
    cfg.BoolOpt("include_service_catalog", default=True,
                help="Ask Keystone for the token's service catalog when validating."),
    cfg.StrOpt("cafile", help="CA bundle for HTTPS to Keystone."),
    cfg.StrOpt("certfile", help="Client certificate for HTTPS to Keystone."),
    cfg.StrOpt("keyfile", help="Client key for HTTPS to Keystone."),
    cfg.BoolOpt("insecure", default=False, help="Skip HTTPS certificate checks."),
]

custom_auth_opts = [
    cfg.StrOpt("backend",
               help="Name of the kiln.auth entry point that authenticates requests when "
                    "[paste_deploy] flavor = custombackend (Kiln ships tokens_file)."),
    cfg.StrOpt("tokens_file",
               help="YAML list of fixed tokens for the tokens_file backend "
                    "(kiln/auth/tokens_file.py: token or token_sha256, user_id, "
                    "project_id, roles)."),
]

policy_extra_opts = [
    cfg.BoolOpt("enforce_scope", default=True,
                help="Check that the token's scope (project, domain, system) is one the "
                     "rule allows, as older oslo.policy releases' option of this name."),
]

#: keystoneauth1's own two options of an auth plugin section (the same definitions as
#: keystoneauth1.loading.register_auth_conf_options, without importing keystoneauth1 into
#: every process: it costs ~0.25 s at startup and noauth never uses it)
auth_plugin_opts = [
    cfg.StrOpt("auth_type", deprecated_name="auth_plugin", help="Authentication type to load"),
    cfg.StrOpt("auth_section",
               help="Config Section from which to load plugin specific options"),
]

#: Deferred authentication, with Heat 27's names: ``deferred_auth_method`` (``trusts``,
#: Heat's default, or ``password``), ``reauthentication_auth_method`` (``trusts``: every
#: action on a stack acts through its trust), ``allow_trusts_redelegation``,
#: ``trusts_delegated_roles``; ``[trustee]`` holds the keystoneauth1 auth plugin of the
#: user the trusts are given to (no project: a trust scopes its tokens). The trust calls
#: are in kiln.auth.trusts.
TRUSTEE_GROUP = "trustee"

deferred_auth_opts = [
    cfg.StrOpt("deferred_auth_method", choices=["password", "trusts"], default="trusts",
               help="How Kiln acts for a stack's owner when no request of theirs is "
                    "behind the work (signals, scaling, alarms, nested stacks, recovery): "
                    "trusts (a Keystone trust from the owner to the [trustee] user, made "
                    "at stack create) or password (Heat's stored passwords: the "
                    "creator's X-Auth-User/X-Auth-Key kept encrypted with the stack)."),
    cfg.StrOpt("reauthentication_auth_method", choices=["", "trusts"], default="",
               help="trusts: every action on a stack acts through its trust, so one "
                    "that outlives the user's token completes (this defeats the expiry "
                    "of the user's token). Empty: a user's own actions act with their "
                    "token."),
    cfg.BoolOpt("allow_trusts_redelegation", default=False,
                help="Create trusts that may be redelegated (only with "
                     "reauthentication_auth_method = trusts)."),
    cfg.ListOpt("trusts_delegated_roles", default=[],
                help="The roles of the stack's owner the trust delegates to Kiln; empty: "
                     "all the roles of the token that created the stack."),
]


#: TLS of the trustee's calls to Keystone (keystoneauth1's session option names)
trustee_tls_opts = [
    cfg.StrOpt("cafile", help="CA bundle for HTTPS to Keystone."),
    cfg.StrOpt("certfile", help="Client certificate for HTTPS to Keystone."),
    cfg.StrOpt("keyfile", help="Client key for HTTPS to Keystone."),
    cfg.BoolOpt("insecure", default=False, help="Skip HTTPS certificate checks."),
]


#: sections holding a keystoneauth1 auth plugin (auth_type + the plugin's options)
AUTH_PLUGIN_GROUPS = ("keystone_authtoken", "trustee")


@cache
def plugin_option_names() -> frozenset[str]:
    """Every config key an installed keystoneauth1 auth plugin defines."""
    names: set[str] = set()
    from keystoneauth1 import loading as ks_loading

    loaders: dict[str, ks_loading.BaseLoader[Any]] = ks_loading.get_available_plugin_loaders()
    for loader in loaders.values():
        try:
            options = loader.get_options()
        except ImportError:  # a third-party plugin missing a dependency: not offered
            continue
        for opt in options:
            names.add(opt.dest)
            names.update(d.name.replace("-", "_") for d in opt.deprecated if d.name)
    return frozenset(names)


#: ``[DEFAULT]``: the stack domain users servers get credentials of (kiln.auth.stack_users)
stack_user_opts = [
    cfg.StrOpt("heat_stack_user_role", default="heat_stack_user",
               help="Keystone role of the users Kiln creates for servers (stack users)."),
    cfg.StrOpt("stack_user_domain_id",
               help="Keystone domain ID which contains the stack users and their "
                    "per-stack projects. If set, stack_user_domain_name is ignored."),
    cfg.StrOpt("stack_user_domain_name",
               help="Keystone domain name which contains the stack users and their "
                    "per-stack projects (see `kiln keystone-setup`)."),
    cfg.StrOpt("stack_domain_admin",
               help="Keystone user name of an admin of the stack user domain."),
    cfg.StrOpt("stack_domain_admin_password", secret=True,
               help="Password of stack_domain_admin."),
]


def register(conf: cfg.ConfigOpts) -> None:
    conf.register_opts(stack_user_opts)
    conf.register_opts(paste_deploy_opts, group="paste_deploy")
    conf.register_opts(authtoken_opts, group="keystone_authtoken")
    conf.register_opts(custom_auth_opts, group="kiln_auth")
    policy_opts.set_defaults(conf)
    conf.register_opts(policy_extra_opts, group="oslo_policy")
    for group in AUTH_PLUGIN_GROUPS:
        conf.register_opts(auth_plugin_opts, group=group)
    conf.register_opts(deferred_auth_opts)
    conf.register_opts(trustee_tls_opts, group=TRUSTEE_GROUP)


def flavor(conf: cfg.ConfigOpts) -> str:
    """The authentication mode; Heat's empty flavor is keystone."""
    value = (conf.paste_deploy.flavor or "").strip().lower()
    return value or "keystone"
