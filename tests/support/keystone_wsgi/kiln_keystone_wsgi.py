"""WSGI entry point gunicorn loads to serve the real Keystone (tests/support/keystone.py).

Keystone's configure() hands ``sys.argv`` to oslo.config; under gunicorn that is
gunicorn's own command line, which oslo.config rejects and every worker exits with
status 2. Emptying the argument list first lets Keystone read only its config files
(``OS_KEYSTONE_CONFIG_DIR`` / ``OS_KEYSTONE_CONFIG_FILES``, set by the starter).
"""

import sys

sys.argv = sys.argv[:1]

from keystone.wsgi.api import application  # type: ignore[import-not-found]  # noqa: E402

__all__ = ["application"]
