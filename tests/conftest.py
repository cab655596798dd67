"""Fixtures shared by every suite live in tests/support (see tests/support/fixtures.py).

Hypothesis runs under the ``ci`` profile in CI (``CI`` set) and under pytest-xdist (the
test command's workers): there two workers share a loaded machine, so a property that
takes longer than usual is not a failure. The profile turns off the per-example
``deadline`` and the ``too_slow`` health check and keeps everything else (examples,
shrinking, the other health checks). ``HYPOTHESIS_PROFILE`` names another profile.
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

pytest_plugins = ["tests.support.fixtures"]

settings.register_profile("ci", deadline=None, suppress_health_check=[HealthCheck.too_slow],
                          print_blob=True)


def _profile() -> str:
    chosen = os.environ.get("HYPOTHESIS_PROFILE")
    if chosen:
        return chosen
    if os.environ.get("CI") or os.environ.get("PYTEST_XDIST_WORKER"):
        return "ci"
    return "default"


settings.load_profile(_profile())
