#!/usr/bin/env bash
# Installs Debian's browsers for the dashboard tests: chromium (driven through Playwright's
# Python API; Playwright's own browser download is never used) and firefox-esr (driven
# over WebDriver BiDi, which Firefox serves itself: tests/support/firefox.py).
#   install_browsers.sh              both
#   install_browsers.sh chromium     one (the package name)
# Called by tests/support/browser.py and firefox.py when a browser is missing, and early by
# scripts/test.sh; needs root (CI runs as root) and apt sources. Waits for another apt run
# to finish instead of failing on its lock.
set -euo pipefail
declare -A binary=([chromium]=/usr/bin/chromium [firefox-esr]=/usr/bin/firefox-esr)
wanted=("${@:-chromium}")
if [ $# -eq 0 ]; then wanted=(chromium firefox-esr); fi
missing() {
    local p
    for p in "${wanted[@]}"; do [ -x "${binary[$p]}" ] || echo "$p"; done
}
if [ -z "$(missing)" ]; then
    exit 0
fi
if [ "$(id -u)" != 0 ]; then
    echo "install_browsers.sh: root is needed to apt-get install $(missing | xargs)" >&2
    exit 3
fi
# one installer at a time (xdist workers, scripts/test.sh's early start)
exec 9>/tmp/kiln-install-browsers.lock
flock 9
packages=$(missing | xargs)
if [ -z "$packages" ]; then
    exit 0
fi
export DEBIAN_FRONTEND=noninteractive
apt_get() { apt-get -o DPkg::Lock::Timeout=600 -q "$@"; }
# shellcheck disable=SC2086
apt_get install -y --no-install-recommends $packages fonts-dejavu-core \
    || { apt_get update && apt_get install -y --no-install-recommends $packages fonts-dejavu-core; }
test -z "$(missing)"
