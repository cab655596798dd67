"""The Orchestration API v1 calls the stack commands make, over httpx.

One class, one method per call, returning the decoded JSON. Any non-2xx answer becomes
:class:`APIError` carrying Heat's own message (from the ``error.message`` of its error
body), because that message is what names the problem for the user ("The Stack (s1) could
not be found.", "Property error: resources.r.properties.length: ..."); a connection failure
becomes :class:`APIError` too, naming the endpoint. Nothing here prints.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any
from urllib.parse import quote

import httpx

JSON = dict[str, Any]

#: Seconds a single HTTP call may take (a create or update returns when accepted).
REQUEST_TIMEOUT = 60.0


class APIError(Exception):
    """A request the endpoint refused or could not answer."""

    def __init__(self, message: str, status: int | None = None,
                 error_type: str | None = None, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.status = status
        self.error_type = error_type
        #: Kiln's suggestion beside Heat's message (``error.hint``: did you mean ...?)
        self.hint = hint
        #: every error and the warnings, of a ``/validate?all_errors=true`` (Kiln only)
        self.errors: list[dict[str, Any]] = []
        self.warnings: list[str] = []


class NotFound(APIError):
    """404: the stack (or the resource asked for) does not exist."""


def _error_from(response: httpx.Response) -> APIError:
    message = response.text.strip() or response.reason_phrase
    error_type: str | None = None
    hint: str | None = None
    try:
        body = response.json()
    except ValueError:
        body = None
    if isinstance(body, dict):
        error = body.get("error")
        if isinstance(error, dict):
            message = str(error.get("message") or body.get("explanation") or message)
            error_type = error.get("type")
            hint = str(error["hint"]) if error.get("hint") else None
        elif body.get("explanation"):
            message = str(body["explanation"])
    cls = NotFound if response.status_code == 404 else APIError
    found = cls(message, response.status_code, error_type, hint)
    error = body.get("error") if isinstance(body, dict) else None
    if isinstance(error, dict):
        found.errors = [e for e in error.get("errors") or () if isinstance(e, dict)]
        found.warnings = [str(w) for w in error.get("warnings") or ()]
    return found


class HeatAPI:
    """The calls on one project's endpoint (``<base>/v1/<project>``).

    ``auth_headers`` is called before every request, so a keystoneauth session can renew
    an expiring token during a long ``--wait``.
    """

    def __init__(self, endpoint: str, auth_headers: Callable[[], Mapping[str, str]],
                 *, verify: bool | str = True,
                 transport: httpx.BaseTransport | None = None) -> None:
        self.endpoint = endpoint.rstrip("/")
        self.verify = verify
        self._auth_headers = auth_headers
        self._http = httpx.Client(timeout=REQUEST_TIMEOUT, verify=verify,
                                  transport=transport, follow_redirects=True)

    def close(self) -> None:
        self._http.close()

    def auth_headers(self) -> dict[str, str]:
        """The authentication headers a request sent now would carry."""
        return dict(self._auth_headers())

    def request(self, method: str, path: str, *, json: Any = None,
                params: Mapping[str, Any] | None = None) -> Any:
        headers = {"Accept": "application/json", **self.auth_headers()}
        try:
            response = self._http.request(method, self.endpoint + path, json=json,
                                          params=params, headers=headers)
        except httpx.HTTPError as exc:
            raise APIError(f"cannot reach {self.endpoint}: {exc}") from exc
        if response.status_code >= 400:
            raise _error_from(response)
        if not response.content:
            return None
        try:
            return response.json()
        except ValueError as exc:
            raise APIError(f"{method} {path}: the endpoint answered {response.status_code} "
                           "with a body that is not JSON") from exc

    # -- stacks -------------------------------------------------------------------------

    def list_stacks(self, params: Mapping[str, Any] | None = None) -> list[JSON]:
        stacks: list[JSON] = self.request("GET", "/stacks", params=params)["stacks"]
        return stacks

    def get_stack(self, name_or_id: str) -> JSON:
        """The stack's full record; a name is resolved by the server's redirect."""
        stack: JSON = self.request("GET", f"/stacks/{quote(name_or_id, safe='')}")["stack"]
        return stack

    def create_stack(self, body: Mapping[str, Any]) -> JSON:
        created: JSON = self.request("POST", "/stacks", json=body)["stack"]
        return created

    def update_stack(self, ref: str, body: Mapping[str, Any], *, patch: bool) -> None:
        self.request("PATCH" if patch else "PUT", f"/stacks/{ref}", json=body)

    def preview_update(self, ref: str, body: Mapping[str, Any], *, patch: bool) -> JSON:
        changes: JSON = self.request("PATCH" if patch else "PUT", f"/stacks/{ref}/preview",
                                     json=body)["resource_changes"]
        return changes

    def delete_stack(self, ref: str) -> None:
        self.request("DELETE", f"/stacks/{ref}")

    def template(self, ref: str) -> JSON:
        template: JSON = self.request("GET", f"/stacks/{ref}/template")
        return template

    def outputs(self, ref: str) -> list[JSON]:
        outputs: list[JSON] = self.request("GET", f"/stacks/{ref}/outputs")["outputs"]
        return outputs

    def output(self, ref: str, key: str) -> JSON:
        output: JSON = self.request(
            "GET", f"/stacks/{ref}/outputs/{quote(key, safe='')}")["output"]
        return output

    def resources(self, ref: str) -> list[JSON]:
        resources: list[JSON] = self.request("GET", f"/stacks/{ref}/resources")["resources"]
        return resources

    def events(self, ref: str, params: Mapping[str, Any] | None = None) -> list[JSON]:
        events: list[JSON] = self.request("GET", f"/stacks/{ref}/events",
                                          params=params)["events"]
        return events

    def resource(self, ref: str, name: str) -> JSON:
        resource: JSON = self.request(
            "GET", f"/stacks/{ref}/resources/{quote(name, safe='')}")["resource"]
        return resource

    def signal(self, ref: str, name: str, data: Any) -> Any:
        return self.request("POST", f"/stacks/{ref}/resources/{quote(name, safe='')}/signal",
                            json=data)

    def mark_unhealthy(self, ref: str, name: str, unhealthy: bool, reason: str) -> None:
        self.request("PATCH", f"/stacks/{ref}/resources/{quote(name, safe='')}",
                     json={"mark_unhealthy": unhealthy, "resource_status_reason": reason})

    def action(self, ref: str, name: str) -> None:
        """One of ``suspend``, ``resume``, ``check``, ``cancel_update``,
        ``cancel_without_rollback``: accepted (202), then run by the engine."""
        self.request("POST", f"/stacks/{ref}/actions", json={name: None})

    def abandon(self, ref: str) -> JSON:
        data: JSON = self.request("DELETE", f"/stacks/{ref}/abandon")
        return data

    def snapshots(self, ref: str) -> list[JSON]:
        snapshots: list[JSON] = self.request("GET", f"/stacks/{ref}/snapshots")["snapshots"]
        return snapshots

    def create_snapshot(self, ref: str, name: str | None) -> JSON:
        made: JSON = self.request("POST", f"/stacks/{ref}/snapshots",
                                  json={"name": name} if name is not None else {})
        return made

    def snapshot(self, ref: str, snapshot_id: str) -> JSON:
        snapshot: JSON = self.request(
            "GET", f"/stacks/{ref}/snapshots/{quote(snapshot_id, safe='')}")["snapshot"]
        return snapshot

    def delete_snapshot(self, ref: str, snapshot_id: str) -> None:
        self.request("DELETE", f"/stacks/{ref}/snapshots/{quote(snapshot_id, safe='')}")

    def restore_snapshot(self, ref: str, snapshot_id: str) -> None:
        self.request("POST",
                     f"/stacks/{ref}/snapshots/{quote(snapshot_id, safe='')}/restore")

    def validate(self, body: Mapping[str, Any]) -> JSON:
        result: JSON = self.request("POST", "/validate", json=body)
        return result


def stack_ref(stack: Mapping[str, Any]) -> str:
    """``<name>/<id>``: the path segment that names one stack without a redirect."""
    return f"{quote(str(stack['stack_name']), safe='')}/{stack['id']}"
