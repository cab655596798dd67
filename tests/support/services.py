"""Whether an external service may be skipped when it is down.

Locally a missing PostgreSQL or MariaDB skips the tests that need it, with the reason.
CI sets ``KILN_REQUIRE_SERVICES=1`` (``.ci/run``): there a missing service is a failure,
so a broken CI machine cannot turn into a green run that tested nothing.
"""

from __future__ import annotations

import os

import pytest


def services_required() -> bool:
    return os.environ.get("KILN_REQUIRE_SERVICES", "") not in ("", "0", "false", "no")


def unavailable(reason: str) -> None:
    """Skip (locally) or fail (CI) because a service the test needs is not there."""
    if services_required():
        pytest.fail(f"{reason} (KILN_REQUIRE_SERVICES=1: required services may not be skipped)",
                    pytrace=False)
    pytest.skip(reason)
