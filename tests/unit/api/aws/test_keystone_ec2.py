"""What Kiln sends Keystone's ec2tokens for a signed request (the body Heat's ec2token
middleware builds, plus Kiln's variants), checked against keystoneclient's own signer:
the signer Keystone runs must reproduce the client's signature from that body."""

from __future__ import annotations

import hashlib
from urllib.parse import parse_qsl, unquote_plus, urlsplit

from botocore.auth import SigV2Auth, SigV4Auth, SigV4QueryAuth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials
from keystoneclient.contrib.ec2.utils import Ec2Signer

from kiln import ec2sign
from kiln.api.aws.keystone import _variants, ec2_credentials
from kiln.api.aws.request import SignedRequest, parse_claim

CREDS = Credentials("AKID", "the-secret")
HOST = "127.0.0.1:8000"


def _received(request: AWSRequest) -> SignedRequest:
    prepared = request.prepare()
    url = urlsplit(prepared.url)
    query = [tuple(p.split("=", 1)) for p in url.query.split("&") if p]
    pairs = [(unquote_plus(k), unquote_plus(v)) for k, v in query]
    body = prepared.body or b""
    if isinstance(body, str):
        body = body.encode()
    form = [tuple(map(unquote_plus, p.split("=", 1))) for p in body.decode().split("&")
            if "=" in p] if body else []
    headers = {k.lower(): v for k, v in prepared.headers.items()}
    headers["host"] = HOST
    return SignedRequest(method=prepared.method, host=HOST, raw_path=url.path, query=pairs,
                         headers=headers, body=body, form=form)


def _keystone_accepts(received: SignedRequest, presigned: bool = False) -> bool:
    claim = parse_claim(received)
    for path, body_hash in _variants(received, claim, presigned):
        creds = ec2_credentials(received, claim, path, body_hash)["ec2Credentials"]
        if Ec2Signer("the-secret").generate(dict(creds)) == creds["signature"]:
            return True
    return False


def test_sigv4_form_post_as_boto3_sends_it() -> None:
    request = AWSRequest(method="POST", url=f"http://{HOST}/v1/",
                         data="Action=ListStacks&Version=2010-05-15",
                         headers={"Content-Type": "application/x-www-form-urlencoded"})
    SigV4Auth(CREDS, "cloudformation", "RegionOne").add_auth(request)
    received = _received(request)
    body = ec2_credentials(received, parse_claim(received), "/v1/",
                           hashlib.sha256(received.body).hexdigest())["ec2Credentials"]
    # Keystone's signer reads these two headers by their exact names
    assert "Authorization" in body["headers"] and "X-Amz-Date" in body["headers"]
    assert _keystone_accepts(received)


def test_sigv4_in_the_query_leaves_its_signature_out_of_the_params() -> None:
    request = AWSRequest(method="GET", url=f"http://{HOST}/v1/",
                         params={"Action": "ListStacks", "Version": "2010-05-15"})
    SigV4QueryAuth(CREDS, "cloudformation", "RegionOne", expires=300).add_auth(request)
    received = _received(request)
    claim = parse_claim(received)
    body = ec2_credentials(received, claim, "/v1/", "x")["ec2Credentials"]
    assert "X-Amz-Signature" not in body["params"]
    assert _keystone_accepts(received)


def test_sigv2_query_and_a_presigned_url_with_a_quoted_path() -> None:
    request = AWSRequest(method="GET", url=f"http://{HOST}/v1/",
                         params={"Action": "DescribeStackResource", "StackName": "s"})
    SigV2Auth(CREDS).add_auth(request)
    assert _keystone_accepts(_received(request))

    url = ec2sign.presign(f"http://{HOST}/v1/signal/arn%3Aopenstack%3Aheat%3A%3Ap%3Astacks"
                          "/s/id/resources/r", verb="POST", access_key="AKID",
                          secret="the-secret", timestamp=False)
    parts = urlsplit(url)
    received = SignedRequest(method="POST", host=HOST, raw_path=parts.path,
                             query=parse_qsl(parts.query), headers={"host": HOST})
    assert "Timestamp" not in received.params
    assert _keystone_accepts(received, presigned=True)


def test_a_wrong_secret_is_not_reproduced() -> None:
    request = AWSRequest(method="GET", url=f"http://{HOST}/v1/",
                         params={"Action": "ListStacks"})
    SigV2Auth(Credentials("AKID", "another-secret")).add_auth(request)
    assert not _keystone_accepts(_received(request))
