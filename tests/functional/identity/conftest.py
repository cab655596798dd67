"""Kiln behind the test suite's real Keystone (tests/support/keystone.py), in keystone
mode: module-scoped server and accounts, and clients carrying each account's token."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.functional.agents.deploying import wait_for
from tests.support.keystone import Account, KeystoneProcess
from tests.support.server import KilnProcess, start_kiln


def token_client(kiln: KilnProcess, account: Account) -> httpx.Client:
    """An HTTP client for ``kiln`` sending a fresh token of ``account``."""
    return httpx.Client(base_url=kiln.url, timeout=60.0, follow_redirects=False,
                        headers={"X-Auth-Token": account.token().id})


@pytest.fixture(scope="module")
def ks_kiln(keystone: KeystoneProcess,
            tmp_path_factory: pytest.TempPathFactory) -> Iterator[KilnProcess]:
    proc = start_kiln(tmp_path_factory.mktemp("kiln-keystone"),
                      options=keystone.kiln_options())
    yield proc
    proc.stop()


@pytest.fixture(scope="module")
def member(keystone: KeystoneProcess) -> Account:
    return keystone.account(("member",), prefix="alice")


@pytest.fixture(scope="module")
def other(keystone: KeystoneProcess) -> Account:
    return keystone.account(("member",), prefix="bob")


@pytest.fixture(scope="module")
def member_http(ks_kiln: KilnProcess, member: Account) -> Iterator[httpx.Client]:
    with token_client(ks_kiln, member) as client:
        yield client


@pytest.fixture(scope="module")
def other_http(ks_kiln: KilnProcess, other: Account) -> Iterator[httpx.Client]:
    with token_client(ks_kiln, other) as client:
        yield client


def settle(hc: Any, stack_id: str, what: str) -> Any:
    """The stack (heatclient) once its action has ended, bounded by wait_for's deadline."""
    return wait_for(lambda: hc.stacks.get(stack_id),
                    lambda s: not s.stack_status.endswith("IN_PROGRESS"), what)


def size(hc: Any, stack_id: str) -> int:
    """The stack's ``size`` output (a scaling group's current size)."""
    return int(hc.stacks.output_show(stack_id, "size")["output"]["output_value"])


def write_policy(path: Path, text: str) -> Path:
    path.write_text(text)
    return path
