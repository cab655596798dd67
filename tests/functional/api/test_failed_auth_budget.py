"""The budget of failed authentications per client address (issue 22), against a real
``kiln serve`` (tokens-file authentication on the native listener, Kiln's keypairs on the
CFN and CloudWatch listeners) with a tiny budget (``[kiln_api] failed_auth_burst = 4``,
``failed_auth_rate = 0.25``).

A flooder sending bad credentials from one loopback address (127.0.0.2 and up: Linux
answers the whole 127/8, and the server keys by the TCP peer) gets its API's usual
refusal until the burst is spent, then a 429 with ``Retry-After`` in that API's format:
Heat's fault on the native API and the temp URLs, AWS's ``Throttling`` on CFN and
CloudWatch. Meanwhile a client with valid credentials is served, from another address
and from the flooder's own (a credential the server holds in memory is still checked),
and its requests spend nothing. The flooder is heard again once its budget refills.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Iterator

import httpx
import pytest

from tests.functional.scaling.test_cloudwatch_bad_numbers import error_of, keys_for, send
from tests.support.server import HTTP_TIMEOUT, KilnProcess, start_kiln

BURST, RATE = 4, 0.25
#: what a loaded machine may add to the wait the server announced
MARGIN = 15.0
TOKEN = "good-secret"


@pytest.fixture(scope="module")
def kiln(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KilnProcess]:
    import yaml

    work = tmp_path_factory.mktemp("failed-auth")
    tokens = work / "tokens.yaml"
    tokens.write_text(yaml.safe_dump([{"token": TOKEN, "user_id": "alice",
                                       "project_id": "alpha", "roles": ["member", "reader"]}]))
    proc = start_kiln(work, options={
        "DEFAULT": {"graceful_shutdown_timeout": 2},
        "paste_deploy": {"flavor": "custombackend"},
        "kiln_auth": {"backend": "tokens_file", "tokens_file": tokens},
        "kiln_api": {"failed_auth_burst": BURST, "failed_auth_rate": RATE}})
    yield proc
    assert proc.stop() == 0, proc.logs()


def client(address: str) -> httpx.Client:
    """A client whose connections come from ``address`` (a loopback alias)."""
    return httpx.Client(transport=httpx.HTTPTransport(local_address=address),
                        timeout=HTTP_TIMEOUT)


def flood(call: Callable[[int], httpx.Response], refused_status: int,
          served: Callable[[], None]) -> httpx.Response:
    """Bad credentials until the budget is spent: the first BURST get the API's own
    refusal, then 429s; ``served`` (a valid client) runs between every two calls."""
    statuses = []
    throttled = None
    for i in range(BURST + 3):
        answer = call(i)
        statuses.append(answer.status_code)
        if answer.status_code == 429:
            throttled = answer
        served()
    assert statuses[:BURST] == [refused_status] * BURST, statuses
    assert statuses[-2:] == [429, 429], statuses
    assert throttled is not None
    assert 1 <= int(throttled.headers["retry-after"]) <= int(1 / RATE) + 1
    return throttled


def recovers(call: Callable[[], httpx.Response], throttled: httpx.Response,
             refused_status: int) -> None:
    """The flooder's credentials are checked again within the wait it was told."""
    wait = int(throttled.headers["retry-after"])
    started = time.monotonic()
    while (answer := call()).status_code == 429:
        assert time.monotonic() - started <= wait + MARGIN, "the budget never refilled"
        time.sleep(0.2)  # polling for the refill; refused calls cost no token
    assert answer.status_code == refused_status, answer.text


def heat_429(answer: httpx.Response) -> None:
    assert answer.status_code == 429, answer.text
    body = answer.json()
    assert body["error"]["type"] == "HTTPTooManyRequests", body
    assert "Too many failed authentications" in body["error"]["message"], body
    assert "failed_auth_rate" in body["error"]["message"], body


def test_bad_tokens_are_throttled_and_good_ones_served(kiln: KilnProcess) -> None:
    stacks = kiln.endpoint("alpha") + "/stacks"
    with client("127.0.0.2") as flooder, client("127.0.0.1") as other:
        def good(via: httpx.Client) -> None:
            answer = via.get(stacks, headers={"X-Auth-Token": TOKEN})
            assert answer.status_code == 200, answer.text

        throttled = flood(lambda i: flooder.get(stacks, headers={"X-Auth-Token": f"bad{i}"}),
                          401, lambda: good(other))
        heat_429(throttled)
        # a missing token is a failure too, and the flooder's address is over budget
        heat_429(flooder.get(stacks))
        # a valid token from the flooder's own address is still served
        good(flooder)
        recovers(lambda: flooder.get(stacks, headers={"X-Auth-Token": "bad"}), throttled,
                 401)


def signed(kiln: KilnProcess, creds: dict[str, str], via: httpx.Client) -> httpx.Response:
    """A ListMetrics, SigV4-signed by botocore, sent from ``via``'s address."""
    from botocore.auth import SigV4Auth
    from botocore.awsrequest import AWSRequest
    from botocore.credentials import Credentials

    url = kiln.cloudwatch_url + "/"
    body = b"Action=ListMetrics&Version=2010-08-01"
    headers = {"Content-Type": "application/x-www-form-urlencoded; charset=utf-8"}
    request = AWSRequest("POST", url, data=body, headers=headers)
    SigV4Auth(Credentials(creds["access"], creds["secret"]), "monitoring",
              "RegionOne").add_auth(request)
    return via.post(url, content=body, headers=dict(request.headers.items()))


def test_bad_signatures_are_throttled_on_cloudwatch(kiln: KilnProcess) -> None:
    good_keys = keys_for(kiln, "alpha")
    forged = {"access": good_keys["access"], "secret": "not-the-secret"}
    with client("127.0.0.3") as flooder, client("127.0.0.1") as other:
        def good() -> None:
            answer = signed(kiln, good_keys, other)
            assert answer.status_code == 200, answer.text

        throttled = flood(lambda i: signed(kiln, forged, flooder), 403, good)
        assert error_of(throttled)[:2] == (429, "Throttling"), throttled.text
        assert "Too many failed authentications" in throttled.text
        # an unknown access key costs nothing either once over budget
        unknown = {"access": uuid.uuid4().hex, "secret": "x"}
        assert signed(kiln, unknown, flooder).status_code == 429
        recovers(lambda: signed(kiln, forged, flooder), throttled, 403)
    # the helper the other CloudWatch tests use still works from the usual address
    assert send(kiln, good_keys, "query", "ListMetrics", {}).status_code == 200


def test_bad_signal_urls_and_temp_urls_are_throttled(kiln: KilnProcess) -> None:
    """The CFN listener's pre-signed signal URLs and the native temp URLs, whose
    signatures are their only credential."""
    arn = "arn:openstack:heat::alpha:stacks/s/" + str(uuid.uuid4()) + "/resources/h"
    signal = (f"{kiln.cfn_url}signal/{arn}?Timestamp=2020-01-01T00%3A00%3A00Z"
              "&SignatureMethod=HmacSHA256&AWSAccessKeyId=nobody&SignatureVersion=2"
              "&Signature=x")
    temp = (f"{kiln.endpoint('alpha').rsplit('/', 1)[0]}/AUTH_alpha/{uuid.uuid4()}/h"
            "?temp_url_sig=x&temp_url_expires=99999999999")
    with client("127.0.0.4") as cfn_flooder, client("127.0.0.5") as url_flooder, \
            client("127.0.0.1") as other:
        def good() -> None:
            answer = other.get(kiln.endpoint("alpha") + "/stacks",
                               headers={"X-Auth-Token": TOKEN})
            assert answer.status_code == 200, answer.text

        throttled = flood(lambda i: cfn_flooder.post(signal, content=b""), 403, good)
        assert error_of(throttled)[:2] == (429, "Throttling"), throttled.text
        throttled = flood(lambda i: url_flooder.get(temp), 404, good)
        heat_429(throttled)
