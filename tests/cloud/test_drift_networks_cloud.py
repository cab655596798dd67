"""A server's ``networks`` and a port's ``fixed_ips`` drifting on the real cloud: an
interface attached to the server and the port's address changed with the openstack CLI,
behind Kiln's back. boto3's DetectStackDrift reports each as its own difference, an
update with Heat's ``converge`` flag (python-heatclient's PATCH) detaches the extra
interface and gives the port its address back, and a new detection is in sync."""

from __future__ import annotations

import json
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.cloud.helpers import delete_and_wait, physical_ids, settled
from tests.functional.cfn.test_cfn_drift import detected
from tests.support.aws import Keypair, cfn_client, issue_keypair
from tests.support.cloud import Cloud
from tests.support.server import KilnProcess, clean_env

DEADLINE = 240.0


def _template(sfx: str) -> dict[str, Any]:
    return {
        "heat_template_version": "2018-08-31",
        "resources": {
            "net": {"type": "OS::Neutron::Net", "properties": {"name": f"dn-net-{sfx}"}},
            "subnet": {"type": "OS::Neutron::Subnet", "properties": {
                "network": {"get_resource": "net"}, "cidr": "10.77.5.0/24"}},
            "port": {"type": "OS::Neutron::Port", "properties": {
                "network": {"get_resource": "net"},
                "fixed_ips": [{"subnet": {"get_resource": "subnet"},
                               "ip_address": "10.77.5.10"}]}},
            "server": {"type": "OS::Nova::Server", "depends_on": ["subnet"], "properties": {
                "flavor": "m1.tiny", "image": "cirros-kiln",
                "networks": [{"network": {"get_resource": "net"}}]}},
        },
    }


@pytest.fixture
def openstack(cloud: Cloud, tmp_path: Path) -> Any:
    """The openstack CLI as the cloud's admin: what changes things behind Kiln's back."""
    clouds = cloud.clouds_yaml(tmp_path / "clouds.yaml")
    env = {**clean_env(), "OS_CLIENT_CONFIG_FILE": str(clouds), "OS_CLOUD": "kiln-test"}

    def run(*args: str) -> str:
        done = subprocess.run(["/work/venv/bin/openstack", *args], capture_output=True,
                              text=True, env=env, timeout=120, check=False)
        assert done.returncode == 0, done.stderr
        return done.stdout
    return run


@pytest.fixture
def stack(cloud_heat: Any) -> Iterator[tuple[str, str]]:
    sfx = uuid.uuid4().hex[:6]
    name = f"drift-nets-{sfx}"
    cloud_heat.stacks.create(stack_name=name, template=_template(sfx))
    created = settled(cloud_heat, name, "CREATE_COMPLETE", timeout=DEADLINE)
    yield name, sfx
    assert delete_and_wait(cloud_heat, created.id, timeout=DEADLINE) == "DELETE_COMPLETE"


def test_networks_and_fixed_ips_drift_and_converge(
        cloud_kiln: KilnProcess, cloud_heat: Any, openstack: Any, sdk: Any,
        stack: tuple[str, str]) -> None:
    name, _ = stack
    keypair: Keypair = issue_keypair(cloud_kiln, "demo")
    cfn = cfn_client(cloud_kiln, keypair)
    first = detected(cfn, name, DEADLINE)
    assert first["StackDriftStatus"] == "IN_SYNC", cfn.describe_stack_resource_drifts(
        StackName=name)
    ids = physical_ids(cloud_heat, name)

    def interfaces() -> list[dict[str, Any]]:
        listed = sdk.compute.get(f"/servers/{ids['server']}/os-interface").json()
        return list(listed["interfaceAttachments"])

    (own,) = interfaces()
    # behind Kiln's back: a second interface on the server's network, a new address
    openstack("server", "add", "network", ids["server"], ids["net"])
    openstack("port", "set", "--no-fixed-ip", "--fixed-ip",
              f"subnet={ids['subnet']},ip-address=10.77.5.20", ids["port"])
    extra = next(i for i in interfaces() if i["port_id"] != own["port_id"])

    status = detected(cfn, name, DEADLINE)
    assert status["StackDriftStatus"] == "DRIFTED", status
    assert status["DriftedStackResourceCount"] == 2
    drifts = {d["LogicalResourceId"]: d for d in
              cfn.describe_stack_resource_drifts(StackName=name)["StackResourceDrifts"]}
    (added,) = drifts["server"]["PropertyDifferences"]
    assert (added["PropertyPath"], added["DifferenceType"]) == ("/networks/1", "ADD")
    assert json.loads(added["ActualValue"]) == {
        "network": ids["net"], "port": extra["port_id"],
        "fixed_ip": extra["fixed_ips"][0]["ip_address"]}
    port = {(d["DifferenceType"], d["PropertyPath"]): d
            for d in drifts["port"]["PropertyDifferences"]}
    assert set(port) == {("REMOVE", "/fixed_ips/0"), ("ADD", "/fixed_ips/0")}
    assert json.loads(port["REMOVE", "/fixed_ips/0"]["ExpectedValue"]) == {
        "subnet": ids["subnet"], "ip_address": "10.77.5.10"}
    assert json.loads(port["ADD", "/fixed_ips/0"]["ActualValue"]) == {
        "subnet": ids["subnet"], "ip_address": "10.77.5.20"}

    # converge: the template wins again, in place
    cloud_heat.stacks.update(name, existing=True, converge=True)
    settled(cloud_heat, name, "UPDATE_COMPLETE", timeout=DEADLINE)
    assert physical_ids(cloud_heat, name) == ids
    assert [i["port_id"] for i in interfaces()] == [own["port_id"]]
    assert [ip["ip_address"] for ip in sdk.network.get_port(ids["port"]).fixed_ips] == \
        ["10.77.5.10"]
    again = detected(cfn, name, DEADLINE)
    assert again["StackDriftStatus"] == "IN_SYNC", cfn.describe_stack_resource_drifts(
        StackName=name)
