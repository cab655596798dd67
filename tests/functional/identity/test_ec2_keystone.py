"""EC2 signatures in keystone mode: Keystone's ``/v3/ec2tokens`` decides, as for Heat.

A user's own Keystone EC2 credential (``openstack ec2 credentials create``) signs requests
to Kiln's CFN and CloudWatch APIs with boto3 (SigV4) and with a SigV2 query (what
os-collect-config's cfn collector and pre-signed URLs use); Kiln never sees the secret,
the request acts as that user in that user's project, and a forged or unknown signature
gets AWS's error body.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any
from xml.etree import ElementTree

import httpx
import pytest
from botocore.auth import SigV2Auth, SigV4QueryAuth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials
from botocore.exceptions import ClientError

from tests.functional.identity.conftest import token_client
from tests.support.keystone import Account, KeystoneProcess
from tests.support.server import KilnProcess

TEMPLATE = ('{"AWSTemplateFormatVersion": "2010-09-09", "Resources": '
            '{"R": {"Type": "OS::Heat::RandomString"}}}')


@dataclass(frozen=True)
class Ec2:
    access: str
    secret: str


def ec2_credential(keystone: KeystoneProcess, account: Account) -> Ec2:
    """A Keystone EC2 credential of ``account`` for its project (the OS-EC2 API, as
    ``openstack ec2 credentials create`` makes one)."""
    made = keystone._call("POST", f"/users/{account.user_id}/credentials/OS-EC2",
                          json={"tenant_id": account.project_id})["credential"]
    return Ec2(str(made["access"]), str(made["secret"]))


def boto(kiln: KilnProcess, service: str, ec2: Ec2, secret: str | None = None) -> Any:
    import boto3
    from botocore.config import Config

    url = kiln.cfn_url if service == "cloudformation" else kiln.cloudwatch_url
    return boto3.client(service, endpoint_url=url, region_name="RegionOne",
                        aws_access_key_id=ec2.access,
                        aws_secret_access_key=secret if secret is not None else ec2.secret,
                        config=Config(retries={"max_attempts": 1}))


def sigv2_get(kiln: KilnProcess, ec2: Ec2, params: dict[str, str], *,
              secret: str | None = None) -> httpx.Response:
    """A SigV2-signed GET of the CFN API (botocore's signer, the query as sent)."""
    request = AWSRequest(method="GET", url=kiln.cfn_url, params=params)
    SigV2Auth(Credentials(ec2.access, secret or ec2.secret)).add_auth(request)
    prepared = request.prepare()
    return httpx.get(prepared.url, timeout=30.0)


def code(reply: httpx.Response) -> str:
    return str(ElementTree.fromstring(reply.content).findtext("Error/Code"))


@pytest.fixture(scope="module")
def ec2(keystone: KeystoneProcess, member: Account) -> Ec2:
    return ec2_credential(keystone, member)


@pytest.fixture(scope="module")
def created(ks_kiln: KilnProcess, ec2: Ec2) -> Iterator[str]:
    cfn = boto(ks_kiln, "cloudformation", ec2)
    cfn.create_stack(StackName="ec2ks", TemplateBody=TEMPLATE)
    yield "ec2ks"


def test_sigv4_from_boto3_acts_as_the_credentials_user(
        ks_kiln: KilnProcess, keystone: KeystoneProcess, member: Account, ec2: Ec2,
        created: str) -> None:
    cfn = boto(ks_kiln, "cloudformation", ec2)
    names = [s["StackName"] for s in cfn.list_stacks()["StackSummaries"]]
    assert created in names
    # the stack is the member's: its own token sees it in its project, with its name
    with token_client(ks_kiln, member) as http:
        shown = http.get(f"/v1/{member.project_id}/stacks/{created}",
                         follow_redirects=True).json()["stack"]
    assert shown["stack_owner"] == member.username
    assert ec2tokens_calls(keystone) > 0


def ec2tokens_calls(keystone: KeystoneProcess) -> int:
    keystone.validations()  # waits until every earlier request's log line is written
    return keystone.access_log.read_text().count('"POST /v3/ec2tokens')


def test_sigv2_query_is_checked_by_keystone(ks_kiln: KilnProcess, keystone: KeystoneProcess,
                                            ec2: Ec2, created: str) -> None:
    before = ec2tokens_calls(keystone)
    request = AWSRequest(method="GET", url=ks_kiln.cfn_url,
                         params={"Action": "DescribeStacks", "StackName": created})
    SigV2Auth(Credentials(ec2.access, ec2.secret)).add_auth(request)
    url = request.prepare().url
    for _ in range(3):   # the same signed request, as a pre-signed URL polled
        reply = httpx.get(url, timeout=30.0)
        assert reply.status_code == 200, reply.text
        assert created in reply.text
    assert ec2tokens_calls(keystone) - before == 1


def test_sigv4_in_the_query_is_checked_by_keystone(ks_kiln: KilnProcess, ec2: Ec2,
                                                   created: str) -> None:
    request = AWSRequest(method="GET", url=ks_kiln.cfn_url,
                         params={"Action": "DescribeStacks", "StackName": created,
                                 "Version": "2010-05-15"})
    SigV4QueryAuth(Credentials(ec2.access, ec2.secret), "cloudformation", "RegionOne",
                   expires=300).add_auth(request)
    reply = httpx.get(request.prepare().url, timeout=30.0)
    assert reply.status_code == 200, reply.text
    assert created in reply.text


def test_forged_signatures_are_refused_with_aws_errors(ks_kiln: KilnProcess, ec2: Ec2,
                                                       created: str) -> None:
    forged = boto(ks_kiln, "cloudformation", ec2, secret="not-the-secret")
    with pytest.raises(ClientError) as caught:
        forged.describe_stacks(StackName=created)
    error = caught.value.response
    assert error["ResponseMetadata"]["HTTPStatusCode"] == 403
    assert error["Error"]["Code"] == "AccessDenied"

    reply = sigv2_get(ks_kiln, ec2, {"Action": "DescribeStacks"}, secret="forged")
    assert (reply.status_code, code(reply)) == (403, "AccessDenied")

    unknown = Ec2("0" * 32, ec2.secret)
    reply = sigv2_get(ks_kiln, unknown, {"Action": "DescribeStacks"})
    assert (reply.status_code, code(reply)) == (403, "InvalidClientTokenId")
    # the secret is never echoed or logged
    assert ec2.secret not in ks_kiln.logs()


def test_another_users_credential_sees_only_its_own_project(
        ks_kiln: KilnProcess, keystone: KeystoneProcess, other: Account,
        created: str) -> None:
    theirs = boto(ks_kiln, "cloudformation", ec2_credential(keystone, other))
    assert created not in [s["StackName"]
                           for s in theirs.list_stacks()["StackSummaries"]]
    with pytest.raises(ClientError) as caught:
        theirs.describe_stacks(StackName=created)
    assert caught.value.response["ResponseMetadata"]["HTTPStatusCode"] == 400


def test_cloudwatch_signed_with_a_keystone_credential(ks_kiln: KilnProcess,
                                                      ec2: Ec2) -> None:
    watch = boto(ks_kiln, "cloudwatch", ec2)
    watch.put_metric_data(Namespace="ks/test", MetricData=[
        {"MetricName": "Load", "Value": 3.0, "Unit": "Count"}])
    names = [m["MetricName"] for m in watch.list_metrics(Namespace="ks/test")["Metrics"]]
    assert names == ["Load"]
    forged = boto(ks_kiln, "cloudwatch", ec2, secret="forged")
    with pytest.raises(ClientError) as caught:
        forged.list_metrics(Namespace="ks/test")
    assert caught.value.response["Error"]["Code"] == "AccessDenied"


def test_heats_cloudformation_rules_apply_to_the_credentials_roles(
        ks_kiln: KilnProcess, keystone: KeystoneProcess) -> None:
    reader = keystone.account(("reader",), prefix="reader")
    cfn = boto(ks_kiln, "cloudformation", ec2_credential(keystone, reader))
    assert cfn.list_stacks()["StackSummaries"] == []
    with pytest.raises(ClientError) as caught:
        cfn.create_stack(StackName="by-a-reader", TemplateBody=TEMPLATE)
    error = caught.value.response["Error"]
    assert (error["Code"], error["Message"]) == (
        "AccessDenied", "User is not authorized to perform action:"
                        "Action CreateStack not allowed for user")


def test_keystone_down_is_service_unavailable(start_keystone_factory: Any,
                                              start_kiln_factory: Any) -> None:
    keystone = start_keystone_factory()
    kiln = start_kiln_factory(options=keystone.kiln_options())
    ec2 = ec2_credential(keystone, keystone.account())
    assert sigv2_get(kiln, ec2, {"Action": "ListStacks"}).status_code == 200
    keystone.stop()
    reply = sigv2_get(kiln, ec2, {"Action": "ListStacks", "Version": "2010-05-15"})
    assert (reply.status_code, code(reply)) == (503, "ServiceUnavailable")
