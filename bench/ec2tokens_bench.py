"""What checking an EC2 signature through Keystone costs a CFN request (issue 12).

    .venv-test/bin/python bench/ec2tokens_bench.py [--requests 300]

Starts the test suite's real Keystone (tests/support/keystone.py) and two `kiln serve`
processes: noauth (the signature checked locally against a keypair Kiln issued) and
``flavor = keystone`` (checked by ``POST /v3/ec2tokens`` with Kiln's service token, a
user's own Keystone EC2 credential). One client sends ``--requests`` SigV2-signed
``ListStacks`` GETs one after the other, first each one distinct (a ``Nonce`` parameter,
so every signature is new, as SigV4 requests and metadata polls with a fresh timestamp
are), then the same request again and again (a pre-signed URL polled: Keystone's answer
is reused for up to 30 s). Prints p50/p99 and how many times Keystone was asked.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

import httpx
from botocore.auth import SigV2Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.support.aws import issue_keypair
from tests.support.keystone import start_keystone
from tests.support.server import start_kiln


def _signed(url: str, access: str, secret: str, nonce: int | None) -> str:
    params = {"Action": "ListStacks"}
    if nonce is not None:
        params["Nonce"] = str(nonce)
    request = AWSRequest(method="GET", url=url, params=params)
    SigV2Auth(Credentials(access, secret)).add_auth(request)
    return str(request.prepare().url)


def run(url: str, access: str, secret: str, count: int, *, distinct: bool) -> str:
    times = []
    same = _signed(url, access, secret, None)
    with httpx.Client(timeout=30.0) as client:
        for index in range(count):
            target = _signed(url, access, secret, index) if distinct else same
            started = time.perf_counter()
            reply = client.get(target)
            times.append(time.perf_counter() - started)
            if reply.status_code != 200:
                raise SystemExit(f"request refused: {reply.status_code} {reply.text}")
    times.sort()
    p99 = times[max(0, int(len(times) * 0.99) - 1)]
    return f"p50 {statistics.median(times) * 1000:.1f} ms, p99 {p99 * 1000:.1f} ms"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=300)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="kiln-ec2tokens-bench-"))
    keystone = start_keystone(work / "keystone")
    try:
        account = keystone.account()
        made = keystone._call("POST", f"/users/{account.user_id}/credentials/OS-EC2",
                              json={"tenant_id": account.project_id})["credential"]
        with_keystone = start_kiln(work / "keystone-mode", options=keystone.kiln_options())
        noauth = start_kiln(work / "noauth")
        try:
            issued = issue_keypair(noauth, "demo")
            run(noauth.cfn_url, issued.access, issued.secret, 20, distinct=True)
            run(with_keystone.cfn_url, made["access"], made["secret"], 20, distinct=True)
            before = keystone.access_log.read_text().count('"POST /v3/ec2tokens')
            print("noauth, distinct:  ", run(noauth.cfn_url, issued.access, issued.secret,
                                              args.requests, distinct=True))
            print("keystone, distinct:", run(with_keystone.cfn_url, made["access"],
                                              made["secret"], args.requests, distinct=True))
            print("keystone, repeated:", run(with_keystone.cfn_url, made["access"],
                                              made["secret"], args.requests, distinct=False))
            asked = keystone.access_log.read_text().count('"POST /v3/ec2tokens') - before
            print(f"ec2tokens calls for {2 * args.requests} keystone-mode requests: {asked}")
        finally:
            with_keystone.stop()
            noauth.stop()
    finally:
        keystone.stop()


if __name__ == "__main__":
    main()
