"""What the test cloud holds before any test runs: Keystone's service users and catalog,
then the shared objects templates refer to by name (flavors, an image, an external
network). Both steps are idempotent and use openstacksdk as the cloud's admin.
"""

from __future__ import annotations

from typing import Any

from tests.support.cloud.layout import CloudLayout

#: name -> (RAM MiB, vCPUs, disk GiB); the fake virt driver has room for hundreds
FLAVORS = {"m1.tiny": (512, 1, 1), "m1.small": (2048, 1, 20), "m1.medium": (4096, 2, 40)}
IMAGE = "cirros-kiln"
PUBLIC_NET = "public"
PUBLIC_CIDR = "172.24.0.0/16"


def admin_auth(layout: CloudLayout) -> dict[str, Any]:
    return {"auth_url": layout.auth_url, "username": "admin",
            "password": layout.admin_password, "project_name": "admin",
            "user_domain_name": "Default", "project_domain_name": "Default"}


def connect(layout: CloudLayout) -> Any:
    import openstack

    return openstack.connect(auth=admin_auth(layout), region_name=layout.region,
                             interface="public", identity_api_version="3")


def register(layout: CloudLayout) -> None:
    """Service project, roles, one user per service (admin + service roles), and the
    catalog's services with public/internal/admin endpoints (updated if a URL moved)."""
    conn = connect(layout)
    idn = conn.identity
    project = _find(lambda n, **k: idn.find_project(n, domain_id="default", **k),
                    "service")
    if project is None:
        project = idn.create_project(name="service", domain_id="default",
                                     description="service users")
    roles = {name: _find(idn.find_role, name) or idn.create_role(name=name)
             for name in ("admin", "service", "member", "reader")}
    for user_name in sorted({user for user, _, _ in layout.catalog_urls().values()}):
        user = _find(lambda n, **k: idn.find_user(n, domain_id="default", **k), user_name)
        if user is None:
            user = idn.create_user(name=user_name, domain_id="default",
                                   password=layout.service_password,
                                   default_project_id=project.id)
        for role in ("admin", "service"):
            idn.assign_project_role_to_user(project, user, roles[role])
    for service_type, (_, name, url) in layout.catalog_urls().items():
        service = next((s for s in idn.services(type=service_type) if s.name == name), None)
        if service is None:
            service = idn.create_service(name=name, type=service_type, description=name)
        have = {e.interface: e for e in idn.endpoints(service_id=service.id,
                                                      region_id=layout.region)}
        for interface in ("public", "internal", "admin"):
            if interface not in have:
                idn.create_endpoint(service_id=service.id, url=url, interface=interface,
                                    region_id=layout.region)
            elif have[interface].url != url:
                idn.update_endpoint(have[interface], url=url)


def _find(finder: Any, name: str) -> Any:
    from openstack import exceptions

    try:
        return finder(name, ignore_missing=False)
    except exceptions.NotFoundException:
        return None


def seed(layout: CloudLayout) -> None:
    """Flavors, a small raw image and the external network ``public`` with a subnet."""
    conn = connect(layout)
    for name, (ram, vcpus, disk) in FLAVORS.items():
        if _find(conn.compute.find_flavor, name) is None:
            conn.compute.create_flavor(name=name, ram=ram, vcpus=vcpus, disk=disk)
    if _find(conn.image.find_image, IMAGE) is None:
        conn.image.create_image(name=IMAGE, data=b"\0" * 1048576, disk_format="raw",
                                container_format="bare", visibility="public",
                                allow_duplicates=True)
    # the admin project runs the tests and the benchmarks (50 servers and more)
    admin = _find(lambda n, **k: conn.identity.find_project(n, domain_id="default", **k),
                  "admin")
    conn.compute.update_quota_set(admin.id, instances=-1, cores=-1, ram=-1,
                                  key_pairs=-1, server_groups=-1)
    conn.network.update_quota(admin.id, network=-1, subnet=-1, port=-1, router=-1,
                              floatingip=-1, security_group=-1, security_group_rule=-1)
    conn.block_storage.update_quota_set(admin.id, volumes=-1, gigabytes=-1,
                                        snapshots=-1)
    net = _find(conn.network.find_network, PUBLIC_NET)
    if net is None:
        net = conn.network.create_network(
            name=PUBLIC_NET, is_router_external=True, is_shared=False,
            provider_network_type="flat", provider_physical_network="public")
    if not list(conn.network.subnets(network_id=net.id)):
        conn.network.create_subnet(network_id=net.id, name=f"{PUBLIC_NET}-subnet",
                                   ip_version=4, cidr=PUBLIC_CIDR, enable_dhcp=False)
