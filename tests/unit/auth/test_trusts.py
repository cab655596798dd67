"""Which processes get Keystone trusts (kiln.server.build_delegation), and what the
stacks' clients log in with through a trust (no Keystone needed for either: the real
trust calls are tested in tests/functional/identity/test_trusts.py)."""

from __future__ import annotations

import logging

import pytest
from oslo_config import cfg

from kiln import conf_identity
from kiln.server import NoTrustee, PasswordDelegation, TrustDelegation, build_delegation

KEYSTONE = "http://127.0.0.1:1/v3"


def make_conf(*, flavor: str = "keystone", trustee: bool = True,
              **defaults: object) -> cfg.ConfigOpts:
    conf = cfg.ConfigOpts()
    conf_identity.register(conf)
    conf.register_opts([cfg.StrOpt("auth_uri")], group="clients_keystone")
    conf([], project="kiln-test", default_config_files=[])
    conf.set_override("flavor", flavor, group="paste_deploy")
    conf.set_override("www_authenticate_uri", KEYSTONE, group="keystone_authtoken")
    for name, value in defaults.items():
        conf.set_override(name, value)
    if trustee:
        conf.set_override("auth_type", "password", group="trustee")
        from keystoneauth1 import loading

        conf.register_opts(loading.get_auth_plugin_conf_options("password"),
                           group="trustee")
        for name, value in (("auth_url", KEYSTONE), ("username", "kiln"),
                            ("password", "kiln-secret"), ("user_domain_name", "Default"),
                            ("project_name", "service")):
            conf.set_override(name, value, group="trustee")
    return conf


def test_keystone_mode_with_a_trustee_gets_trusts() -> None:
    made = build_delegation(make_conf())
    assert isinstance(made, TrustDelegation)
    assert made.reauthenticate is False
    assert made.trusts.trusts_url == KEYSTONE + "/OS-TRUST/trusts"
    again = build_delegation(make_conf(reauthentication_auth_method="trusts"))
    assert isinstance(again, TrustDelegation) and again.reauthenticate is True


def test_no_trusts_without_keystone_or_a_trustee_and_passwords_for_the_password_method(
        caplog: pytest.LogCaptureFixture) -> None:
    assert build_delegation(make_conf(flavor="noauth")) is None
    assert isinstance(build_delegation(make_conf(deferred_auth_method="password")),
                      PasswordDelegation)
    with caplog.at_level(logging.WARNING, logger="kiln.server"):
        untrusted = build_delegation(make_conf(trustee=False))
    # not None (noauth's "no delegation"): the engine must know nothing was delegated
    assert isinstance(untrusted, NoTrustee)
    assert "[trustee] has no auth_type: stacks get no trust" in caplog.text


def test_stored_passwords_log_the_clients_in_by_user_id_in_the_stacks_project() -> None:
    made = build_delegation(make_conf(deferred_auth_method="password"))
    assert isinstance(made, PasswordDelegation) and made.reauthenticate is False
    assert made.passwords.client_auth("u1", "pw", "p1") == ("v3password", {
        "auth_url": KEYSTONE, "user_id": "u1", "password": "pw", "project_id": "p1"})


def test_the_stacks_clients_log_in_as_the_trustee_through_the_trust_unscoped() -> None:
    made = build_delegation(make_conf())
    assert isinstance(made, TrustDelegation)
    assert made.trusts.client_auth("a-trust") == ("password", {
        "auth_url": KEYSTONE, "username": "kiln", "password": "kiln-secret",
        "user_domain_name": "Default", "trust_id": "a-trust"})
