"""``python -m tests.support.cloud start|stop|status|env``: the test cloud by hand.

``start`` installs, prepares and starts it (or finds it running) and prints where it is;
``stop`` stops what a start left running; ``env`` prints ``OS_*`` lines for a shell.
"""

from __future__ import annotations

import sys
import time

from tests.support.cloud import CloudLayout, CloudSetupError, is_up, start, stop


def main(argv: list[str]) -> int:
    command = argv[0] if argv else "status"
    layout = CloudLayout()
    if command == "start":
        t0 = time.monotonic()
        try:
            cloud, started = start(layout)
        except CloudSetupError as exc:
            print(f"cloud: {exc}", file=sys.stderr)
            return 1
        verb = "started" if started else "already running"
        print(f"cloud {verb} in {time.monotonic() - t0:.1f} s: {cloud.auth_url} "
              f"(state {layout.state})")
        return 0
    if command == "stop":
        stop(layout)
        print("cloud stopped")
        return 0
    if command == "status":
        up = is_up(layout)
        print(f"cloud {'up' if up else 'down'}: {layout.auth_url} (state {layout.state})")
        return 0 if up else 3
    if command == "env":
        auth = {"OS_AUTH_URL": layout.auth_url, "OS_USERNAME": "admin",
                "OS_PASSWORD": layout.admin_password, "OS_PROJECT_NAME": "admin",
                "OS_USER_DOMAIN_NAME": "Default", "OS_PROJECT_DOMAIN_NAME": "Default",
                "OS_REGION_NAME": layout.region, "OS_IDENTITY_API_VERSION": "3"}
        for key, value in auth.items():
            print(f"export {key}={value}")
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
