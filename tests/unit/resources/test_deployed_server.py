"""OS::Heat::DeployedServer publishes os-collect-config settings in its metadata, shaped as
Heat 27 published them (observed: GET .../resources/{name}/metadata and get_attr)."""

from __future__ import annotations

from types import SimpleNamespace
from urllib.parse import parse_qs, urlsplit

import pytest

from kiln import tempurl
from kiln.resources.base import ResourceFailure
from tests.unit.resources.fakes import FakeRuntime, make, run


@pytest.fixture
def rt() -> FakeRuntime:
    return FakeRuntime()


async def test_poll_server_cfn(rt: FakeRuntime) -> None:
    res = make(rt, "cfn", "OS::Heat::DeployedServer")
    await run(res, "create")
    occ = {"collectors": ["cfn", "local"], "cfn": {
        "metadata_url": "http://kiln:8000/v1/", "access_key_id": "AK",
        "secret_access_key": "SK", "stack_name": "teststack", "path": "cfn.Metadata"}}
    assert res.metadata == {"deployments": [], "os-collect-config": occ}
    assert res.get_attribute("os_collect_config") == occ
    name = res.get_attribute("name")
    assert name.startswith("teststack-cfn-")           # no name: the physical name
    assert res.get_attribute("name") == name            # ... and it stays the same
    assert rt.stack_user_calls == [("cfn", None, True)]


async def test_poll_server_heat(rt: FakeRuntime) -> None:
    res = make(rt, "heat", "OS::Heat::DeployedServer",
               {"software_config_transport": "POLL_SERVER_HEAT", "name": "myserver"})
    res.metadata = {"deployments": [{"id": "d1"}], "custom": 1}   # set before create
    await run(res, "create")
    password = res.data["password"]
    assert len(password) == 32
    assert res.metadata == {"deployments": [{"id": "d1"}], "custom": 1,
                            "os-collect-config": {"collectors": ["heat", "local"], "heat": {
                                "user_id": "u-1", "password": password,
                                "auth_url": "http://keystone:5000/v3",
                                "project_id": "stack-user-project",
                                "stack_id": f"teststack/{rt.stack_id}",
                                "resource_name": "heat", "region_name": None}}}
    assert res.get_attribute("name") == "myserver"
    assert res.all_attributes()["name"] == "myserver"
    assert rt.stack_user_calls == [("heat", password, False)]


async def test_changing_transport_blanks_the_old_one(rt: FakeRuntime) -> None:
    res = make(rt, "s", "OS::Heat::DeployedServer")
    await run(res, "create")
    new = type(res).make_properties("s", {"software_config_transport": "POLL_SERVER_HEAT"})
    diff = res.diff_properties(res.properties, new)
    assert not res.needs_replace(diff)
    await run(res, "update", res.definition, new, diff)
    occ = res.metadata["os-collect-config"]
    assert occ["collectors"] == ["heat", "local"]
    assert occ["cfn"] == {"metadata_url": None, "access_key_id": None,
                          "secret_access_key": None, "stack_name": None, "path": None}


async def test_zaqar_is_refused(rt: FakeRuntime) -> None:
    res = make(rt, "s", "OS::Heat::DeployedServer",
               {"software_config_transport": "ZAQAR_MESSAGE"})
    with pytest.raises(ResourceFailure, match="ZAQAR_MESSAGE needs a cloud service"):
        await res.handle_create()


async def test_poll_temp_url_publishes_a_signed_get_of_the_metadata(rt: FakeRuntime) -> None:
    rt.conf = SimpleNamespace(heat_metadata_server_url="http://kiln.example:8000/")
    res = make(rt, "srv", "OS::Heat::DeployedServer",
               {"software_config_transport": "POLL_TEMP_URL"})
    await run(res, "create")
    occ = res.metadata["os-collect-config"]
    assert occ["collectors"] == ["request", "local"]
    url = occ["request"]["metadata_url"]
    split = urlsplit(url)
    assert f"{split.scheme}://{split.netloc}" == "http://kiln.example:8000"
    assert split.path == f"/v1/AUTH_proj/{rt.stack_id}/srv"
    query = parse_qs(split.query)
    key = res.data["temp_url_key"]
    assert "temp_url_key" in type(res).secret_data           # stored encrypted
    tempurl.check(key, method="GET", raw_path=split.path, sig=query["temp_url_sig"][0],
                  expires=int(query["temp_url_expires"][0]), now=rt.clock)

    # leaving POLL_TEMP_URL revokes the URL (its key goes) and blanks the request section
    new = type(res).make_properties("srv", {"software_config_transport": "POLL_SERVER_CFN"})
    await run(res, "update", res.definition, new, res.diff_properties(res.properties, new))
    assert "temp_url_key" not in res.data
    assert res.metadata["os-collect-config"]["request"] == {"metadata_url": None}


async def test_new_template_metadata_keeps_the_agent_keys(rt: FakeRuntime) -> None:
    res = make(rt, "srv", "OS::Heat::DeployedServer")
    await run(res, "create")
    res.metadata = {**res.metadata, "deployments": [{"id": "d1"}], "old": 1}
    merged = res.updated_metadata({"role": "db", "os-collect-config": {"splay": 5}})
    assert merged["role"] == "db" and "old" not in merged
    assert merged["deployments"] == [{"id": "d1"}]
    assert merged["os-collect-config"]["splay"] == 5
    assert merged["os-collect-config"]["collectors"] == ["cfn", "local"]


def test_snapshot_deletion_policy_is_accepted(rt: FakeRuntime) -> None:
    type(make(rt, "s", "OS::Heat::DeployedServer")).validate_deletion_policy("Snapshot")
