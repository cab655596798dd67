"""The Hypothesis profile the test command runs under (tests/conftest.py)."""

from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, settings


@pytest.mark.skipif(not (os.environ.get("CI") or os.environ.get("PYTEST_XDIST_WORKER"))
                    or bool(os.environ.get("HYPOTHESIS_PROFILE")),
                    reason="the ci profile is chosen only in CI or under pytest-xdist")
def test_ci_and_xdist_runs_have_no_deadline_and_tolerate_slow_data() -> None:
    current = settings.default
    assert current.deadline is None
    assert HealthCheck.too_slow in current.suppress_health_check
    assert current.max_examples == settings.get_profile("default").max_examples
    # a test's own @settings inherits what it does not name from the profile
    own = settings(max_examples=5)
    assert own.deadline is None and HealthCheck.too_slow in own.suppress_health_check
