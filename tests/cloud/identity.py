"""Kiln behind the test cloud's own Keystone, as Heat is deployed: ``[paste_deploy]
flavor = keystone``, a service user for ``[keystone_authtoken]`` and ``[trustee]``, and
no ``[kiln_clients]`` credentials, so every cloud call acts with a user's token or a
stack's trust. Users get projects of their own and the ``member`` role; the helpers give
their heatclient and openstacksdk connections."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any

from tests.support.cloud import Cloud

#: Kiln's service user in the cloud (project ``service``, roles admin and service)
SERVICE_USER = "kiln"


def _find(finder: Any, name: str, **kwargs: Any) -> Any:
    from openstack import exceptions

    try:
        return finder(name, ignore_missing=False, **kwargs)
    except exceptions.NotFoundException:
        return None


def ensure_service_user(cloud: Cloud, sdk: Any) -> dict[str, str]:
    """Kiln's service user (made once, idempotent): its login for the config."""
    idn = sdk.identity
    project = _find(idn.find_project, "service", domain_id="default")
    user = _find(idn.find_user, SERVICE_USER, domain_id="default")
    password = cloud.layout.service_password
    if user is None:
        user = idn.create_user(name=SERVICE_USER, domain_id="default", password=password,
                               default_project_id=project.id)
    for role in ("admin", "service"):
        idn.assign_project_role_to_user(project, user, _find(idn.find_role, role))
    return {"username": SERVICE_USER, "password": password, "project_name": "service"}


def keystone_options(cloud: Cloud, sdk: Any) -> dict[str, dict[str, Any]]:
    """kiln.conf sections for keystone mode against the cloud's Keystone (Heat's
    deployment: authtoken, trusts through ``[trustee]``, the catalog's endpoints)."""
    login = ensure_service_user(cloud, sdk)
    url = cloud.auth_url
    authtoken = {"www_authenticate_uri": url, "auth_url": url, "auth_type": "password",
                 "username": login["username"], "password": login["password"],
                 "project_name": login["project_name"], "user_domain_name": "Default",
                 "project_domain_name": "Default", "interface": "public",
                 "region_name": cloud.region}
    trustee = {"auth_type": "password", "auth_url": url, "username": login["username"],
               "password": login["password"], "user_domain_name": "Default"}
    return {"paste_deploy": {"flavor": "keystone"}, "keystone_authtoken": authtoken,
            "trustee": trustee, "clients_keystone": {"auth_uri": url},
            "kiln_clients": {"retry_initial_delay": 0.2},
            "DEFAULT": {"region_name_for_services": cloud.region,
                        "deferred_auth_method": "trusts"}}


@dataclass(frozen=True)
class CloudUser:
    """A user with the ``member`` role on a project of its own in the test cloud."""

    cloud: Cloud
    name: str
    password: str
    project: str
    project_id: str

    def auth(self) -> dict[str, str]:
        return {"auth_url": self.cloud.auth_url, "username": self.name,
                "password": self.password, "project_name": self.project,
                "user_domain_name": "Default", "project_domain_name": "Default"}

    def session(self) -> Any:
        from keystoneauth1 import session
        from keystoneauth1.identity import v3

        return session.Session(auth=v3.Password(**self.auth()))

    def connect(self) -> Any:
        """openstacksdk as this user."""
        import openstack

        return openstack.connect(auth=self.auth(), region_name=self.cloud.region,
                                 interface="public", identity_api_version="3")

    def heat(self, kiln_url: str) -> Any:
        """heatclient as this user, on Kiln's orchestration endpoint for the project."""
        from heatclient import client as heat

        return heat.Client("1", session=self.session(),
                           endpoint_override=f"{kiln_url}/v1/{self.project_id}")


def new_user(cloud: Cloud, sdk: Any, prefix: str = "u") -> CloudUser:
    """A new project and a user with ``member`` on it."""
    idn = sdk.identity
    suffix = uuid.uuid4().hex[:8]
    project = idn.create_project(name=f"{prefix}-p-{suffix}", domain_id="default")
    password = f"pw-{uuid.uuid4().hex}"
    user = idn.create_user(name=f"{prefix}-{suffix}", domain_id="default",
                           password=password, default_project_id=project.id)
    idn.assign_project_role_to_user(project, user, _find(idn.find_role, "member"))
    return CloudUser(cloud, user.name, password, project.name, project.id)


def remove_user(sdk: Any, user: CloudUser) -> None:
    """The user and its project go (what it made in the services is the test's)."""
    idn = sdk.identity
    found = _find(idn.find_user, user.name, domain_id="default")
    if found is not None:
        idn.delete_user(found)
    idn.delete_project(user.project_id, ignore_missing=True)
