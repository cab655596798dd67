"""Comparing Kiln's reduced answers with Heat's, and sorting the differences.

A difference is either *deliberate* (Heat hung, answered 5xx, or leaked a Python error
to the client where Kiln answers cleanly) or a *Kiln bug* (anything else), each with a
short reason naming the first step and field that differ.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from tests.corpus.cases import AREAS
from tests.corpus.wire import sort_cycles

STORE = Path(__file__).parent / "heat27"
DIFFERENCES = Path(__file__).parent / "differences.json"

#: Python's own words reaching a client: Heat let an exception's text through
_LEAK = re.compile(r"Traceback|object has no attribute|NoneType|unhashable|not subscriptable|"
                   r"TypeError|KeyError|AttributeError|IndexError|is not iterable|"
                   r"invalid literal for|object is not callable|takes \d+ positional")

Steps = list[dict[str, Any]]

_ONE_ACTION = ("one action per stack at a time: Kiln answers 409 where convergence Heat "
               "starts the new action over the running one")
_ABANDON = ("Kiln serves abandon and export; Heat 27 refuses them unless the operator sets "
            "enable_stack_abandon")
#: a Kiln bug that shows only sometimes, so it cannot be a strict xfail of its own
LOCK_RACE = ("Kiln bug, intermittent: an action sent as soon as the stack shows "
             "CREATE_COMPLETE is sometimes refused with 409 (the stack's lock outlives "
             "the status)")


def lock_race(heat: Steps, kiln: Steps) -> bool:
    """Kiln refused a step because the create it had just reported done still held the
    stack, where Heat did not."""
    def refused(steps: Steps) -> bool:
        return any(s.get("status") == 409 and "(CREATE) in progress" in str(s.get("message"))
                   for s in steps)
    return refused(kiln) and not refused(heat)


_INSIDE_URL = ("Kiln refuses a template_url at a loopback or private address unless "
               "template_url_allowed_hosts lists it; Heat fetches it")
_UNHASHABLE = ("Heat answers a 400 that names nothing (its lookup cannot hash a list); "
               "Kiln names the place")
_SET_ORDER = ("Heat checks outputs in the order of a Python set of their names (hash "
              "order, which changes from process to process), so of several invalid "
              "outputs it names one at random; Kiln names the first in template order")
#: differences decided by design rather than by the shape of Heat's answer
DELIBERATE = {
    "api/create-template_url_unreachable": _INSIDE_URL,
    "api/preview-template_url_unreachable": _INSIDE_URL,
    "api/validate-template_url_unreachable": _INSIDE_URL,
    "api/state-update-in-progress": _ONE_ACTION,
    "api/state-suspend-in-progress": _ONE_ACTION,
    "api/stack-abandon": _ABANDON,
    "api/unknown-GET-stacks_nope_00000000-0000-0000-0000-000000000000_export": _ABANDON,
    **{f"functions/hot-{version}-get_resource-2": _UNHASHABLE for version in (
        "2013-05-23", "2014-10-16", "2015-04-30", "2015-10-15", "2016-04-08", "2016-10-14",
        "2017-02-24", "2017-09-01", "2018-03-02", "2018-08-31", "2021-04-16")},
    **{f"functions/hot-{version}-results": _SET_ORDER
       for version in ("2014-10-16", "2015-04-30")},
    "hooks/clear-twice": (
        "timing: a resource is named with its physical id once it has one; Kiln has "
        "created the resource by the time the second clear arrives, Heat had not when "
        "recorded (Heat names it the same way once created)"),
    "resources/OS-UpdateWaitConditionHandle-update-same": (
        "The reference Heat has no Keystone: every wait condition handle's physical id is "
        "its fake client's user id (1234), so the replacement Heat makes (its events show "
        "the new handle created and the old one deleted) cannot be seen there; Kiln's "
        "handles have ids of their own, so the replaced handle shows"),
    "resources/OS-WaitConditionHandle-attributes": (
        "The reference Heat has no Keystone: its stack-user token and user id (the "
        "handle's reference) are a fake client's 16- and 4-character strings; Kiln issues "
        "its own signal token and a uuid"),
}


#: a preview's property error as the reference Heat words it (``Property error: <path>: ``)
_PREVIEW_PROPERTY_ERROR = re.compile(r"^Property error: (resources[^\s:]*): ")


def as_over_rpc(case: dict[str, Any], heat: Steps) -> Steps:
    """Heat's answers as a Heat deployed with a real RPC transport gives them. The
    reference Heat runs its API and engine in one process on oslo.messaging's ``fake://``,
    which hands the engine's exception over as it is; over any real transport Heat's API
    rebuilds it from its formatted parts, doubling a preview's property error separators
    (``Property error: : <path>: : ...``, heat-tempest-plugin's
    StackPreviewTest.test_basic_fail), and Kiln answers that way."""
    for step, answer in zip(case.get("steps", []), heat, strict=False):
        message = answer.get("message")
        if step.get("op") == "preview" and answer.get("type") == "StackValidationFailed" \
                and isinstance(message, str):
            answer["message"] = _PREVIEW_PROPERTY_ERROR.sub(
                r"Property error: : \1: : ", message, count=1)
    return heat


def load_recorded() -> dict[str, dict[str, Any]]:
    """Every recorded case as ``area/name`` -> {"case", "heat"}."""
    out: dict[str, dict[str, Any]] = {}
    for area in AREAS:
        path = STORE / f"{area}.jsonl"
        if not path.exists():
            continue
        for line in path.read_text().splitlines():
            if line.strip():
                entry = json.loads(line)
                # sorted: stored before it was done
                entry["heat"] = as_over_rpc(entry["case"], sort_cycles(entry["heat"]))
                out[f"{area}/{entry['name']}"] = entry
    return out


def load_differences() -> dict[str, dict[str, str]]:
    if not DIFFERENCES.exists():
        return {}
    data: dict[str, dict[str, str]] = json.loads(DIFFERENCES.read_text())
    return data


#: Python exception classes Heat lets through as the fault's type, usually with no message
_PYTHON_TYPES = {"ValueError", "TypeError", "KeyError", "AttributeError", "IndexError"}
#: the reference Heat runs without Keystone, so what needs it fails there (not a Heat rule)
_NO_KEYSTONE = "No valid authentication is available"


def heat_misbehaved(heat: Steps) -> str | None:
    """Why Heat's answer is not one to copy, or None."""
    for step in heat:
        if "failure" in step:
            return f"Heat gave no usable answer ({step['failure']})"
        if step.get("status", 0) >= 500:
            return f"Heat answered {step['status']}"
        text = json.dumps(step)
        if _NO_KEYSTONE in text:
            return "the reference Heat has no Keystone to reach itself"
        if step.get("type") in _PYTHON_TYPES or _LEAK.search(text):
            return "Heat leaked a Python error"
        if '\\"%s\\"' in text or "%(" in text or " {} " in text:
            return "Heat's message is an unformatted template"
    return None


def clean(kiln: Steps) -> bool:
    """Kiln answered every step, without a 5xx, and every error has a message that is
    not Python's (the fault's type may repeat the class Heat names)."""
    for step in kiln:
        if "failure" in step or step.get("status", 0) >= 500:
            return False
        if step.get("status", 0) >= 400 and not step.get("message"):
            return False
        if _LEAK.search(json.dumps({k: v for k, v in step.items() if k != "type"})):
            return False
    return True


def explain(heat: Steps, kiln: Steps) -> str:
    """The first difference, in a few words."""
    for i, (h, k) in enumerate(zip(heat, kiln, strict=False)):
        if h == k:
            continue
        where = f"step {i + 1}"
        for field in ("failure", "status", "type", "message", "stack_status", "reason",
                      "outputs", "resources", "changes", "replaced", "result", "seen",
                      "text", "body"):
            if h.get(field) != k.get(field):
                return (f"{where} {field}: Heat {_short(h.get(field))} / "
                        f"Kiln {_short(k.get(field))}")
    return f"{len(heat)} steps in Heat, {len(kiln)} in Kiln"


def category(reason: str) -> str:
    """The reason without the values: what docs/heat-compatibility.md counts."""
    return reason.split(":", 1)[0].split(" ", 2)[-1]


def _short(value: Any) -> str:
    text = json.dumps(value, sort_keys=True)
    return text if len(text) <= 160 else text[:157] + "..."
