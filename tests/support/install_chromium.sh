#!/usr/bin/env bash
# Installs Debian's chromium (the browser the dashboard tests drive through Playwright's
# Python API; Playwright's own browser download is never used). Called by
# tests/support/browser.py when /usr/bin/chromium is missing; needs root (CI runs as root)
# and apt sources. Waits for another apt run to finish instead of failing on its lock.
set -euo pipefail
if [ -x /usr/bin/chromium ]; then
    exit 0
fi
if [ "$(id -u)" != 0 ]; then
    echo "install_chromium.sh: root is needed to apt-get install chromium" >&2
    exit 3
fi
# one installer at a time (xdist workers, scripts/test.sh's early start)
exec 9>/tmp/kiln-install-chromium.lock
flock 9
if [ -x /usr/bin/chromium ]; then
    exit 0
fi
export DEBIAN_FRONTEND=noninteractive
apt_get() { apt-get -o DPkg::Lock::Timeout=600 -q "$@"; }
apt_get install -y --no-install-recommends chromium fonts-dejavu-core \
    || { apt_get update && apt_get install -y --no-install-recommends chromium fonts-dejavu-core; }
test -x /usr/bin/chromium
