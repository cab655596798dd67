"""Custom constraints whose check needs the cloud (``nova.flavor``, ``neutron.network``,
``glance.image``...), registered under Heat's names.

Template validation is synchronous and runs before any credentials are at hand, so
here they accept any value; the plugins look the named object up when they act and
fail with Heat's wording when it does not exist.
"""

from __future__ import annotations

from typing import Any

from kiln.template.constraints import get_custom_constraint, register_custom_constraint

CLOUD_CONSTRAINTS = (
    "neutron.network", "neutron.subnet", "neutron.port", "neutron.router",
    "neutron.security_group", "neutron.qos_policy", "neutron.subnetpool",
    "neutron.segment", "neutron.address_scope", "neutron.lbaas.loadbalancer",
    "nova.flavor", "nova.keypair", "nova.server", "nova.host",
    "glance.image", "cinder.volume", "cinder.vtype", "cinder.snapshot", "cinder.backup",
    "cinder.qos_specs", "keystone.project", "keystone.user", "keystone.role",
    "keystone.domain", "keystone.group", "keystone.service", "keystone.region",
)


def _deferred(value: Any, context: Any) -> bool:
    return True


def register() -> None:
    for name in CLOUD_CONSTRAINTS:
        if get_custom_constraint(name) is None:
            register_custom_constraint(name, _deferred)


register()
