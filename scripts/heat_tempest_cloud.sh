#!/usr/bin/env bash
# Heat's own cloud functional tests (heat-tempest-plugin, the modules using Nova, Neutron,
# Glance and Cinder) against Kiln in keystone mode on the test cloud
# (tests/cloud/heat_tempest.py says how). Installs tempest and the plugin, pinned, into
# their own venv (they pin clients Kiln's tests do not want), once.
#
#   bash scripts/heat_tempest_cloud.sh                  # all 40 tests, about 10 minutes
#   bash scripts/heat_tempest_cloud.sh -k ExtraRoute    # arguments go to pytest
#
# Environment: KILN_TEMPEST_VENV (default ~/.cache/kiln-test/tempest-venv), PYTHON (for
# new venvs, default python3), KILN_TEMPEST_KILN_PYTHON (the Python that runs Kiln and
# this harness, default .venv-test's, which scripts/test.sh makes).
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
VENV=${KILN_TEMPEST_VENV:-$HOME/.cache/kiln-test/tempest-venv}
PINS=(tempest==47.0.0 heat-tempest-plugin==3.0.0 pytest)
if [ ! -x "$VENV/bin/python" ] || [ "$(cat "$VENV/.kiln-pins" 2>/dev/null)" != "${PINS[*]}" ]; then
    "$PYTHON" -m venv "$VENV"
    "$VENV/bin/python" -m pip install -q "${PINS[@]}"
    echo "${PINS[*]}" > "$VENV/.kiln-pins"
fi
KILN_PYTHON=${KILN_TEMPEST_KILN_PYTHON:-.venv-test/bin/python}
if [ ! -x "$KILN_PYTHON" ]; then
    echo "scripts/heat_tempest_cloud.sh: run scripts/test.sh once first (it makes .venv-test)" >&2
    exit 2
fi
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
exec "$KILN_PYTHON" -m tests.cloud.heat_tempest --venv "$VENV" "$@"
