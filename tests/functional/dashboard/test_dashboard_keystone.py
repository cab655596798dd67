"""The dashboard behind a real Keystone: the login form, the projects a user may switch
to (and only those), the token on every call, logging out, and the login endpoint's
answers to bad input."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from tests.support.browser import save_screenshot
from tests.support.fixtures import StartKeystone
from tests.support.keystone import Account, KeystoneProcess
from tests.support.server import KilnProcess

TEMPLATE = {"heat_template_version": "2018-08-31",
            "resources": {"r": {"type": "OS::Heat::None"}}}


@pytest.fixture
def keystone(start_keystone_factory: StartKeystone) -> KeystoneProcess:
    return start_keystone_factory()


@pytest.fixture
def kiln(keystone: KeystoneProcess, start_kiln_factory: Any) -> KilnProcess:
    proc: KilnProcess = start_kiln_factory(options=keystone.kiln_options())
    return proc


def _stack_in(kiln: KilnProcess, account: Account, project_id: str, name: str) -> None:
    token = account.keystone.token(account.username, account.password,
                                   project_id=project_id).id
    reply = httpx.post(f"{kiln.url}/v1/{project_id}/stacks", timeout=30,
                       headers={"X-Auth-Token": token},
                       json={"stack_name": name, "template": TEMPLATE})
    assert reply.status_code == 201, reply.text


def test_login_switch_project_and_logout(page: Any, keystone: KeystoneProcess,
                                         kiln: KilnProcess) -> None:
    from playwright.sync_api import expect

    alice = keystone.account(("member",), prefix="alice")
    other = keystone.account(("member",), prefix="owner")   # a second project ...
    keystone.grant(alice.user_id, other.project_id, "member")  # ... alice is member of
    stranger = keystone.account(("member",), prefix="bob")  # and one she is not
    _stack_in(kiln, alice, alice.project_id, "alices-own")
    _stack_in(kiln, other, other.project_id, "in-the-other")
    _stack_in(kiln, stranger, stranger.project_id, "not-hers")

    page.goto(f"{kiln.url}/")
    form = page.locator("form#login")
    expect(form).to_be_visible()
    form.locator("input[name=username]").fill(alice.username)
    form.locator("input[name=password]").fill("not-the-password")
    form.locator("input[name=project_name]").fill(alice.project)
    save_screenshot(page, "08-keystone-login")
    form.locator("button[name=login]").click()
    expect(page.locator("#login-error")).to_contain_text("password")
    form.locator("input[name=password]").fill(alice.password)
    form.locator("button[name=login]").click()
    expect(form).to_have_count(0)

    # her own project's stacks, fetched with her token; the address holds the project id
    expect(page.locator("table.stacks")).to_contain_text("alices-own")
    assert f"#/p/{alice.project_id}/stacks" in page.url
    expect(page.locator("#user")).to_have_text(alice.username)
    choice = page.locator("#project-choice")
    expect(choice).to_be_visible()
    assert sorted(choice.locator("option").all_inner_texts()) == sorted(
        [alice.project, other.project])

    # switching re-scopes the token to the other project she has a role on
    choice.select_option(other.project_id)
    expect(page.locator("table.stacks")).to_contain_text("in-the-other")
    expect(page.locator("table.stacks")).not_to_contain_text("alices-own")

    # a project she has no role on is refused, and nothing of it is shown
    page.goto(f"{kiln.url}/#/p/{stranger.project_id}/stacks")
    expect(page.locator("#project-error")).to_contain_text("no role on project")
    expect(page.locator("body")).not_to_contain_text("not-hers")

    page.goto(f"{kiln.url}/#/p/{alice.project_id}/stacks")
    expect(page.locator("table.stacks")).to_contain_text("alices-own")
    page.locator("button[name=logout]").click()
    expect(page.locator("form#login")).to_be_visible()


def test_login_endpoint_answers(keystone: KeystoneProcess, kiln: KilnProcess,
                                start_kiln_factory: Any) -> None:
    user = keystone.account(("member",))
    url = f"{kiln.url}/dashboard/session"
    assert httpx.get(url, timeout=30).json() == {"auth": "keystone"}
    good = httpx.post(url, timeout=30, json={
        "username": user.username, "password": user.password, "project_name": user.project})
    assert good.status_code == 200, good.text
    body = good.json()
    assert body["project"] == {"id": user.project_id, "name": user.project}
    assert "member" in body["roles"]
    # the token works on the API like any other
    listed = httpx.get(f"{kiln.url}/v1/{user.project_id}/stacks", timeout=30,
                       headers={"X-Auth-Token": body["token"]})
    assert listed.status_code == 200
    wrong = httpx.post(url, timeout=30, json={
        "username": user.username, "password": "nope", "project_name": user.project})
    assert wrong.status_code == 401
    assert wrong.json()["error"]["type"] == "HTTPUnauthorized"
    for bad in (b"not json", b"[1]", b'{"username": "x"}'):
        answer = httpx.post(url, timeout=30, content=bad)
        assert answer.status_code == 400, (bad, answer.text)
        assert answer.json()["error"]["message"]
    # re-scoping to a project the user has no role on is Keystone's refusal: 401
    other = keystone.account(("member",))
    rescoped = httpx.post(url, timeout=30, json={"token": body["token"],
                                                 "project_id": other.project_id})
    assert rescoped.status_code == 401
    # without authentication there is nothing to log in to
    plain = start_kiln_factory()
    assert httpx.get(f"{plain.url}/dashboard/session", timeout=30).json() == {"auth": "none"}
    assert httpx.post(f"{plain.url}/dashboard/session", timeout=30, json={}).status_code == 400
