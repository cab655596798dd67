"""WSGI entry point gunicorn loads to serve the real Keystone (tests/support/keystone.py).

Keystone's configure() hands ``sys.argv`` to oslo.config; under gunicorn that is
gunicorn's own command line, which oslo.config rejects and every worker exits with
status 2. Emptying the argument list first lets Keystone read only its config files
(``OS_KEYSTONE_CONFIG_DIR`` / ``OS_KEYSTONE_CONFIG_FILES``, set by the starter).

The test Keystone keeps its data in SQLite and serves requests on several threads of
one process. Keystone updates and deletes a row by reading it first in the same
transaction; two such transactions at once cannot both upgrade to a write lock on
SQLite, and one fails at once with "database is locked" (a 500), which never happens on
the MySQL or PostgreSQL a real Keystone runs on. So the changing requests (PATCH, PUT,
DELETE; POST except logins, which change nothing) run one at a time here; reads and
logins stay concurrent.
"""

import sys
import threading
from collections.abc import Callable, Iterable
from typing import Any

sys.argv = sys.argv[:1]

from keystone.wsgi.api import application as keystone_application  # type: ignore[import-not-found]  # noqa: E402

_WRITES = threading.Lock()
#: POSTs that only read: logins and EC2 signature checks
_READING_POSTS = ("/v3/auth/tokens", "/v3/ec2tokens", "/v3/s3tokens")


def application(environ: dict[str, Any],
                start_response: Callable[..., Any]) -> Iterable[bytes]:
    method = environ.get("REQUEST_METHOD", "GET")
    path = str(environ.get("PATH_INFO", "")).rstrip("/")
    if method in ("GET", "HEAD", "OPTIONS") or (method == "POST"
                                                and path in _READING_POSTS):
        return keystone_application(environ, start_response)  # type: ignore[no-any-return]
    with _WRITES:
        # the whole body is produced inside the lock (Keystone's responses are small)
        return list(keystone_application(environ, start_response))


__all__ = ["application"]
