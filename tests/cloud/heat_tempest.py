"""Heat's own cloud functional tests (heat-tempest-plugin) against Kiln on the test cloud.

``python -m tests.cloud.heat_tempest --venv DIR [pytest args]`` (scripts/heat_tempest_cloud.sh
installs the plugin into DIR and calls this): the cloud is started unless it runs; Kiln
runs in keystone mode behind the cloud's Keystone (tests/cloud/identity.py) and is put in
its catalog as ``orchestration`` for the run (removed afterwards); a new project and
member user (with a network, subnet and keypair of its own, named in tempest.conf) runs
the tests; the plugin's modules that use Nova, Neutron, Glance or Cinder run under
pytest; the tally is pytest's closing line (a JUnit XML is kept under the work dir).
Exit status: pytest's.

Measured (``bash scripts/heat_tempest_cloud.sh``, 19 min on 2 shared cores, tempest
47.0.0, heat-tempest-plugin 3.0.0): 38 passed, 1 failed, 1 skipped of the 40. Left
failing: OSWaitCondition (its server must signal from inside the guest: the fake virt
driver runs none; Heat 27.0.1 on the same cloud fails it the same way); skipped:
test_signal_queues (needs Zaqar). tests/cloud/test_heat_tempest.py runs 8 of them in CI.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import uuid
from pathlib import Path
from typing import Any

from tests.cloud.identity import CloudUser, keystone_options, new_user, remove_user
from tests.support.cloud import Cloud, start
from tests.support.cloud.catalog import IMAGE, PUBLIC_NET
from tests.support.server import KilnProcess, start_kiln

#: the plugin's functional modules whose templates use Nova, Neutron, Glance or Cinder
#: (40 tests; trunk needs Neutron's trunk extension, SSH and in-guest signals a guest)
CLOUD_MODULES = (
    "test_create_update_neutron_port", "test_create_update_neutron_subnet",
    "test_create_update_neutron_trunk", "test_encrypted_parameter",
    "test_encryption_vol_type", "test_extra_route_set", "test_nova_server_networks",
    "test_os_wait_condition", "test_preview", "test_software_config",
)


def _register(sdk: Any, cloud: Cloud, kiln: KilnProcess) -> list[Any]:
    """Kiln as the catalog's orchestration service (public/internal/admin): the
    plugin's clients find Heat there. Returns what to remove afterwards."""
    idn = sdk.identity
    service = idn.create_service(name="kiln-tempest", type="orchestration",
                                 description="Kiln under heat-tempest-plugin")
    url = f"{kiln.url}/v1/%(project_id)s"
    for interface in ("public", "internal", "admin"):
        idn.create_endpoint(service_id=service.id, url=url, interface=interface,
                            region_id=cloud.region)
    return [service]


def _unregister(sdk: Any, services: list[Any]) -> None:
    idn = sdk.identity
    for service in services:
        for endpoint in idn.endpoints(service_id=service.id):
            idn.delete_endpoint(endpoint, ignore_missing=True)
        idn.delete_service(service, ignore_missing=True)


def _stack_user_role(sdk: Any) -> None:
    """The role Heat's deployments give stack users (``heat_stack_user``), made by
    Heat's own deployment tools too: Kiln refuses a SoftwareDeployment without it."""
    from openstack import exceptions

    try:
        sdk.identity.find_role("heat_stack_user", ignore_missing=False)
    except exceptions.NotFoundException:
        sdk.identity.create_role(name="heat_stack_user")


def _user_network(user: CloudUser) -> dict[str, str]:
    """The user's own network, subnet and keypair the tests name in tempest.conf."""
    conn = user.connect()
    suffix = uuid.uuid4().hex[:6]
    net = conn.network.create_network(name=f"heat-net-{suffix}")
    subnet = conn.network.create_subnet(network_id=net.id, name=f"heat-subnet-{suffix}",
                                        ip_version=4, cidr="10.250.0.0/24")
    router = conn.network.create_router(name=f"heat-router-{suffix}")
    public = conn.network.find_network(PUBLIC_NET)
    conn.network.update_router(router, external_gateway_info={"network_id": public.id})
    conn.network.add_interface_to_router(router, subnet_id=subnet.id)
    key = conn.compute.create_keypair(name=f"heat-key-{suffix}")
    return {"network": net.name, "subnet": subnet.name, "keypair": key.name}


def _tempest_conf(path: Path, cloud: Cloud, user: CloudUser, own: dict[str, str]) -> Path:
    admin = cloud.auth
    sections: dict[str, dict[str, Any]] = {
        "DEFAULT": {"log_file": str(path.parent / "tempest.log")},
        "identity": {"uri_v3": cloud.auth_url, "auth_version": "v3",
                     "region": cloud.region},
        "service_available": {"nova": True, "neutron": True, "glance": True,
                              "cinder": True, "swift": False, "zaqar": False},
        "heat_plugin": {
            "auth_url": cloud.auth_url, "auth_version": 3, "region": cloud.region,
            "username": user.name, "password": user.password,
            "project_name": user.project,
            "admin_username": admin["username"], "admin_password": admin["password"],
            "admin_project_name": admin["project_name"],
            "user_domain_name": "Default", "project_domain_name": "Default",
            "endpoint_type": "public", "catalog_type": "orchestration",
            "instance_type": "m1.tiny", "minimal_instance_type": "m1.tiny",
            "image_ref": IMAGE, "minimal_image_ref": IMAGE,
            "keypair_name": own["keypair"], "fixed_network_name": own["network"],
            "fixed_subnet_name": own["subnet"], "network_for_ssh": own["network"],
            "floating_network_name": PUBLIC_NET, "build_timeout": 180,
            "skip_scenario_tests": True, "convergence_engine_enabled": True,
            "volume_size": 1},
    }
    lines: list[str] = []
    for section, options in sections.items():
        lines.append(f"[{section}]")
        lines.extend(f"{k} = {v}" for k, v in options.items())
        lines.append("")
    path.write_text("\n".join(lines))
    return path


def _modules(python: str) -> list[str]:
    where = subprocess.run(
        [python, "-c", "import heat_tempest_plugin.tests.functional as f; print(f.__path__[0])"],
        check=True, capture_output=True, text=True).stdout.strip()
    return [str(Path(where) / f"{name}.py") for name in CLOUD_MODULES]


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--venv", required=True, help="the venv heat-tempest-plugin is in")
    parser.add_argument("--workdir", default=None)
    args, pytest_args = parser.parse_known_args(argv)
    python = str(Path(args.venv) / "bin" / "python")
    workdir = Path(args.workdir or tempfile.mkdtemp(prefix="kiln-heat-tempest-"))
    workdir.mkdir(parents=True, exist_ok=True)
    cloud, started = start()
    print(f"cloud {'started' if started else 'running'}: {cloud.auth_url}", flush=True)
    sdk = cloud.connect()
    kiln = start_kiln(workdir / "kiln", options=keystone_options(cloud, sdk))
    user = new_user(cloud, sdk, "tempest")
    services: list[Any] = []
    try:
        services = _register(sdk, cloud, kiln)
        _stack_user_role(sdk)
        own = _user_network(user)
        conf = _tempest_conf(workdir / "tempest.conf", cloud, user, own)
        env = {"TEMPEST_CONFIG_DIR": str(conf.parent), "TEMPEST_CONFIG": conf.name,
               "PATH": f"{Path(args.venv) / 'bin'}:/usr/bin:/bin"}
        cmd = [python, "-m", "pytest", "-p", "no:cacheprovider", "-q", "-rfEs",
               f"--junitxml={workdir / 'results.xml'}", *_modules(python),
               *pytest_args]
        print(f"kiln: {kiln.url} (log {kiln.stderr_path}); tempest.conf: {conf}", flush=True)
        return subprocess.run(cmd, env=env, cwd=workdir, check=False).returncode
    finally:
        _unregister(sdk, services)
        kiln.stop()
        _cleanup(sdk, user)
        remove_user(sdk, user)


def _cleanup(sdk: Any, user: CloudUser) -> None:
    """What the run left in the user's project (servers, routers, networks)."""
    from openstack import exceptions

    net = sdk.network
    for server in sdk.compute.servers(all_projects=True, project_id=user.project_id):
        sdk.compute.delete_server(server, ignore_missing=True)
    for router in net.routers(project_id=user.project_id):
        try:
            net.update_router(router, routes=[], external_gateway_info=None)
            for port in net.ports(device_id=router.id,
                                  device_owner="network:router_interface"):
                net.remove_interface_from_router(router, port_id=port.id)
            net.delete_router(router, ignore_missing=True)
        except exceptions.SDKException as exc:
            print(f"cleanup: router {router.id}: {exc}", file=sys.stderr)
    for network in net.networks(project_id=user.project_id):
        try:
            for port in net.ports(network_id=network.id):
                net.delete_port(port, ignore_missing=True)
            net.delete_network(network, ignore_missing=True)
        except exceptions.SDKException as exc:
            print(f"cleanup: network {network.id}: {exc}", file=sys.stderr)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
