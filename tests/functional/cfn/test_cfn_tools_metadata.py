"""heat-cfntools read metadata through Kiln's CFN API, signed with a template's own
AWS::IAM::AccessKey (SigV4 from boto 2): cfn-get-metadata prints it, cfn-init applies
its AWS::CloudFormation::Init section (files, commands), cfn-hup runs its hook when it
changes. The key's AccessPolicy decides which resources it may read.

The tools hard-code /var/lib/heat-cfntools, /etc/cfn and /var/log: these tests run as
root, one at a time on the machine (``cfntools.system_paths``), and remove what they
created."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support import cfntools
from tests.support.aws import cfn_client, issue_keypair
from tests.support.clients import heat_client, wait_for_stack_status
from tests.support.server import KilnProcess, start_kiln


def template(workdir: Path, greeting: str) -> dict[str, Any]:
    init = {"config": {
        "files": {str(workdir / "motd"): {"content": f"{greeting}\n", "mode": "000644",
                                          "owner": "root", "group": "root"}},
        "commands": {"01-touch": {"command": f"echo ran > {workdir / 'command-ran'}"}}}}
    return {
        "AWSTemplateFormatVersion": "2010-09-09",
        "Resources": {
            "Policy": {"Type": "OS::Heat::AccessPolicy",
                       "Properties": {"AllowedResources": ["Server"]}},
            "User": {"Type": "AWS::IAM::User",
                     "Properties": {"Policies": [{"Ref": "Policy"}]}},
            "Key": {"Type": "AWS::IAM::AccessKey", "Properties": {"UserName": {"Ref": "User"}}},
            "Server": {"Type": "OS::Heat::RandomString",
                       "Metadata": {"AWS::CloudFormation::Init": init, "greeting": greeting}},
            "Private": {"Type": "OS::Heat::RandomString", "Metadata": {"secret": "no"}}},
        "Outputs": {"access": {"Value": {"Ref": "Key"}},
                    "secret": {"Value": {"Fn::GetAtt": ["Key", "SecretAccessKey"]}}}}


@pytest.fixture(scope="module")
def kiln(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KilnProcess]:
    proc = start_kiln(tmp_path_factory.mktemp("tools"))
    yield proc
    assert proc.stop() == 0, proc.logs()


def configure_tools(paths: cfntools.SystemPaths, kiln: KilnProcess, access: str,
                    secret: str) -> Path:
    """What a server's boot script writes for the tools (as Heat's user data does)."""
    paths.write(Path("/var/lib/heat-cfntools/cfn-boto-cfg"),
                "[Boto]\ndebug = 0\nis_secure = 0\nhttps_validate_certificates = 1\n"
                "cfn_region_name = heat\ncfn_region_endpoint = 127.0.0.1\n")
    # the tools read only the port, from the very end of this URL (hence no /v1/)
    paths.write(Path("/var/lib/heat-cfntools/cfn-metadata-server"),
                f"http://127.0.0.1:{kiln.cfn_port}/\n")
    credentials = Path("/etc/cfn/cfn-credentials")
    paths.write(credentials, f"AWSAccessKeyId={access}\nAWSSecretKey={secret}\n")
    return credentials


def test_cfn_tools_read_apply_and_watch_metadata(kiln: KilnProcess, tmp_path: Path) -> None:
    heat = heat_client(kiln.endpoint("demo"))
    heat.stacks.create(stack_name="tools", template=template(tmp_path, "hello"))
    stack = wait_for_stack_status(heat, "tools")
    assert stack.stack_status == "CREATE_COMPLETE", stack.stack_status_reason
    out = {o["output_key"]: o["output_value"] for o in stack.outputs}
    access, secret = out["access"], out["secret"]
    assert len(access) == 20 and len(secret) == 40

    with cfntools.system_paths() as paths:
        credentials = configure_tools(paths, kiln, access, secret)
        got = cfntools.run("cfn-get-metadata", "-s", "tools", "-r", "Server",
                           "--credential-file", str(credentials))
        assert got.returncode == 0, cfntools.failure(got, "cfn-get-metadata")
        assert json.loads(got.stdout)["greeting"] == "hello"
        # the key's policy allows Server only
        denied = cfntools.run("cfn-get-metadata", "-s", "tools", "-r", "Private",
                              "--credential-file", str(credentials))
        assert denied.returncode != 0 and "secret" not in denied.stdout
        assert "AccessDenied" in denied.stderr

        init = cfntools.run("cfn-init", "-s", "tools", "-r", "Server", "--access-key", access,
                            "--secret-key", secret)
        assert init.returncode == 0, cfntools.failure(init, "cfn-init")
        assert (tmp_path / "motd").read_text() == "hello\n"
        assert (tmp_path / "command-ran").read_text() == "ran\n"

        hook_log = tmp_path / "hook.log"
        paths.write(Path("/etc/cfn/cfn-hup.conf"),
                    f"[main]\nstack=tools\ncredential-file={credentials}\nregion=heat\n")
        paths.write(Path("/etc/cfn/hooks.d/kiln.conf"),
                    "[reload]\ntriggers=post.update\npath=Resources.Server.Metadata\n"
                    f"action=echo changed >> {hook_log}\nrunas=root\n")
        # cfn-init has just cached what it applied: nothing has changed since
        hup = cfntools.run("cfn-hup", "--no-daemon")
        assert hup.returncode == 0, cfntools.failure(hup, "cfn-hup")
        assert not hook_log.exists()

        heat.stacks.update("tools", template=template(tmp_path, "bonjour"))
        updated = wait_for_stack_status(heat, "tools")
        assert updated.stack_status == "UPDATE_COMPLETE", updated.stack_status_reason
        hup = cfntools.run("cfn-hup", "--no-daemon")
        assert hup.returncode == 0, cfntools.failure(hup, "cfn-hup")
        assert hook_log.read_text() == "changed\n"
        hup = cfntools.run("cfn-hup", "--no-daemon")   # once per change
        assert hook_log.read_text() == "changed\n"
    heat.stacks.delete("tools")


def test_describe_stack_resource_metadata_follows_changes(kiln: KilnProcess,
                                                          tmp_path: Path) -> None:
    """What the agents poll: DescribeStackResource's Metadata, the moment it changes."""
    cfn = cfn_client(kiln, issue_keypair(kiln, "demo"))
    cfn.create_stack(StackName="meta", TemplateBody=json.dumps(template(tmp_path, "one")))
    heat = heat_client(kiln.endpoint("demo"))
    assert wait_for_stack_status(heat, "meta").stack_status == "CREATE_COMPLETE"
    first = cfn.describe_stack_resource(StackName="meta", LogicalResourceId="Server")
    assert json.loads(first["StackResourceDetail"]["Metadata"])["greeting"] == "one"
    cfn.update_stack(StackName="meta", TemplateBody=json.dumps(template(tmp_path, "two")))
    assert wait_for_stack_status(heat, "meta").stack_status == "UPDATE_COMPLETE"
    second = cfn.describe_stack_resource(StackName="meta", LogicalResourceId="Server")
    assert json.loads(second["StackResourceDetail"]["Metadata"])["greeting"] == "two"
    cfn.delete_stack(StackName="meta")
