"""``/dashboard/session``: how the dashboard logs in (``GET``: which login it shows;
``POST``: a Keystone login or a re-scope to another project, see kiln.auth.login).

Only with the dashboard on; outside ``/v1`` so no token is needed to ask for one.
"""

from __future__ import annotations

import json
from typing import Any

from oslo_config import cfg
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from kiln import dashboard
from kiln.api.auth_budget import FailedAuthBudget
from kiln.api.body import CLOSE, read_bounded, require_json_type
from kiln.api.faults import HTTPError, bad_request, too_many_requests
from kiln.auth.cache import need_remote
from kiln.auth.errors import IdentityUnavailable, InvalidToken, Throttled
from kiln.auth.login import LoginRefused, login, login_kind
from kiln.auth.middleware import UNAVAILABLE_MESSAGE, retry_after
from kiln.errors import HTTPNotFound

#: a login body is a handful of short fields
MAX_BODY = 16 * 1024


def _too_large(size: int) -> HTTPError:
    return HTTPError(413, f"The login body ({size} bytes) is larger than {MAX_BODY} bytes.",
                     headers=CLOSE)


def session_endpoint(conf: cfg.ConfigOpts) -> Any:
    on = dashboard.enabled(conf)

    async def endpoint(request: Request) -> Response:
        if not on:
            raise HTTPNotFound("The resource could not be found.")
        kind = login_kind(conf)
        if request.method == "GET":
            return JSONResponse({"auth": kind}, headers={"Cache-Control": "no-store"})
        if kind != "keystone":
            raise bad_request("This Kiln has no authentication configured: no login needed.")
        require_json_type(request)
        raw = await read_bounded(request, MAX_BODY, _too_large)
        try:
            body = json.loads(raw or b"{}")
        except (ValueError, RecursionError):
            raise bad_request("The login body is not JSON.") from None
        if not isinstance(body, dict):
            raise bad_request("The login body must be a JSON object.")
        async def attempt() -> Any:
            need_remote()  # a login asks Keystone: never for an address over its budget
            return await login(conf, body)

        # a wrong password spends the address's failure budget (kiln.api.auth_budget)
        budget = FailedAuthBudget(request.app.state.agent_limits.failed_auth)
        try:
            reply = await budget.guard(request.scope, attempt,
                                       lambda exc: isinstance(exc, InvalidToken))
        except Throttled as exc:
            raise too_many_requests(exc.message, exc.retry_after) from None
        except LoginRefused as exc:
            raise bad_request(str(exc)) from None
        except InvalidToken:
            raise HTTPError(401, "The user name, password or project is wrong, or the "
                            "user has no role on that project.") from None
        except IdentityUnavailable:
            raise HTTPError(503, UNAVAILABLE_MESSAGE, headers=retry_after()) from None
        return JSONResponse(reply, headers={"Cache-Control": "no-store"})

    return endpoint
