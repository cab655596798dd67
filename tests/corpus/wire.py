"""Run one corpus case against an orchestration endpoint and reduce the answers to what
must match between Heat and Kiln.

The same code drives the real Heat when recording (tests/corpus/record.py) and a real
``kiln serve`` when comparing (tests/functional/test_corpus.py), so both sides are reduced
by exactly the same normalisation: ids, times, URLs and random values are replaced by
placeholders, and only the fields a client relies on are kept (status code, error type and
message, stack and resource states and reasons, outputs, update-preview lists).

A case is ``{"area": str, "steps": [step, ...]}``; each step is a dict with ``op``:

- ``validate`` / ``preview`` / ``create``: POST the ``body`` to /validate,
  /stacks/preview or /stacks (``create`` then polls the stack until it settles; the
  stack becomes the case's current stack; ``create_nowait`` does not poll);
- ``update`` / ``patch``: PUT / PATCH the current stack with ``body`` and poll it;
- ``update_preview``: PUT the current stack's /preview with ``body``;
- ``request``: ``method`` and ``path`` (``{stack}`` is the current stack's
  ``name/id``, ``{stack_id}`` its id), optional ``body`` (``raw`` sends text as is);
- ``wait_event``: poll the current stack's events until one's reason contains ``text``;
- ``settle``: poll the current stack until it is no longer IN_PROGRESS.

Each step records a dict; the case's result is the list of them. The current stack is
deleted at the end (not recorded).
"""

from __future__ import annotations

import contextlib
import json
import re
import time
from collections.abc import Callable
from typing import Any

import httpx

SETTLE_DEADLINE = 60.0

_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
_TIME = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)?")
#: the random part of a physical name (<stack>-<resource>-<12 random characters>, nested
#: names repeat the pattern); only replaced in strings naming one of the corpus's stacks
_RANDOM = re.compile(r"-[a-z0-9]{12}(?![a-z0-9])")
_RANDOM_NAME = re.compile(r"^[a-z0-9]{12}$")
_URL = re.compile(r"https?://[^/\s\"']+(:\d+)?/v1/[^/\s\"']+")


_CYCLE = "Circular Dependency Found: {"
_AMBIGUOUS = re.compile(r"Ambiguous versions \(([^)]*)\)")


def cycle_sorted(text: str) -> str:
    """A cycle message with its entries in one order: Heat lists the unorderable
    resources in its graph's set order, which changes from process to process (and so
    the version keys of an ambiguous template)."""
    text = _AMBIGUOUS.sub(
        lambda m: f"Ambiguous versions ({', '.join(sorted(m.group(1).split(', ')))})", text)
    start = text.find(_CYCLE)
    if start < 0:
        return text
    body_start = start + len(_CYCLE)
    depth, entries, begin = 1, [], body_start
    for i in range(body_start, len(text)):
        char = text[i]
        if char == "{":
            depth += 1
        elif char == "}":
            depth -= 1
            if depth == 0:
                entries.append(text[begin:i])
                entries = [_needs_sorted(e) for e in entries]
                return text[:body_start] + ", ".join(sorted(entries)) + text[i:]
        elif char == "," and depth == 1 and text.startswith(", ", i):
            entries.append(text[begin:i])
            begin = i + 2
    return text


def _needs_sorted(entry: str) -> str:
    """One ``node: {requirement, ...}`` entry with its requirements sorted."""
    node, sep, needs = entry.partition(": {")
    if not sep or not needs.endswith("}"):
        return entry
    return f"{node}: {{{', '.join(sorted(needs[:-1].split(', ')))}}}"


def sort_cycles(value: Any) -> Any:
    """:func:`cycle_sorted` over every string of a reduced answer."""
    if isinstance(value, str):
        return cycle_sorted(value)
    if isinstance(value, list):
        return [sort_cycles(v) for v in value]
    if isinstance(value, dict):
        return {k: sort_cycles(v) for k, v in value.items()}
    return value


def norm(value: Any) -> Any:
    """Replace what differs between runs and servers with placeholders."""
    if isinstance(value, str):
        value = cycle_sorted(value)
        value = _URL.sub("<url>", value)
        value = _UUID.sub("<uuid>", value)
        if "c-" in value:
            value = _RANDOM.sub("-<random>", value)
        return _TIME.sub("<time>", value)
    if isinstance(value, list):
        return [norm(v) for v in value]
    if isinstance(value, dict):
        return {k: norm(v) for k, v in value.items()}
    return value


def shape(value: Any) -> Any:
    """A value's type and size, for values that are random by design (a URL's length
    depends on the server's address, so a URL is only said to be one)."""
    if isinstance(value, str) and "://" in value:
        return "<str:url>"
    if isinstance(value, str):
        return f"<str:{len(value)}>"
    if isinstance(value, list):
        return [shape(v) for v in value]
    if isinstance(value, dict):
        return {k: shape(v) for k, v in value.items()}
    return value


def _fault(response: httpx.Response) -> dict[str, Any]:
    """Status, and for an error, the error body's type and message."""
    out: dict[str, Any] = {"status": response.status_code}
    if response.status_code >= 400:
        try:
            body = response.json()
        except ValueError:
            out["text"] = norm(response.text[:300])
            return out
        error = body.get("error") if isinstance(body, dict) else None
        if isinstance(error, dict):
            out["type"] = error.get("type")
            out["message"] = norm(error.get("message"))
        else:
            out["body"] = norm(body)
    return out


class Runner:
    """Runs cases against one endpoint (``http://host:port/v1/<project>``)."""

    def __init__(self, endpoint: str, client: httpx.Client) -> None:
        self.endpoint = endpoint.rstrip("/")
        self.client = client

    def run(self, name: str, case: dict[str, Any]) -> list[dict[str, Any]]:
        state: dict[str, Any] = {"name": stack_name(name)}
        results: list[dict[str, Any]] = []
        try:
            for step in case["steps"]:
                results.append(self._step(step, state, case))
                if results[-1].get("stop"):
                    break
        except (httpx.HTTPError, TimeoutError, ValueError, KeyError) as exc:
            # an answer the runner cannot read is itself the observation
            results.append({"failure": type(exc).__name__})
        finally:
            if "id" in state:
                with contextlib.suppress(httpx.TransportError):
                    self.client.delete(f"{self.endpoint}/stacks/{state['name']}/{state['id']}")
        return results

    # -- steps -------------------------------------------------------------------------

    def _body(self, step: dict[str, Any], state: dict[str, Any]) -> Any:
        body = step.get("body")
        if isinstance(body, dict) and "stack_name" in body and body["stack_name"] == "{name}":
            body = {**body, "stack_name": state["name"]}
        return body

    def _send(self, method: str, path: str, body: Any, raw: bool = False) -> httpx.Response:
        url = self.endpoint + path
        if raw:
            return self.client.request(method, url, content=body,
                                       headers={"content-type": "application/json"})
        if body is None:
            return self.client.request(method, url)
        return self.client.request(method, url, json=body)

    def _step(self, step: dict[str, Any], state: dict[str, Any],
              case: dict[str, Any]) -> dict[str, Any]:
        op = step["op"]
        here = f"{state['name']}/{state.get('id', 'none')}"
        if op in ("validate", "preview"):
            path = "/validate" if op == "validate" else "/stacks/preview"
            response = self._send("POST", path, self._body(step, state))
            out = _fault(response)
            if response.status_code == 200:
                out["result"] = (norm(response.json()) if op == "validate"
                                 else _preview(response.json(), step))
            return out
        if op in ("create", "create_nowait"):
            response = self._send("POST", "/stacks", self._body(step, state))
            out = _fault(response)
            if response.status_code == 201:
                state["id"] = response.json()["stack"]["id"]
                if op == "create":
                    out.update(self._settled(state, step))
            else:
                out["stop"] = True
            return out
        if op in ("update", "patch"):
            before = self._physical(state)
            method = "PUT" if op == "update" else "PATCH"
            response = self._send(method, f"/stacks/{here}", self._body(step, state))
            out = _fault(response)
            if response.status_code == 202:
                self._wait_changed(state)
                out.update(self._settled(state, step))
                after = self._physical(state)
                out["replaced"] = sorted(n for n in after if n in before
                                         and after[n] != before[n])
            return out
        if op == "update_preview":
            response = self._send("PUT", f"/stacks/{here}/preview", self._body(step, state))
            out = _fault(response)
            if response.status_code == 200:
                changes = response.json().get("resource_changes", {})
                out["changes"] = {k: sorted(r["resource_name"] for r in v)
                                  for k, v in changes.items()}
            return out
        if op == "request":
            path = step["path"].replace("{stack}", here).replace(
                "{stack_id}", str(state.get("id", "none")))
            response = self._send(step["method"], path, self._body(step, state),
                                  step.get("raw", False))
            out = _fault(response)
            if response.status_code == 201 and "id" not in state and path == "/stacks":
                state["id"] = response.json()["stack"]["id"]  # so that it is deleted
            keep = step.get("keep")
            if keep and response.status_code < 300 and response.content:
                out["result"] = norm(_pick(response.json(), keep))
            return out
        if op == "wait_event":
            return {"seen": self._wait_event(state, step["text"])}
        if op == "settle":
            return self._settled(state, step)
        raise ValueError(f"unknown op {op!r}")

    # -- observation -------------------------------------------------------------------

    def _get_stack(self, state: dict[str, Any]) -> dict[str, Any]:
        response = self.client.get(f"{self.endpoint}/stacks/{state['name']}/{state['id']}")
        response.raise_for_status()
        stack: dict[str, Any] = response.json()["stack"]
        return stack

    def _poll(self, fetch: Callable[[], Any], done: Callable[[Any], bool]) -> Any:
        end = time.monotonic() + SETTLE_DEADLINE
        delay = 0.05
        while True:
            value = fetch()
            if done(value):
                return value
            if time.monotonic() > end:
                raise TimeoutError("not settled")
            time.sleep(delay)  # polling a remote state, bounded by the deadline
            delay = min(delay * 1.5, 0.5)

    def _wait_changed(self, state: dict[str, Any]) -> None:
        """An update is accepted with 202 before the stack shows UPDATE: wait for it."""
        self._poll(lambda: self._get_stack(state),
                   lambda s: not s["stack_status"].startswith("CREATE_"))

    def _settled(self, state: dict[str, Any], step: dict[str, Any]) -> dict[str, Any]:
        stack = self._poll(lambda: self._get_stack(state),
                           lambda s: not s["stack_status"].endswith("IN_PROGRESS"))
        out: dict[str, Any] = {"stack_status": stack["stack_status"],
                               "reason": norm(stack["stack_status_reason"])}
        random = step.get("random_outputs", False)
        outputs = {}
        for item in stack.get("outputs") or []:
            value = item.get("output_value")
            entry = {"value": shape(value) if random else norm(value)}
            if "output_error" in item:
                entry["error"] = norm(item["output_error"])
            outputs[item["output_key"]] = entry
        out["outputs"] = outputs
        if step.get("resources", True):
            out["resources"] = self._resources(state, step.get("nested_depth", 0))
        return out

    def _resources(self, state: dict[str, Any], depth: int) -> dict[str, Any]:
        url = f"{self.endpoint}/stacks/{state['name']}/{state['id']}/resources"
        response = self.client.get(url, params={"nested_depth": depth} if depth else None)
        response.raise_for_status()
        found: dict[str, Any] = {}
        for r in response.json()["resources"]:
            key = r["resource_name"]
            if _RANDOM_NAME.match(key):  # a scaling group's member
                key = "<random>" + "'" * sum(k.endswith("<random>") for k in found)
            if depth and r.get("parent_resource"):
                key = f"{r['parent_resource']}/{key}"
            found[key] = [r["resource_type"], r["resource_status"],
                          norm(r["resource_status_reason"])]
        return dict(sorted(found.items()))

    def _physical(self, state: dict[str, Any]) -> dict[str, str]:
        url = f"{self.endpoint}/stacks/{state['name']}/{state['id']}/resources"
        response = self.client.get(url)
        if response.status_code != 200:
            return {}
        return {r["resource_name"]: r["physical_resource_id"]
                for r in response.json()["resources"]}

    def _wait_event(self, state: dict[str, Any], text: str) -> bool:
        url = f"{self.endpoint}/stacks/{state['name']}/{state['id']}/events"

        def reasons() -> list[str]:
            response = self.client.get(url)
            return [e.get("resource_status_reason") or "" for e in response.json()["events"]]
        try:
            self._poll(reasons, lambda rs: any(text in r for r in rs))
        except TimeoutError:
            return False
        return True


def _preview(body: dict[str, Any], step: dict[str, Any]) -> dict[str, Any]:
    """A preview's resources: name -> [type, properties]."""
    stack = body.get("stack", {})

    def walk(items: list[Any], into: dict[str, Any]) -> None:
        for r in items:
            if isinstance(r, list):  # nested stacks preview as lists
                walk(r, into)
                continue
            props = r.get("properties", {})
            into[r["resource_name"]] = [r["resource_type"],
                                        shape(props) if step.get("random") else norm(props)]
    found: dict[str, Any] = {}
    walk(stack.get("resources", []), found)
    return {"resources": dict(sorted(found.items())),
            "outputs": sorted(o["output_key"] for o in stack.get("outputs") or [])}


def _pick(body: Any, keep: list[str]) -> Any:
    """Keep only the named top-level keys (or keys of the single wrapped object)."""
    if isinstance(body, dict) and len(body) == 1:
        (key, inner), = body.items()
        if isinstance(inner, dict):
            return {key: {k: inner.get(k) for k in keep}}
        if isinstance(inner, list) and keep == ["len"]:
            return {key: len(inner)}
    if isinstance(body, dict):
        return {k: body.get(k) for k in keep}
    return body


def stack_name(case_name: str) -> str:
    """A valid, stable stack name for a case (Heat: letters first, [a-zA-Z0-9_.-])."""
    cleaned = re.sub(r"[^A-Za-z0-9_.-]", "-", case_name)
    return ("c-" + cleaned)[:200]


def dumps(value: Any) -> str:
    return json.dumps(value, sort_keys=True)
