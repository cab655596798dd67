"""Drift on the real cloud: a stack of a network, subnet, port, security group and
server is changed behind Kiln's back with the openstack CLI (the network renamed, the
port deleted, a rule added to the group, the server's metadata changed); boto3's
DetectStackDrift and ``kiln stack drift`` report each difference property by property,
and an update with Heat's ``converge`` flag (python-heatclient's PATCH) puts them back,
after which a detection finds the stack in sync again."""

from __future__ import annotations

import json
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.cloud.helpers import delete_and_wait, find, physical_ids, settled
from tests.functional.cfn.test_cfn_drift import detected
from tests.support.aws import Keypair, cfn_client, issue_keypair
from tests.support.cloud import Cloud
from tests.support.server import KilnProcess, clean_env, kiln_command

DEADLINE = 180.0


def _template(sfx: str) -> dict[str, Any]:
    return {
        "heat_template_version": "2018-08-31",
        "resources": {
            "net": {"type": "OS::Neutron::Net", "properties": {"name": f"drift-net-{sfx}"}},
            "subnet": {"type": "OS::Neutron::Subnet", "properties": {
                "network": {"get_resource": "net"}, "cidr": "10.77.3.0/24",
                "name": f"drift-subnet-{sfx}"}},
            "port": {"type": "OS::Neutron::Port", "properties": {
                "network": {"get_resource": "net"}, "name": f"drift-port-{sfx}",
                "fixed_ips": [{"subnet": {"get_resource": "subnet"}}]}},
            "sg": {"type": "OS::Neutron::SecurityGroup", "properties": {
                "name": f"drift-sg-{sfx}", "description": "ssh only",
                "rules": [{"protocol": "tcp", "port_range_min": 22, "port_range_max": 22,
                           "remote_ip_prefix": "0.0.0.0/0"}]}},
            "server": {"type": "OS::Nova::Server", "depends_on": ["subnet"], "properties": {
                "name": f"drift-server-{sfx}", "flavor": "m1.tiny", "image": "cirros-kiln",
                "metadata": {"role": "web"},
                "networks": [{"network": {"get_resource": "net"}}]}},
        },
    }


@pytest.fixture(scope="module")
def keypair(cloud_kiln: KilnProcess) -> Keypair:
    return issue_keypair(cloud_kiln, "demo")


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
    name = f"drift-{sfx}"
    cloud_heat.stacks.create(stack_name=name, template=_template(sfx))
    created = settled(cloud_heat, name, "CREATE_COMPLETE", timeout=DEADLINE)
    yield name, sfx
    assert delete_and_wait(cloud_heat, created.id) == "DELETE_COMPLETE"


def _detect(cfn: Any, name: str) -> dict[str, Any]:
    return detected(cfn, name, DEADLINE)


def test_drift_found_property_by_property_and_converged(
        cloud_kiln: KilnProcess, cloud_heat: Any, keypair: Keypair, openstack: Any,
        sdk: Any, stack: tuple[str, str], tmp_path: Path) -> None:
    name, sfx = stack
    cfn = cfn_client(cloud_kiln, keypair)
    first = _detect(cfn, name)
    assert (first["DetectionStatus"], first["StackDriftStatus"]) == (
        "DETECTION_COMPLETE", "IN_SYNC"), first
    ids = physical_ids(cloud_heat, name)

    # behind Kiln's back
    openstack("network", "set", "--name", f"renamed-{sfx}", ids["net"])
    openstack("port", "delete", ids["port"])
    openstack("security", "group", "rule", "create", "--protocol", "tcp",
              "--dst-port", "8080", "--remote-ip", "10.0.0.0/8", ids["sg"])
    openstack("server", "set", "--property", "role=db", ids["server"])

    status = _detect(cfn, name)
    assert status["StackDriftStatus"] == "DRIFTED", status
    assert status["DriftedStackResourceCount"] == 4
    drifts = {d["LogicalResourceId"]: d for d in
              cfn.describe_stack_resource_drifts(StackName=name)["StackResourceDrifts"]}
    assert drifts["subnet"]["StackResourceDriftStatus"] == "IN_SYNC"
    net = drifts["net"]
    assert net["StackResourceDriftStatus"] == "MODIFIED"
    assert net["PropertyDifferences"] == [{
        "PropertyPath": "/name", "ExpectedValue": f"drift-net-{sfx}",
        "ActualValue": f"renamed-{sfx}", "DifferenceType": "NOT_EQUAL"}]
    assert json.loads(net["ExpectedProperties"]) == {"name": f"drift-net-{sfx}"}
    assert json.loads(net["ActualProperties"]) == {"name": f"renamed-{sfx}"}
    assert drifts["port"]["StackResourceDriftStatus"] == "DELETED"
    (added,) = drifts["sg"]["PropertyDifferences"]
    assert added["DifferenceType"] == "ADD" and added["PropertyPath"].startswith("/rules/")
    assert json.loads(added["ActualValue"])["port_range_min"] == 8080
    assert added["ExpectedValue"] == "null"
    assert drifts["server"]["PropertyDifferences"] == [{
        "PropertyPath": "/metadata/role", "ExpectedValue": "web", "ActualValue": "db",
        "DifferenceType": "NOT_EQUAL"}]
    shown = cfn.describe_stacks(StackName=name)["Stacks"][0]["DriftInformation"]
    assert shown["StackDriftStatus"] == "DRIFTED"

    # the native API through `kiln stack drift`
    env = {**clean_env(), "OS_ENDPOINT": cloud_kiln.endpoint("demo"), "NO_COLOR": "1"}
    cli = subprocess.run([*kiln_command(), "stack", "drift", name, "--exit-code"],
                         capture_output=True, text=True, env=env, cwd=tmp_path,
                         timeout=DEADLINE, check=False)
    assert cli.returncode == 2, cli.stderr
    assert f"Stack {name}: DRIFTED (4 resource(s) drifted)" in cli.stdout
    assert f"renamed-{sfx}" in cli.stdout and "DELETED" in cli.stdout

    # converge: the template wins again
    cloud_heat.stacks.update(name, existing=True, converge=True)
    settled(cloud_heat, name, "UPDATE_COMPLETE", timeout=DEADLINE)
    after = physical_ids(cloud_heat, name)
    assert sdk.network.get_network(ids["net"]).name == f"drift-net-{sfx}"
    assert after["port"] != ids["port"]
    assert find(sdk.network.find_port, after["port"]) is not None
    rules = sdk.network.get_security_group(ids["sg"]).security_group_rules
    assert not [r for r in rules if r.get("port_range_min") == 8080]
    assert sdk.compute.get_server_metadata(ids["server"]).metadata["role"] == "web"
    again = _detect(cfn, name)
    assert again["StackDriftStatus"] == "IN_SYNC", cfn.describe_stack_resource_drifts(
        StackName=name)
