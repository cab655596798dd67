"""EC2 signatures produced by botocore's own signers (the code boto3 and the agents'
libraries sign with) are accepted; a changed byte, a wrong secret, an unknown key, an
old or future date are each refused with AWS's error."""

from __future__ import annotations

import datetime as dt
import time
from urllib.parse import parse_qsl, urlsplit

import pytest
from botocore.auth import SigV2Auth, SigV4Auth, SigV4QueryAuth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials

from kiln.api.aws import errors
from kiln.api.aws.credentials import Credential, Ec2Identity, SecretAuthenticator
from kiln.api.aws.request import SignedRequest
from kiln.api.aws.sigv2 import sign_url_params

ACCESS, SECRET = "AKKILNTEST", "s3cr3t/with+chars="
IDENTITY = Ec2Identity(access_key=ACCESS, project_id="demo", user_id="u1")
HOST = "127.0.0.1:8000"
FORM = "application/x-www-form-urlencoded; charset=utf-8"


class Keys:
    def __init__(self) -> None:
        self.known = {ACCESS: Credential(SECRET, IDENTITY)}

    async def lookup(self, access_key: str) -> Credential | None:
        return self.known.get(access_key)


def received(req: AWSRequest, *, host: str = HOST) -> SignedRequest:
    """What a server receives for the signed botocore request."""
    prepared = req.prepare()
    url = urlsplit(prepared.url)
    body = prepared.body or b""
    if isinstance(body, str):
        body = body.encode()
    headers = {k.lower(): v if isinstance(v, str) else v.decode()
               for k, v in prepared.headers.items()}
    headers["host"] = host  # added by the HTTP layer, as the client's URL names it
    form = parse_qsl(body.decode(), keep_blank_values=True) if headers.get(
        "content-type", "").startswith("application/x-www-form-urlencoded") else []
    return SignedRequest(method=prepared.method, host=host, raw_path=url.path or "/",
                         query=parse_qsl(url.query, keep_blank_values=True),
                         headers=headers, body=body, form=form)


def auth(clock_offset: float = 0.0) -> SecretAuthenticator:
    return SecretAuthenticator(Keys(), clock=lambda: time.time() + clock_offset)


def sigv4_form_post(secret: str = SECRET, body: str = "Action=ListStacks&Version=2010-05-15"
                    ) -> AWSRequest:
    req = AWSRequest(method="POST", url=f"http://{HOST}/v1/", data=body,
                     headers={"Content-Type": FORM})
    SigV4Auth(Credentials(ACCESS, secret), "cloudformation", "RegionOne").add_auth(req)
    return req


def sigv2_get(params: dict[str, str], secret: str = SECRET) -> AWSRequest:
    req = AWSRequest(method="GET", url=f"http://{HOST}/v1/", params=params)
    SigV2Auth(Credentials(ACCESS, secret)).add_auth(req)
    return req


async def test_sigv4_header_form_post_as_boto3_sends_it() -> None:
    assert await auth().authenticate(received(sigv4_form_post())) == IDENTITY


async def test_sigv4_changed_body_is_refused() -> None:
    signed = received(sigv4_form_post())
    tampered = SignedRequest(**{**signed.__dict__,
                                "body": signed.body.replace(b"ListStacks", b"DeleteStack"),
                                "form": [("Action", "DeleteStack")]})
    with pytest.raises(errors.SignatureDoesNotMatch):
        await auth().authenticate(tampered)


async def test_sigv4_wrong_secret_is_refused() -> None:
    with pytest.raises(errors.SignatureDoesNotMatch) as caught:
        await auth().authenticate(received(sigv4_form_post(secret="guess")))
    assert caught.value.status == 403


async def test_sigv4_other_host_is_refused() -> None:
    with pytest.raises(errors.SignatureDoesNotMatch):
        await auth().authenticate(received(sigv4_form_post(), host="127.0.0.1:9999"))


async def test_unknown_access_key_is_refused() -> None:
    req = AWSRequest(method="POST", url=f"http://{HOST}/v1/", data="Action=ListStacks",
                     headers={"Content-Type": FORM})
    SigV4Auth(Credentials("NOBODY", SECRET), "cloudformation", "RegionOne").add_auth(req)
    with pytest.raises(errors.InvalidClientTokenId):
        await auth().authenticate(received(req))


@pytest.mark.parametrize("offset", [-1000.0, 1000.0])
async def test_sigv4_outside_the_window_is_expired(offset: float) -> None:
    with pytest.raises(errors.RequestExpired) as caught:
        await auth(clock_offset=offset).authenticate(received(sigv4_form_post()))
    assert caught.value.code == "RequestExpired"


async def test_sigv4_just_inside_the_window_passes() -> None:
    assert await auth(clock_offset=800).authenticate(received(sigv4_form_post())) == IDENTITY


async def test_sigv4_presigned_query_url() -> None:
    req = AWSRequest(method="GET", url=f"http://{HOST}/v1/",
                     params={"Action": "DescribeStackResource", "StackName": "s 1/x"})
    SigV4QueryAuth(Credentials(ACCESS, SECRET), "cloudformation", "RegionOne",
                   expires=60).add_auth(req)
    assert await auth().authenticate(received(req)) == IDENTITY
    with pytest.raises(errors.RequestExpired):
        await auth(clock_offset=120).authenticate(received(req))


async def test_sigv2_query_get_as_the_cfn_collector_sends_it() -> None:
    req = sigv2_get({"Action": "DescribeStackResource", "StackName": "st",
                     "LogicalResourceId": "server"})
    assert await auth().authenticate(received(req)) == IDENTITY


async def test_sigv2_changed_parameter_is_refused() -> None:
    signed = received(sigv2_get({"Action": "DescribeStackResource", "StackName": "st"}))
    query = [(k, "other" if k == "StackName" else v) for k, v in signed.query]
    with pytest.raises(errors.SignatureDoesNotMatch):
        await auth().authenticate(SignedRequest(**{**signed.__dict__, "query": query}))


async def test_sigv2_timestamp_is_windowed_unless_presigned() -> None:
    req = received(sigv2_get({"Action": "DescribeStackResource"}))
    with pytest.raises(errors.RequestExpired):
        await auth(clock_offset=3600).authenticate(req)
    # a pre-signed signal URL is valid as long as its keypair exists
    assert await auth(clock_offset=86400).authenticate(req, presigned=True) == IDENTITY


async def test_sigv2_expires_parameter() -> None:
    soon = (dt.datetime.now(dt.UTC) + dt.timedelta(seconds=60)).strftime("%Y-%m-%dT%H:%M:%SZ")
    req = AWSRequest(method="GET", url=f"http://{HOST}/v1/",
                     params={"Action": "ListStacks", "Expires": soon})
    SigV2Auth(Credentials(ACCESS, SECRET)).add_auth(req)
    signed = received(req)
    # botocore adds a Timestamp as well; drop it and re-sign to test Expires alone
    assert await auth().authenticate(signed) == IDENTITY
    with pytest.raises(errors.RequestExpired):
        await auth(clock_offset=120).authenticate(signed, presigned=True)


async def test_presigned_url_signed_over_the_decoded_path_and_host_without_port() -> None:
    """Heat's (and keystoneclient's) way: the ARN path decoded, the host as configured."""
    path = "/v1/waitcondition/arn:openstack:heat::demo:stacks/s/1/resources/h"
    params = {"SignatureMethod": "HmacSHA256", "SignatureVersion": "2",
              "AWSAccessKeyId": ACCESS,
              "Timestamp": dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")}
    params["Signature"] = sign_url_params(SECRET, verb="PUT", host="127.0.0.1", path=path,
                                          params=params)
    quoted = path.replace(":", "%3A")
    signed = SignedRequest(method="PUT", host=HOST, raw_path=quoted,
                           query=list(params.items()), headers={})
    assert await auth().authenticate(signed, presigned=True) == IDENTITY
    wrong_verb = SignedRequest(**{**signed.__dict__, "method": "POST"})
    with pytest.raises(errors.SignatureDoesNotMatch):
        await auth().authenticate(wrong_verb, presigned=True)


async def test_no_signature_is_incomplete() -> None:
    bare = SignedRequest(method="GET", host=HOST, raw_path="/v1/",
                         query=[("Action", "ListStacks")], headers={})
    with pytest.raises(errors.IncompleteSignature) as caught:
        await auth().authenticate(bare)
    assert caught.value.status == 400


async def test_signature_without_access_key_is_missing_token() -> None:
    bare = SignedRequest(method="GET", host=HOST, raw_path="/v1/",
                         query=[("Action", "ListStacks"), ("Signature", "abc"),
                                ("SignatureVersion", "2")], headers={})
    with pytest.raises(errors.MissingAuthenticationToken):
        await auth().authenticate(bare)


@pytest.mark.parametrize("authorization", [
    "AWS AKKILNTEST:abc",
    "AWS4-HMAC-SHA256 Credential=AKKILNTEST/20240101/r/s/aws4_request, Signature=ab",
    "AWS4-HMAC-SHA256 Credential=AKKILNTEST, SignedHeaders=host, Signature=ab",
])
async def test_malformed_authorization_header_is_incomplete(authorization: str) -> None:
    bare = SignedRequest(method="GET", host=HOST, raw_path="/v1/", query=[],
                         headers={"authorization": authorization,
                                  "x-amz-date": "20240101T000000Z"})
    with pytest.raises(errors.IncompleteSignature):
        await auth().authenticate(bare)


def test_error_body_is_aws_xml() -> None:
    from xml.etree import ElementTree

    response = errors.error_response(errors.SignatureDoesNotMatch())
    root = ElementTree.fromstring(response.body)
    assert root.tag == "ErrorResponse"
    assert [(e.tag, e.text) for e in root.find("Error") or []] == [
        ("Type", "Sender"), ("Code", "SignatureDoesNotMatch"),
        ("Message", "The request signature we calculated does not match the signature "
                    "you provided")]
    assert response.status_code == 403


def test_canonical_query_encodes_as_urllib_quote() -> None:
    """The shortcut for unreserved text and the remembered encodings give exactly what
    ``quote(v, safe='-_~')`` gives, the same again on a second call."""
    from urllib.parse import quote

    from kiln.ec2sign import canonical_query

    values = ["", "plain-Value_1.0~", "2026-11-24T15:00:00Z", "a b+c/d?e=f&g",
              "arn:openstack:heat::p:stacks/s/1/resources/handle", "é€☃", "\x00\n\t%",
              "x" * 300 + ":"]
    params = {f"k{i}": v for i, v in enumerate(values)} | {"Signature": "left out"}
    expected = "&".join(f"{quote(k, safe='-_~')}={quote(v, safe='-_~')}"
                        for k, v in sorted(params.items()) if k != "Signature")
    assert canonical_query(params) == expected
    assert canonical_query(params) == expected


async def test_a_remembered_sigv2_answer_is_only_for_the_same_request_and_secret() -> None:
    """The same pre-signed URL is checked again and again and its answer is remembered:
    the very same request passes again, but another secret for its key, another verb,
    host or path, or a changed signature is still refused."""
    req = received(sigv2_get({"Action": "DescribeStackResource", "StackName": "remembered"}))
    for _ in range(2):
        assert await auth().authenticate(req, presigned=True) == IDENTITY
    other_secret = auth()
    assert isinstance(other_secret.lookup, Keys)
    other_secret.lookup.known[ACCESS] = Credential("another secret", IDENTITY)
    changed_signature = [(k, v[:-2] + ("AA" if v[-2:] != "AA" else "BB"))
                         if k == "Signature" else (k, v) for k, v in req.query]
    for refused, who in [(SignedRequest(**{**req.__dict__, "method": "PUT"}), auth()),
                         (SignedRequest(**{**req.__dict__, "host": "other:1"}), auth()),
                         (SignedRequest(**{**req.__dict__, "raw_path": "/v2/"}), auth()),
                         (SignedRequest(**{**req.__dict__, "query": changed_signature}),
                          auth()),
                         (req, other_secret)]:
        with pytest.raises(errors.SignatureDoesNotMatch):
            await who.authenticate(refused, presigned=True)


def _sigv2_without_time(**extra: str) -> SignedRequest:
    """A SigV2 GET signed by botocore's own HMAC, with no Timestamp unless given."""
    params = {"Action": "ListStacks", "AWSAccessKeyId": ACCESS, "SignatureVersion": "2",
              "SignatureMethod": "HmacSHA256", **extra}
    _, params["Signature"] = SigV2Auth(Credentials(ACCESS, SECRET)).calc_signature(
        AWSRequest(method="GET", url=f"http://{HOST}/v1/"), params)
    return SignedRequest(method="GET", host=HOST, raw_path="/v1/",
                         query=list(params.items()), headers={})


async def test_sigv2_without_timestamp_or_expires_is_refused_unless_presigned() -> None:
    """AWS: a SigV2 request carries Timestamp or Expires. Heat's pre-signed signal URLs
    carry neither (its ec2 signer adds none), and stay valid."""
    bare = _sigv2_without_time()
    with pytest.raises(errors.MissingParameter) as caught:
        await auth().authenticate(bare)
    assert caught.value.status == 400 and "Timestamp" in caught.value.message
    assert await auth(clock_offset=86400 * 30).authenticate(bare, presigned=True) == IDENTITY
    soon = (dt.datetime.now(dt.UTC) + dt.timedelta(seconds=60)).strftime("%Y-%m-%dT%H:%M:%SZ")
    assert await auth().authenticate(_sigv2_without_time(Expires=soon)) == IDENTITY
    # a read by a keypair issued to a stack (os-collect-config's cfn collector signs none)
    with pytest.raises(errors.MissingParameter):
        await auth().authenticate(bare, agent_read=True)
    issued = Ec2Identity(access_key=ACCESS, project_id="demo", stack_id="s1",
                         resource_name="server")
    keys = Keys()
    keys.known[ACCESS] = Credential(SECRET, issued)
    agent = SecretAuthenticator(keys)
    assert await agent.authenticate(bare, agent_read=True) == issued
    with pytest.raises(errors.MissingParameter):
        await agent.authenticate(bare)


class _HostlessSigV4(SigV4Auth):  # type: ignore[misc]
    def headers_to_sign(self, request: AWSRequest) -> object:
        names = super().headers_to_sign(request)
        del names["host"]
        return names


async def test_sigv4_must_sign_host() -> None:
    req = AWSRequest(method="POST", url=f"http://{HOST}/v1/", data="Action=ListStacks",
                     headers={"Content-Type": FORM})
    _HostlessSigV4(Credentials(ACCESS, SECRET), "cloudformation", "RegionOne").add_auth(req)
    signed = received(req)
    assert "host" not in signed.headers["authorization"].split("SignedHeaders=")[1]
    with pytest.raises(errors.IncompleteSignature) as caught:
        await auth().authenticate(signed)
    assert "host" in caught.value.message
    query = SignedRequest(method="GET", host=HOST, raw_path="/v1/", headers={}, query=[
        ("Action", "ListStacks"), ("X-Amz-Algorithm", "AWS4-HMAC-SHA256"),
        ("X-Amz-Credential", f"{ACCESS}/20260101/RegionOne/cloudformation/aws4_request"),
        ("X-Amz-Date", "20260101T000000Z"), ("X-Amz-SignedHeaders", "x-amz-date"),
        ("X-Amz-Signature", "00")])
    with pytest.raises(errors.IncompleteSignature):
        await auth().authenticate(query)
