"""Each project sees only its own objects, through a real `kiln serve`.

Project ``alice`` owns a stack with a nested stack, outputs, events, a snapshot, a software
config and a deployment. Project ``bob`` then tries every route of the native API, taken
from the application's own router (a route added later is walked too), on alice's
objects: each must answer exactly as it does for an object that does not exist (Heat's
404 fault body), and alice's objects must be left as they were.
"""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import httpx
import pytest
from starlette.routing import Route

from kiln.api.app import create_app
from kiln.conf import CONF
from tests.functional.api.heat_target import wait_for
from tests.support.clients import OpenStackCLI
from tests.support.server import KilnProcess

CHILD = {"heat_template_version": "2018-08-31",
         "resources": {"inner": {"type": "OS::Heat::RandomString"}},
         "outputs": {"inner_value": {"value": {"get_attr": ["inner", "value"]}}}}
PARENT = {"heat_template_version": "2018-08-31",
          "resources": {"secret": {"type": "OS::Heat::RandomString"},
                        "child": {"type": "child.yaml"}},
          "outputs": {"secret_value": {"value": {"get_attr": ["secret", "value"]}}}}
SMALL = {"heat_template_version": "2018-08-31",
         "resources": {"r": {"type": "OS::Heat::None"}}}
#: the route parameters that are not a project's objects (the same for every project)
SHARED_PARAMS = {"tenant_id", "type_name", "template_version"}
#: POSTs to a collection that create in the caller's own project and name nothing of
#: another's (software_deployments names a config: walked below with alice's)
OWN_PROJECT_POSTS = {"/v1/{tenant_id}/stacks", "/v1/{tenant_id}/stacks/preview",
                     "/v1/{tenant_id}/validate", "/v1/{tenant_id}/software_configs"}
ACTIONS = ("check", "suspend", "resume", "cancel_update", "cancel_without_rollback")


def created(http: httpx.Client, project: str, name: str, template: dict[str, Any],
            files: dict[str, str] | None = None) -> dict[str, Any]:
    """Create a stack and wait for CREATE_COMPLETE; return its show body."""
    resp = http.post(f"/v1/{project}/stacks",
                     json={"stack_name": name, "template": template, "files": files or {}})
    assert resp.status_code == 201, resp.text
    sid = resp.json()["stack"]["id"]
    stack: dict[str, Any] = wait_for(
        lambda: http.get(f"/v1/{project}/stacks/{name}/{sid}").json()["stack"],
        lambda s: not s["stack_status"].endswith("IN_PROGRESS"), f"stack {name}")
    assert stack["stack_status"] == "CREATE_COMPLETE", stack
    return stack


@dataclass
class Objects:
    """Alice's objects as route parameters, one set per stack (parent and nested)."""

    stacks: list[dict[str, str]]
    software: dict[str, str]
    secrets: list[str]


@pytest.fixture(scope="module")
def http(kiln_server: KilnProcess) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=kiln_server.url, timeout=60.0,
                      follow_redirects=False) as client:
        yield client


@pytest.fixture(scope="module")
def alice(http: httpx.Client) -> Objects:
    return make_objects(http, "alice")


def make_objects(http: httpx.Client, project: str) -> Objects:
    """A stack with a nested stack, a snapshot, a config and a deployment in ``project``
    (``http`` is a client allowed to create there)."""
    parent = created(http, project, "alice-stack", PARENT,
                     {"child.yaml": json.dumps(CHILD)})
    base = f"/v1/{project}/stacks/alice-stack/{parent['id']}"
    resources = http.get(base + "/resources").json()["resources"]
    by_name = {r["resource_name"]: r for r in resources}
    child_id = by_name["child"]["physical_resource_id"]
    child_url = http.get(f"/v1/{project}/stacks/{child_id}").headers["location"]
    child_name = child_url.rstrip("/").split("/")[-2]
    snap = http.post(base + "/snapshots", json={"name": "alice-snap"})
    assert snap.status_code == 200, snap.text
    snapshot_id = snap.json()["id"]
    wait_for(lambda: http.get(f"{base}/snapshots/{snapshot_id}").json()["snapshot"]["status"],
         lambda s: s == "COMPLETE", "snapshot")

    # a change set of alice's stack (Kiln's own routes), and its first version
    change = http.post(base + "/changesets", json={"name": "alice-change",
                                                   "template": PARENT,
                                                   "files": {"child.yaml": json.dumps(CHILD)}})
    assert change.status_code == 201, change.text
    changeset_id = change.json()["changeset"]["id"]

    stacks = []
    for name, sid, resource, output in ((
            "alice-stack", parent["id"], "secret", "secret_value"),
            (child_name, child_id, "inner", "inner_value")):
        url = f"/v1/{project}/stacks/{name}/{sid}"
        event = next(e for e in http.get(url + "/events").json()["events"]
                     if e["resource_name"] == resource)
        stacks.append({"stack_name": name, "stack_id": sid, "resource_name": resource,
                       "output_key": output, "event_id": event["id"],
                       "snapshot_id": snapshot_id, "changeset": changeset_id,
                       "version": "1", "owner": project})
    config = http.post(f"/v1/{project}/software_configs",
                       json={"name": "alice-config", "group": "script", "config": "echo"})
    assert config.status_code == 200, config.text
    config_id = config.json()["software_config"]["id"]
    server_id = by_name["secret"]["physical_resource_id"]
    deployment = http.post(f"/v1/{project}/software_deployments",
                           json={"config_id": config_id, "server_id": server_id,
                                 "status": "IN_PROGRESS"})
    assert deployment.status_code == 200, deployment.text
    secrets = [parent["id"], child_id, config_id, server_id,
               http.get(base + "/outputs/secret_value").json()["output"]["output_value"]]
    return Objects(stacks=stacks, software={
        "config_id": config_id, "deployment_id": deployment.json()["software_deployment"]["id"],
        "server_id": server_id, "owner": project}, secrets=secrets)


def native_routes() -> list[Route]:
    """Every route of the application kiln serves, under /v1/{tenant_id}."""
    app = create_app(None, CONF)
    return [r for r in app.routes
            if isinstance(r, Route) and r.path.startswith("/v1/{tenant_id}")]


def choices(route: Route, param: str) -> list[str] | None:
    """The literal values a parameter's convertor admits (``resources|events|...``)."""
    pattern = route.param_convertors[param].regex
    if re.fullmatch(r"[a-z_]+(\|[a-z_]+)+", pattern):
        return pattern.split("|")
    return None


def fill(route: Route, values: dict[str, str]) -> list[str]:
    """The route's paths with ``values`` (every literal a convertor admits, each)."""
    paths = [route.path_format]
    for param in route.param_convertors:
        options = choices(route, param)
        if options is None:
            if route.param_convertors[param].regex.startswith("arn:"):
                options = ["arn:openstack:heat::{}:stacks/{}/{}".format(
                    values.get("owner", "alice"), values["stack_name"], values["stack_id"])]
            elif param == "stack_name" and "stack_id" not in route.param_convertors:
                options = [values["stack_name"], values["stack_id"]]   # lookups: name or id
            else:
                assert param in values or param in SHARED_PARAMS, (
                    f"{route.path}: no value for {{{param}}}: give alice's object here")
                options = [values.get(param, "x")]
        paths = [p.replace("{" + param + "}", o) for p in paths for o in options]
    return paths


def bodies(path: str, method: str) -> list[Any]:
    """A valid body for the route, so only the object's project can refuse it."""
    if method in ("GET", "DELETE"):
        return [None]
    if path.endswith("/actions"):
        return [{action: None} for action in ACTIONS]
    if method == "PUT" and path.endswith(("{stack_id}", "/preview")):
        return [{"template": SMALL}]
    if path.endswith("/snapshots"):
        return [{"name": "bob-snap"}]
    if path.endswith("{resource_name}") and method == "PATCH":
        return [{"mark_unhealthy": True, "resource_status_reason": "bob"}]
    if path.endswith("{deployment_id}"):
        return [{"status": "COMPLETE", "status_reason": "bob"}]
    return [{}]


def ghost(values: dict[str, str]) -> dict[str, str]:
    """The same parameters naming objects that do not exist."""
    return {k: (v if k == "owner" else "ghost-" + k
                if k in ("stack_name", "resource_name", "output_key")
                else str(uuid.uuid4())) for k, v in values.items()}


def normalised(resp: httpx.Response, values: dict[str, str]) -> tuple[int, str]:
    text = resp.text
    for key, value in sorted(values.items(), key=lambda kv: -len(kv[1])):
        if key == "owner":
            continue
        text = text.replace(value, "<" + key + ">")
    return resp.status_code, re.sub(r"req-[0-9a-f-]{36}", "<request>", text)


def assert_not_found(resp: httpx.Response, where: str) -> None:
    assert resp.status_code == 404, f"{where}: {resp.status_code} {resp.text}"
    body = resp.json()
    assert set(body) == {"code", "title", "explanation", "error"}, where
    assert (body["code"], body["title"]) == (404, "Not Found"), where
    assert body["error"]["traceback"] is None, where


def alice_state(http: httpx.Client, alice: Objects, project: str = "alice") -> Any:
    """What bob must not change: every stack's status and events, the software records."""
    state = []
    for s in alice.stacks:
        url = f"/v1/{project}/stacks/{s['stack_name']}/{s['stack_id']}"
        stack = http.get(url).json()["stack"]
        state.append((stack["stack_status"], stack["updated_time"],
                      len(http.get(url + "/events").json()["events"]),
                      http.get(url + "/snapshots").json()["snapshots"]))
    sw = alice.software
    state.append(http.get(f"/v1/{project}/software_configs/{sw['config_id']}").json())
    state.append(http.get(f"/v1/{project}/software_deployments/{sw['deployment_id']}").json())
    state.append(http.get(
        f"/v1/{project}/software_deployments/metadata/{sw['server_id']}").json())
    return state


def walk_every_route(bob: httpx.Client, bob_project: str, alice: Objects) -> int:
    """Every route of the native API as ``bob`` (in ``bob_project``) on alice's objects,
    each compared with the same request on objects that do not exist; returns how many
    requests were walked and fails listing every answer that differed."""
    walked, failures = 0, []
    requests = []
    for route in native_routes():
        params = set(route.param_convertors) - SHARED_PARAMS
        for method in sorted(route.methods or (), key=lambda m: m == "DELETE"):
            if method in ("HEAD", "OPTIONS") or not params:
                continue
            value_sets = alice.stacks if params & {"stack_name", "stack_id"} else [
                alice.software]
            for values in value_sets:
                requests.append((route, method, values))
    requests.sort(key=lambda r: r[1] == "DELETE")   # destructive last
    for route, method, values in requests:
        fake = ghost(values)
        for real_path, ghost_path in zip(fill(route, {"tenant_id": bob_project, **values}),
                                         fill(route, {"tenant_id": bob_project, **fake}),
                                         strict=True):
            for body in bodies(route.path_format, method):
                where = f"{method} {real_path} {body}"
                answer = bob.request(method, real_path, json=body)
                absent = bob.request(method, ghost_path, json=body)
                walked += 1
                if normalised(answer, values) != normalised(absent, fake):
                    failures.append(f"{where}: {answer.status_code} {answer.text[:300]}"
                                    f" (absent: {absent.status_code} {absent.text[:200]})")
                    continue
                if route.path_format.endswith("/metadata/{server_id}"):
                    assert answer.json() == {"metadata": []}, where   # no deployments
                    continue
                try:
                    assert_not_found(answer, where)
                except AssertionError as exc:
                    failures.append(str(exc))
    assert not failures, f"{len(failures)} of {walked} answers:\n" + "\n".join(failures)
    return walked


def test_another_project_cannot_reach_any_object_by_any_route(
        http: httpx.Client, alice: Objects) -> None:
    before = alice_state(http, alice)
    assert walk_every_route(http, "bob", alice) > 60
    assert alice_state(http, alice) == before


def test_another_projects_objects_are_not_in_its_collections(
        http: httpx.Client, alice: Objects) -> None:
    collections = [r for r in native_routes()
                   if not set(r.param_convertors) - SHARED_PARAMS]
    for route in collections:
        for method in route.methods or ():
            if method in ("HEAD", "OPTIONS"):
                continue
            path = route.path_format.replace("{tenant_id}", "bob")
            if "{" in path:   # a shared catalog entry (resource type, template version)
                continue
            if method == "GET":
                text = http.get(path).text
                assert not [s for s in alice.secrets if s in text], path
            elif route.path_format == "/v1/{tenant_id}/software_deployments":
                body = {"server_id": alice.software["server_id"]}
                answer = http.post(path, json={**body, "config_id": alice.software[
                    "config_id"]})
                absent = http.post(path, json={**body, "config_id": str(uuid.uuid4())})
                assert_not_found(answer, path)
                assert answer.json()["error"]["type"] == absent.json()["error"]["type"]
            else:
                assert route.path_format in OWN_PROJECT_POSTS, (
                    f"{method} {route.path}: a new collection route; say how another "
                    "project's objects could be reached through it")


def test_a_deployment_naming_another_projects_server_leaves_its_metadata(
        http: httpx.Client, alice: Objects) -> None:
    stack = alice.stacks[0]
    url = (f"/v1/alice/stacks/{stack['stack_name']}/{stack['stack_id']}"
           f"/resources/{stack['resource_name']}/metadata")
    before = http.get(url).json()
    config = http.post("/v1/bob/software_configs",
                       json={"name": "bob-config", "group": "script", "config": "rm"})
    deployment = http.post("/v1/bob/software_deployments", json={
        "config_id": config.json()["software_config"]["id"],
        "server_id": alice.software["server_id"]})
    assert deployment.status_code == 200, deployment.text
    assert http.get(url).json() == before


def test_the_all_projects_listing_is_the_one_wider_view(
        kiln_server: KilnProcess, http: httpx.Client, alice: Objects,
        tmp_path: Any) -> None:
    created(http, "bob", "bob-stack", SMALL)
    bob = OpenStackCLI(kiln_server.endpoint("bob"), cwd=tmp_path)
    own = bob.json("stack", "list")
    assert {s["Stack Name"] for s in own} == {"bob-stack"}
    for flag in ("--long", "--all-projects"):
        listed = bob.json("stack", "list", flag)
        projects = {s["Stack Name"]: s["Project"] for s in listed}
        assert projects == {"alice-stack": "alice", "bob-stack": "bob"}, flag
    shown = bob.run("stack", "show", alice.stacks[0]["stack_id"], check=False)
    assert shown.returncode != 0
    assert "Stack not found" in shown.stderr or "could not be found" in shown.stderr


def test_max_stacks_per_tenant_applies_per_project(start_kiln_factory: Any) -> None:
    server = start_kiln_factory(options={"DEFAULT": {"max_stacks_per_tenant": 1}})
    with httpx.Client(base_url=server.url, timeout=60.0) as http:
        created(http, "alice", "first", SMALL)
        refused = http.post("/v1/alice/stacks",
                            json={"stack_name": "second", "template": SMALL})
        assert refused.status_code == 400, refused.text
        assert refused.json()["error"]["type"] == "RequestLimitExceeded"
        assert refused.json()["error"]["message"] == (
            "Request limit exceeded: You have reached the maximum stacks per tenant, 1. "
            "Please delete some stacks.")
        created(http, "bob", "first", SMALL)
        names = [s["stack_name"] for s in http.get("/v1/alice/stacks").json()["stacks"]]
        assert names == ["first"]
