"""The AWS side of a real Kiln: EC2 keypairs issued with ``kiln ec2-credentials create``
(the operator's way, in the no-auth setup) and boto3 clients signing with them."""

from __future__ import annotations

import json
import subprocess
from dataclasses import dataclass
from typing import Any

from tests.support.server import KilnProcess, clean_env, kiln_command


@dataclass(frozen=True)
class Keypair:
    access: str
    secret: str
    project_id: str


def issue_keypair(kiln: KilnProcess, project: str = "demo") -> Keypair:
    """A keypair for ``project`` issued by the ``kiln`` CLI on the server's database."""
    result = subprocess.run(
        [*kiln_command(), "ec2-credentials", "create", "--config-file", str(kiln.config_file),
         "--project", project], capture_output=True, text=True, env=clean_env(),
        cwd=kiln.workdir, timeout=60, check=False)
    if result.returncode != 0:
        raise AssertionError(f"kiln ec2-credentials create failed:\n{result.stderr}")
    made = json.loads(result.stdout)
    return Keypair(made["access"], made["secret"], made["project_id"])


def cfn_client(kiln: KilnProcess, keypair: Keypair, *, secret: str | None = None) -> Any:
    """boto3's CloudFormation client on the server's CFN endpoint, as a user sets it up."""
    import boto3
    from botocore.config import Config

    return boto3.client(
        "cloudformation", endpoint_url=kiln.cfn_url, region_name="RegionOne",
        aws_access_key_id=keypair.access,
        aws_secret_access_key=secret if secret is not None else keypair.secret,
        config=Config(retries={"max_attempts": 1}))
