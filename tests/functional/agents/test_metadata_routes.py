"""Where agents read a server's deployments: the server resource's metadata (native
``.../resources/{name}/metadata``), ``software_deployments/metadata/{server_id}`` and the
POLL_TEMP_URL URL. Each shows a change the moment the deployment changes."""

from __future__ import annotations

import copy
from email.utils import parsedate_to_datetime
from typing import Any

import httpx

from tests.functional.agents.deploying import (
    create,
    deployment_template,
    metadata_url,
    server_collector,
    settled,
)

#: httpx's default is 5 s, which a loaded CI machine (load 20 on 2 CPUs) can exceed; the
#: requests of heatclient beside these have no timeout at all
HTTP_TIMEOUT = 60.0


def _views(hc: Any, sid: str, server_id: str, url: str) -> list[list[dict[str, Any]]]:
    native = hc.resources.metadata(sid, "server")["deployments"]
    by_server = hc.http_client.get(f"/software_deployments/metadata/{server_id}").json()
    polled = httpx.get(url, timeout=HTTP_TIMEOUT).json()["deployments"]
    return [native, by_server["metadata"], polled]


def _inputs(config: dict[str, Any]) -> dict[str, Any]:
    return {i["name"]: i["value"] for i in config["inputs"]}


def test_every_view_follows_the_deployment(hc: Any) -> None:
    template = deployment_template(signal="NO_SIGNAL")
    sid = create(hc, "md-views", template, greeting="first")
    assert settled(hc, sid).stack_status == "CREATE_COMPLETE"
    server_id = hc.resources.get(sid, "server").physical_resource_id
    url = metadata_url(server_collector(hc, sid))
    views = _views(hc, sid, server_id, url)
    assert views[0] == views[1] == views[2]
    (config,) = views[0]
    assert _inputs(config)["greeting"] == "first"
    assert _inputs(config)["deploy_action"] == "CREATE"

    last_modified = parsedate_to_datetime(
        httpx.head(url, timeout=HTTP_TIMEOUT).headers["last-modified"])
    hc.stacks.update(sid, template=template, parameters={"greeting": "second"})
    assert settled(hc, sid).stack_status == "UPDATE_COMPLETE"
    views = _views(hc, sid, server_id, url)
    assert views[0] == views[1] == views[2]
    (updated,) = views[0]
    assert updated["id"] != config["id"]          # a new derived config, as in Heat
    assert _inputs(updated)["greeting"] == "second"
    assert _inputs(updated)["deploy_action"] == "UPDATE"
    assert parsedate_to_datetime(
        httpx.head(url, timeout=HTTP_TIMEOUT).headers["last-modified"]) >= last_modified

    # a second deployment to the same server appears in every view, in name order
    second = copy.deepcopy(template)
    second["resources"]["zz_deployment"] = copy.deepcopy(
        template["resources"]["deployment"])
    second["resources"]["zz_deployment"]["properties"]["name"] = "zz-last"
    second["resources"]["deployment"]["properties"]["name"] = "aa-first"
    hc.stacks.update(sid, template=second, parameters={"greeting": "second"})
    assert settled(hc, sid).stack_status == "UPDATE_COMPLETE"
    views = _views(hc, sid, server_id, url)
    assert views[0] == views[1] == views[2]
    assert [c["name"] for c in views[0]] == ["aa-first", "zz-last"]

    # and leaves them when its resource goes
    hc.stacks.update(sid, template=template, parameters={"greeting": "second"})
    assert settled(hc, sid).stack_status == "UPDATE_COMPLETE"
    views = _views(hc, sid, server_id, url)
    assert views[0] == views[1] == views[2]
    assert len(views[0]) == 1


def test_template_metadata_changes_reach_the_poller(hc: Any) -> None:
    template = deployment_template(signal="NO_SIGNAL")
    template["resources"]["server"]["metadata"] = {"role": "web"}
    sid = create(hc, "md-template", template)
    assert settled(hc, sid).stack_status == "CREATE_COMPLETE"
    url = metadata_url(server_collector(hc, sid))
    assert httpx.get(url, timeout=HTTP_TIMEOUT).json()["role"] == "web"
    template["resources"]["server"]["metadata"] = {"role": "db"}
    hc.stacks.update(sid, template=template)
    assert settled(hc, sid).stack_status == "UPDATE_COMPLETE"
    polled = httpx.get(url, timeout=HTTP_TIMEOUT).json()
    assert polled["role"] == "db"
    assert len(polled["deployments"]) == 1
    assert polled == hc.resources.metadata(sid, "server")
