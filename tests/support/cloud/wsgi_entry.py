"""Serve an OpenStack WSGI application under gunicorn (runs in the cloud's venv).

The services' WSGI modules parse ``sys.argv`` with oslo.config at import; under gunicorn
that is gunicorn's own command line, which they reject. This module swaps in the
arguments the service should see (``KILN_CLOUD_WSGI_ARGV``) before importing the
application named by ``KILN_CLOUD_WSGI_APP`` (``package.module:attribute``).
"""

import importlib
import os
import shlex
import sys

sys.argv = [os.environ.get("KILN_CLOUD_WSGI_NAME", "wsgi"),
            *shlex.split(os.environ.get("KILN_CLOUD_WSGI_ARGV", ""))]
_module, _, _attribute = os.environ["KILN_CLOUD_WSGI_APP"].partition(":")
application = getattr(importlib.import_module(_module), _attribute or "application")
