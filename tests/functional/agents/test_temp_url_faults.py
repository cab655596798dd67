"""Kiln's temp URLs refuse what a Swift temp URL refuses, in Heat's fault body, and a bad
or repeated signal leaves the deployment as it was."""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit, urlunsplit

import httpx

from tests.functional.agents.deploying import (
    create,
    deleted,
    deployment_template,
    metadata_url,
    outputs,
    server_collector,
    settled,
    wait_deployment,
    wait_for,
)
from tests.support.server import HTTP_TIMEOUT


def _signal_url(hc: Any, sid: str) -> str:
    return _signal_url_of(hc, sid, "server")


def _signal_url_of(hc: Any, sid: str, server: str) -> str:
    """deploy_signal_id, as the server reads it from its metadata."""
    (deployment,) = hc.resources.metadata(sid, server)["deployments"]
    inputs = {i["name"]: i["value"] for i in deployment["inputs"]}
    assert inputs["deploy_signal_verb"] == "PUT"
    return str(inputs["deploy_signal_id"])


def _with_query(url: str, **changes: str) -> str:
    parts = urlsplit(url)
    query = {k: v[0] for k, v in parse_qs(parts.query).items()}
    query.update(changes)
    return urlunsplit(parts._replace(query=urlencode(query)))


def _fault(resp: httpx.Response, status: int, error_type: str, words: str) -> None:
    assert resp.status_code == status, resp.text
    body = resp.json()
    assert body["code"] == status
    assert body["error"]["type"] == error_type
    assert words in body["error"]["message"]


def _waiting(hc: Any, sid: str) -> None:
    assert hc.resources.get(sid, "deployment").resource_status == "CREATE_IN_PROGRESS"
    dep_id = hc.resources.get(sid, "deployment").physical_resource_id
    assert hc.software_deployments.get(dep_id).status == "IN_PROGRESS"


def test_bad_signatures_and_bodies_change_nothing(hc: Any) -> None:
    sid = create(hc, "tu-faults", deployment_template())
    wait_deployment(hc, sid, "CREATE")
    url = _signal_url(hc, sid)
    good = json.dumps({"deploy_stdout": "ok", "deploy_status_code": 0})

    forged = _with_query(url, temp_url_sig="0" * 64)
    _fault(httpx.put(forged, content=good,
                     timeout=HTTP_TIMEOUT), 401, "HTTPUnauthorized", "does not match")
    later = _with_query(url, temp_url_expires="253402300000")
    _fault(httpx.put(later, content=good,
                     timeout=HTTP_TIMEOUT), 401, "HTTPUnauthorized", "does not match")
    _fault(httpx.put(_with_query(url, temp_url_expires="tomorrow"), content=good,
                     timeout=HTTP_TIMEOUT), 401,
           "HTTPUnauthorized", "temp_url_expires")
    unsigned = urlunsplit(urlsplit(url)._replace(query=""))
    _fault(httpx.put(unsigned, content=good,
                     timeout=HTTP_TIMEOUT), 401, "HTTPUnauthorized", "temp_url_expires")
    _fault(httpx.get(url, timeout=HTTP_TIMEOUT), 401, "HTTPUnauthorized",
           "does not match")   # signed for PUT
    _fault(httpx.post(url, content=good, timeout=HTTP_TIMEOUT), 405, "HTTPMethodNotAllowed", "")

    _fault(httpx.put(url, content=b"not json",
                     timeout=HTTP_TIMEOUT), 400, "HTTPBadRequest", "not valid JSON")
    _fault(httpx.put(url, content=b"[1, 2]",
                     timeout=HTTP_TIMEOUT), 400, "HTTPBadRequest", "JSON object")
    big = json.dumps({"deploy_stdout": "x" * 1_100_000})
    _fault(httpx.put(url, content=big,
                     timeout=HTTP_TIMEOUT), 400, "RequestLimitExceeded", "exceeds maximum")
    _waiting(hc, sid)

    other_stack = url.replace(sid, "00000000-0000-4000-8000-000000000000")
    _fault(httpx.put(other_stack, content=good,
                     timeout=HTTP_TIMEOUT), 404, "HTTPNotFound", "could not be found")
    other_project = url.replace("/AUTH_demo/", "/AUTH_other/")
    _fault(httpx.put(other_project, content=good,
                     timeout=HTTP_TIMEOUT), 404, "HTTPNotFound", "could not be found")
    _waiting(hc, sid)


def test_a_second_signal_is_ignored(hc: Any) -> None:
    sid = create(hc, "tu-twice", deployment_template())
    wait_deployment(hc, sid, "CREATE")
    url = _signal_url(hc, sid)
    first = {"deploy_stdout": "first", "deploy_status_code": 0, "result": "one"}
    assert httpx.put(url, json=first, timeout=HTTP_TIMEOUT).status_code == 201
    assert settled(hc, sid).stack_status == "CREATE_COMPLETE"
    second = {"deploy_stdout": "second", "deploy_status_code": 1, "result": "two"}
    assert httpx.put(url, json=second, timeout=HTTP_TIMEOUT).status_code == 201
    shown = hc.resources.get(sid, "deployment")
    assert shown.resource_status == "CREATE_COMPLETE"
    assert shown.attributes["deploy_stdout"] == "first"
    assert outputs(hc, sid)["result"] == "one"
    assert hc.software_deployments.get(shown.physical_resource_id).status == "COMPLETE"


def test_urls_of_a_deleted_or_replaced_stack_answer_404(hc: Any) -> None:
    sid = create(hc, "tu-gone", deployment_template(signal="NO_SIGNAL"))
    assert settled(hc, sid).stack_status == "CREATE_COMPLETE"
    old_metadata = metadata_url(server_collector(hc, sid))
    assert httpx.get(old_metadata, timeout=HTTP_TIMEOUT).status_code == 200
    hc.stacks.delete(sid)
    assert deleted(hc, sid) == "DELETE_COMPLETE"
    _fault(httpx.get(old_metadata, timeout=HTTP_TIMEOUT), 404, "HTTPNotFound", "could not be found")
    assert httpx.head(old_metadata, timeout=HTTP_TIMEOUT).status_code == 404

    # a new stack of the same name: the agent still polling the old URL gets 404, never
    # the new stack's metadata
    new = create(hc, "tu-gone", deployment_template(signal="NO_SIGNAL"))
    assert settled(hc, new).stack_status == "CREATE_COMPLETE"
    assert httpx.get(old_metadata, timeout=HTTP_TIMEOUT).status_code == 404
    assert httpx.get(metadata_url(server_collector(hc, new)),
                     timeout=HTTP_TIMEOUT).status_code == 200


def _metadata_of(hc: Any, sid: str, name: str) -> Any:
    """The resource's metadata, {} while it has no row yet: an update is accepted before
    its task inserts the new resources' rows."""
    from heatclient.exc import HTTPNotFound

    try:
        return hc.resources.metadata(sid, name)
    except HTTPNotFound:
        return {}


def test_a_removed_or_replaced_deployment_refuses_its_old_url(hc: Any) -> None:
    template = deployment_template()
    sid = create(hc, "tu-removed", template)
    wait_deployment(hc, sid, "CREATE")
    url = _signal_url(hc, sid)
    assert httpx.put(url, json={"deploy_status_code": 0}, timeout=HTTP_TIMEOUT).status_code == 201
    assert settled(hc, sid).stack_status == "CREATE_COMPLETE"

    # replaced (a new server: a deployment's server is not update_allowed): a new key
    replaced = json.loads(json.dumps(template))
    replaced["resources"]["server2"] = replaced["resources"]["server"]
    replaced["resources"]["deployment"]["properties"]["server"] = {"get_resource": "server2"}
    hc.stacks.update(sid, template=replaced)
    wait_for(lambda: _metadata_of(hc, sid, "server2").get("deployments"), bool,
             "the replacement deployment")
    _fault(httpx.put(url, json={"deploy_status_code": 0},
                     timeout=HTTP_TIMEOUT), 401, "HTTPUnauthorized",
           "does not match")
    new_url = _signal_url_of(hc, sid, "server2")
    assert new_url != url
    assert httpx.put(new_url, json={"deploy_status_code": 0},
                     timeout=HTTP_TIMEOUT).status_code == 201
    assert settled(hc, sid).stack_status == "UPDATE_COMPLETE"

    # removed: nothing answers at its URL any more
    del replaced["resources"]["deployment"]
    del replaced["outputs"]
    hc.stacks.update(sid, template=replaced)
    assert settled(hc, sid).stack_status == "UPDATE_COMPLETE"
    _fault(httpx.put(new_url, json={},
                     timeout=HTTP_TIMEOUT), 404, "HTTPNotFound", "could not be found")
